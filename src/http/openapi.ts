/**
 * The OpenAPI 3.1 document of the agent API, generated from the same zod
 * schemas the relay parses requests with and builds replies by (one source),
 * served at GET /openapi.json and kept in the repository as openapi.json
 * (`npm run openapi`; a test fails when the two differ). Users writing agents
 * in Python or Go generate a client from it.
 *
 * zod-openapi assembles the document: it renders each schema with zod's own
 * JSON Schema output (request bodies as agents may write them, defaults
 * optional; replies as the relay sends them) and turns the named ones into
 * components. Its 5.x line is used: 6.x needs Node 22.
 */
import { createDocument, type ZodOpenApiOverride, type ZodOpenApiPathItemObject, type ZodOpenApiPathsObject } from "zod-openapi";
import { ClaudeCodeHookInput, PermissionRequestOutput, PreToolUseOutput } from "../protocol/claude-code-hook.js";
import { CreateRequestBody } from "../protocol/request-body.js";
import { CreatedRequest, ErrorReply, RequestView } from "../protocol/request-view.js";
import { AuditEventView, AuditReply, RequestList, RuleList, RuleView } from "../protocol/operator.js";
import { openApiPath, ROUTES, serveRoute, type DocumentedRoute } from "./api.js";
import { agentOperations } from "./openapi-agent.js";
import { operatorOperations } from "./openapi-operator.js";
import type { Operation } from "./openapi-shared.js";
import type { HttpApp } from "./transport.js";

export function openApiDocument(): ReturnType<typeof createDocument> {
  return createDocument(
    {
      openapi: "3.1.0",
      info: {
        title: "Slack approval relay: agent API",
        version: "1",
        description:
          "Carries AI agents' questions to Slack and brings people's answers back. Agents create a request, then long-poll it " +
          "(or get a signed callback) until a person answers in Slack. Errors are `{error: {code, message, details?}}`.",
      },
      servers: [{ url: "http://localhost:3000", description: "A relay on its default port" }],
      security: [{ bearerAuth: [] }],
      components: {
        securitySchemes: {
          bearerAuth: {
            type: "http",
            scheme: "bearer",
            description:
              "An agent token from RELAY_TOKENS, or an admin token from RELAY_ADMIN_TOKENS: read-only (but for revoking rules), for the audit, every request and every rule.",
          },
          metricsToken: { type: "http", scheme: "bearer", description: "METRICS_TOKEN, for GET /metrics alone; without it set, /metrics takes no token." },
        },
        schemas: {
          CreateRequestBody,
          RequestView,
          CreatedRequest,
          ErrorReply,
          ClaudeCodeHookInput,
          PreToolUseOutput,
          PermissionRequestOutput,
          RequestList,
          AuditReply,
          AuditEvent: AuditEventView,
          RuleList,
          Rule: RuleView,
        },
      },
      paths: paths({ ...agentOperations(), ...operatorOperations() }),
    },
    { override: adjust },
  );
}

/** Every documented route of the list (./api.ts), in its order, at its path and method, with its operation; its name is the operationId. */
function paths(operations: Record<DocumentedRoute, Operation>): ZodOpenApiPathsObject {
  const document: ZodOpenApiPathsObject = {};
  for (const [name, route] of Object.entries(ROUTES)) {
    if ("undocumented" in route) continue;
    const item: ZodOpenApiPathItemObject = (document[openApiPath(route.path)] ??= {});
    item[route.method.toLowerCase() as "get" | "post" | "delete"] = { operationId: name, ...operations[name as DocumentedRoute] };
  }
  return document;
}

/** "PermissionBody", "StepGateBody", …: each kind's body, by its `kind`. */
const KIND_TITLES = new Map<unknown, string>(
  CreateRequestBody.options.map((option) => [option, `${option.shape.kind.value.replace(/(?:^|_)(\w)/g, (_, c: string) => c.toUpperCase())}Body`]),
);

/**
 * Two touches to zod's rendering. Each kind's body gets a title, which client
 * generators name their classes by. And zod renders a reply object as closed
 * (`additionalProperties: false`: its parser strips unknown keys); the
 * document leaves replies open, so a client generated today still reads a
 * reply that gains a field tomorrow.
 */
const adjust: ZodOpenApiOverride = ({ jsonSchema, zodSchema, io }) => {
  const title = KIND_TITLES.get(zodSchema);
  if (title) jsonSchema.title = title;
  const def = zodSchema._zod.def as { type: string; catchall?: unknown };
  if (io === "output" && def.type === "object" && def.catchall === undefined && jsonSchema.additionalProperties === false) {
    delete jsonSchema.additionalProperties;
  }
};

/** The document as openapi.json holds it: two-space indents, a final newline. */
export function openApiText(): string {
  return `${JSON.stringify(openApiDocument(), null, 2)}\n`;
}

/** GET /openapi.json, without a token: built on the first request (not during the start), then kept. */
export function registerOpenApiRoute(app: HttpApp): void {
  let document: ReturnType<typeof openApiDocument> | undefined;
  serveRoute(app, "openApi", {}, async () => (document ??= openApiDocument()));
}
