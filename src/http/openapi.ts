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
import { z } from "zod";
import { createDocument, type ZodOpenApiOverride, type ZodOpenApiResponsesObject } from "zod-openapi";
import {
  ClaudeCodeHookInput,
  HOOK_PATH,
  RETRIES_UNAVAILABLE_HEADER,
  MAX_HOOK_TIMEOUT_SECONDS,
  MIN_HOOK_TIMEOUT_SECONDS,
  PermissionRequestOutput,
  PreToolUseOutput,
} from "../protocol/claude-code-hook.js";
import { CreateRequestBody, LIMITS, SlackChannelId } from "../protocol/request-body.js";
import { CreatedRequest, ErrorReply, MAX_WAIT_SECONDS, RequestView } from "../protocol/request-view.js";
import { AuditEventView, AuditReply, RequestList, RuleList, RuleView } from "../protocol/operator.js";
import { operatorOperations } from "./openapi-operator.js";
import { AUDIT_PATH } from "./routes/audit.js";
import { RULES_PATH } from "./routes/rules.js";
import { HealthReply, ReadinessReply } from "./routes/health.js";
import { METRICS_PATH } from "./routes/metrics.js";
import type { HttpApp } from "./transport.js";

export const OPENAPI_PATH = "/openapi.json";

const json = (schema: z.ZodType) => ({ "application/json": { schema } });
const error = (description: string) => ({ description, content: json(ErrorReply) });

/** The refusals every authenticated route may give. */
const refusals = {
  "400": error("Invalid JSON, or the body or query refused by the schema; `details` lists `{path, message}` per field."),
  "401": {
    ...error("No token, or an unknown one."),
    headers: z.object({ "WWW-Authenticate": z.literal("Bearer") }),
  },
  "405": { ...error("Another method than the path takes."), headers: z.object({ Allow: z.string().meta({ example: "POST" }) }) },
  "500": error("A bug or an outage in the relay, never bad input; `details.requestId` is the reference in its log."),
} satisfies ZodOpenApiResponsesObject;
/** Every route that reads or changes a request in the store. */
const storeRefusals = {
  "503": {
    ...error(
      "`relay_store_unavailable`: the relay's storage (Redis) did not answer within its bound (about 2 s). Try again after `Retry-After` seconds (repeating a create with its idempotency key is safe). " +
        "`relay_shutting_down`: this instance is shutting down (SIGTERM) and takes no new request or long-poll; the connection is closed, so a retry after `Retry-After` seconds reaches another instance.",
    ),
    headers: z.object({ "Retry-After": z.string().meta({ description: "Seconds to wait before trying again.", example: "2" }) }),
  },
} satisfies ZodOpenApiResponsesObject;
/** The routes where agents act (create, cancel, the hook). */
const agentOnly = {
  "403": error("`relay_forbidden`: an admin token (RELAY_ADMIN_TOKENS); admin tokens only read. Send an agent token (RELAY_TOKENS)."),
} satisfies ZodOpenApiResponsesObject;
const bodyRefusals = {
  "413": error("A body over 1 MB."),
  "415": error("A body that is not `application/json` (or a `+json` type), or is compressed."),
} satisfies ZodOpenApiResponsesObject;

const waitQuery = z.object({
  wait: z
    .number()
    .min(0)
    .max(MAX_WAIT_SECONDS)
    .optional()
    .meta({
      description: `Hold up to this many seconds (decimals allowed, at most ${MAX_WAIT_SECONDS}) until the request is no longer pending, then return it as GET does.`,
    }),
});
const idPath = z.object({ id: z.string().min(1).max(200).meta({ description: "The request's id, as the create returned it." }) });
const requestId = z.object({
  "X-Request-Id": z.string().optional().meta({ description: "Echoed back; a fresh id when absent or not a plain token of up to 128 characters." }),
});

export function openApiDocument(): ReturnType<typeof createDocument> {
  const operator = operatorOperations({ json, error, refusals, storeRefusals, requestId });
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
      paths: {
        "/v1/requests": {
          post: {
            operationId: "createRequest",
            summary: "Ask a person in Slack",
            description:
              "Creates a request and posts it to Slack. The same idempotency key from the same token with the same body returns the existing request (200) and posts once; with another body, 409.",
            requestParams: {
              query: waitQuery,
              header: requestId.extend({
                "Idempotency-Key": z
                  .string()
                  .min(1)
                  .max(LIMITS.idempotencyKey)
                  .optional()
                  .meta({ description: "Same as the body's `idempotencyKey`; both may be given only if they agree." }),
              }),
            },
            requestBody: { required: true, content: json(CreateRequestBody) },
            responses: {
              "201": {
                description: "Created: `{id, status, expiresAt}`, or the whole request with `?wait` or when it was answered at once.",
                content: json(CreatedRequest),
              },
              "200": { description: "The idempotency key named a request that already exists: the request as GET returns it.", content: json(RequestView) },
              "409": error(
                "`relay_idempotency_mismatch`: the idempotency key was already used by this token with a different body; `details.id` is that request. Use a new key for a new request.",
              ),
              ...refusals,
              ...agentOnly,
              ...bodyRefusals,
              "503": {
                ...storeRefusals["503"],
                description:
                  `${storeRefusals["503"].description} ` +
                  "`relay_slack_unavailable`: Slack could not be asked whose `requestedBy.email` it is, or whether a person named in `approvers` is in one of the route's user groups; nothing was created. Try again after `Retry-After` seconds.",
              },
            },
            callbacks: {
              requestEnded: {
                "{$request.body#/callbackUrl}": {
                  post: {
                    summary: "The request ended",
                    description:
                      "With `callbackUrl`, the final request is POSTed there once it ends, signed with the agent token: " +
                      '`X-Relay-Signature: v1=<hex HMAC-SHA256(token, "v1:" + timestamp + ":" + body)>`. Delivery is at least once.',
                    requestParams: {
                      header: z.object({
                        "X-Relay-Timestamp": z.string().meta({ description: "Unix seconds." }),
                        "X-Relay-Signature": z.string(),
                        "X-Relay-Request-Id": z.string().meta({ description: "Dedupe on it." }),
                      }),
                    },
                    requestBody: { content: json(RequestView) },
                    responses: { "200": { description: "Any 2xx acknowledges the delivery; anything else is retried for six hours." } },
                  },
                },
              },
            },
          },
          get: operator.listRequests,
        },
        "/v1/requests/{id}": {
          get: {
            operationId: "getRequest",
            summary: "Read a request, optionally waiting for its answer",
            requestParams: { path: idPath, query: waitQuery, header: requestId },
            responses: {
              "200": { description: "The request.", content: json(RequestView) },
              "404": error("No such request for this token (another agent token's request is not found either; an admin token reads every request)."),
              ...refusals,
              ...storeRefusals,
            },
          },
          delete: {
            operationId: "cancelRequest",
            summary: "Cancel a request",
            description: "The Slack message is updated and waiters get `cancelled`.",
            requestParams: { path: idPath, header: requestId },
            responses: {
              "200": { description: "Cancelled (or already cancelled).", content: json(RequestView) },
              "404": error("No such request for this token."),
              "409": error("The request already ended: `relay_already_answered` or `relay_already_ended`, with the request as `details`."),
              ...refusals,
              ...agentOnly,
              ...storeRefusals,
            },
          },
        },
        [HOOK_PATH]: {
          post: {
            operationId: "claudeCodeHook",
            summary: "A Claude Code `http` hook (PreToolUse, PermissionRequest)",
            description:
              "Takes the hook input as Claude Code sends it and holds the call until a person answers, then replies with hook JSON. " +
              "No answer in time, a dropped request, storage that stays unavailable or a failure inside the relay is a 200 deny, never an error Claude Code would ignore. " +
              "A call held longer than RELAY_HOOK_KEEPALIVE (default 15 s) gets its 200 started then and a space every interval before the JSON, so idle-timeout proxies keep it open. " +
              "An instance shutting down denies new calls, saying it is restarting, unless the caller says it retries (503 then).",
            requestParams: {
              query: z.object({
                timeout: z.int().min(MIN_HOOK_TIMEOUT_SECONDS).max(MAX_HOOK_TIMEOUT_SECONDS).optional().meta({
                  description: "The hook's own `timeout` (seconds): the relay denies a few seconds before it. Default: RELAY_HOOK_TIMEOUT.",
                }),
                channel: SlackChannelId.optional().meta({ description: "Where to ask; default: SLACK_DEFAULT_CHANNEL." }),
                requestedBy: z
                  .string()
                  .optional()
                  .meta({
                    description:
                      "Who the tool call is for: a Slack user id (U0123ABCD) or an email the relay resolves; with the route's `selfApproval: deny` they may not answer it. " +
                      "A caller that retries gets 503 relay_slack_unavailable when Slack cannot resolve the email; Claude Code gets a deny.",
                    example: "U0123ABCD",
                  }),
              }),
              header: requestId.extend({
                [RETRIES_UNAVAILABLE_HEADER]: z.literal("1").optional().meta({
                  description:
                    "The caller retries a 503 itself (the client library does; Claude Code does not): an instance shutting down answers 503 relay_shutting_down instead of a deny.",
                }),
              }),
            },
            requestBody: { required: true, content: json(ClaudeCodeHookInput) },
            responses: {
              "200": { description: "The hook JSON for the event.", content: json(z.union([PreToolUseOutput, PermissionRequestOutput])) },
              ...refusals,
              ...agentOnly,
              ...bodyRefusals,
              "503": {
                ...error(
                  `\`relay_shutting_down\` or \`relay_slack_unavailable\`, only for a caller that sends \`${RETRIES_UNAVAILABLE_HEADER}: 1\`: this instance is shutting down, or Slack could not resolve \`requestedBy\`; retry after \`Retry-After\` seconds.`,
                ),
                headers: z.object({ "Retry-After": z.string().meta({ description: "Seconds to wait before trying again.", example: "1" }) }),
              },
            },
          },
        },
        [AUDIT_PATH]: { get: operator.readAudit },
        [RULES_PATH]: { get: operator.listRules },
        [`${RULES_PATH}/{id}`]: { delete: operator.revokeRule },
        "/healthz": {
          get: {
            operationId: "health",
            summary: "Liveness",
            security: [],
            responses: { "200": { description: "The process serves HTTP.", content: json(HealthReply) } },
          },
        },
        [METRICS_PATH]: {
          get: {
            operationId: "metrics",
            summary: "Prometheus metrics",
            description:
              "The relay's metrics in the Prometheus text format: requests created and ended, pending, time to decision, held calls, Slack calls and queue, store errors, " +
              "callbacks queued, and the process's. With METRICS_TOKEN set it takes that token as a bearer token; without it the route is open (keep it on an internal port).",
            security: [{ metricsToken: [] }, {}],
            responses: {
              "200": { description: "The metrics.", content: { "text/plain; version=0.0.4; charset=utf-8": { schema: z.string() } } },
              "401": { ...refusals["401"], description: "METRICS_TOKEN is set and the request does not carry it." },
              "405": refusals["405"],
            },
          },
        },
        "/readyz": {
          get: {
            operationId: "readiness",
            summary: "Readiness: the store and Slack answer",
            security: [],
            responses: {
              "200": { description: "Ready.", content: json(ReadinessReply) },
              "503": {
                description: "Not ready: `checks` says which part is down; `status: shutting_down` (answered at once) while the instance drains after SIGTERM.",
                content: json(ReadinessReply),
              },
            },
          },
        },
      },
    },
    { override: adjust },
  );
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
  app.get(OPENAPI_PATH, async () => (document ??= openApiDocument()));
}
