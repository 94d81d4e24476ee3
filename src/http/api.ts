/**
 * Every route the relay serves, listed once: its method and path. The route
 * modules (./routes/*.ts) register their handlers through `serveRoute` by a
 * route's name, and the OpenAPI document (./openapi.ts) takes its paths and
 * methods from the same list, one operation per documented name, so a route
 * can be neither served without being documented nor documented at a path
 * it is not served at. A route registered past this list stops the server
 * from being built (`checkListed`, called for every route Fastify adds).
 */
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { ContextConfigDefault, FastifySchema, FastifyTypeProviderDefault, RouteGenericInterface, RouteOptions } from "fastify";
import type { Logger } from "../logger.js";
import { HOOK_PATH } from "../protocol/claude-code-hook.js";
import type { HttpApp } from "./transport.js";

export interface ApiRoute {
  method: "GET" | "POST" | "DELETE";
  /** Fastify's form: `:id` for a path parameter. */
  path: string;
  /** Left out of the OpenAPI document: the document itself, and the endpoints whose protocol another spec defines (Slack's, MCP's). */
  undocumented?: true;
}

/** In the order the OpenAPI document lists them. */
export const ROUTES = {
  createRequest: { method: "POST", path: "/v1/requests" },
  listRequests: { method: "GET", path: "/v1/requests" },
  getRequest: { method: "GET", path: "/v1/requests/:id" },
  cancelRequest: { method: "DELETE", path: "/v1/requests/:id" },
  claudeCodeHook: { method: "POST", path: HOOK_PATH },
  readAudit: { method: "GET", path: "/v1/audit" },
  listRules: { method: "GET", path: "/v1/rules" },
  revokeRule: { method: "DELETE", path: "/v1/rules/:id" },
  health: { method: "GET", path: "/healthz" },
  metrics: { method: "GET", path: "/metrics" },
  readiness: { method: "GET", path: "/readyz" },
  openApi: { method: "GET", path: "/openapi.json", undocumented: true },
  slackEvents: { method: "POST", path: "/slack/events", undocumented: true },
  mcp: { method: "POST", path: "/mcp", undocumented: true },
  // The web console (src/console/routes.ts): a page and the JSON it alone calls, not an API of the relay's.
  consolePage: { method: "GET", path: "/console", undocumented: true },
  consoleSignInPage: { method: "GET", path: "/console/signin", undocumented: true },
  consoleAssets: { method: "GET", path: "/console/assets/*", undocumented: true },
  consoleSignIn: { method: "POST", path: "/console/api/signin", undocumented: true },
  consoleSignInOptions: { method: "GET", path: "/console/api/signin", undocumented: true },
  consoleSlackSignIn: { method: "GET", path: "/console/signin/slack", undocumented: true },
  consoleSlackCallback: { method: "GET", path: "/console/signin/slack/callback", undocumented: true },
  consoleAdminSignIn: { method: "POST", path: "/console/api/signin/admin", undocumented: true },
  consoleSignOut: { method: "POST", path: "/console/api/signout", undocumented: true },
  consoleSession: { method: "GET", path: "/console/api/session", undocumented: true },
  consoleAudit: { method: "GET", path: "/console/api/audit", undocumented: true },
  consoleRequests: { method: "GET", path: "/console/api/requests", undocumented: true },
  consoleRequest: { method: "GET", path: "/console/api/requests/:id", undocumented: true },
  consoleAnswer: { method: "POST", path: "/console/api/requests/:id/answer", undocumented: true },
  consoleAllowForAWhile: { method: "POST", path: "/console/api/requests/:id/allow-for-a-while", undocumented: true },
  consoleMoreTime: { method: "POST", path: "/console/api/requests/:id/more-time", undocumented: true },
  consoleEvents: { method: "GET", path: "/console/api/events", undocumented: true },
} as const satisfies Record<string, ApiRoute>;

export type RouteName = keyof typeof ROUTES;
/** The names the OpenAPI document has an operation for (its operationId). */
export type DocumentedRoute = { [K in RouteName]: (typeof ROUTES)[K] extends { undocumented: true } ? never : K }[RouteName];

/** A path as OpenAPI writes it: `/v1/requests/{id}`. */
export function openApiPath(path: string): string {
  return path.replace(/:(\w+)/g, "{$1}");
}

/** A route's options as Fastify takes them, on the relay's app (its logger, no type provider). */
type RouteSpec<G extends RouteGenericInterface> = RouteOptions<
  Server,
  IncomingMessage,
  ServerResponse,
  G,
  ContextConfigDefault,
  FastifySchema,
  FastifyTypeProviderDefault,
  Logger
>;

/** Registers the handler of the route `name` at the list's method and path, as `app.get(path, options, handler)` would. */
export function serveRoute<G extends RouteGenericInterface = RouteGenericInterface>(
  app: HttpApp,
  name: RouteName,
  options: Omit<RouteSpec<G>, "method" | "url" | "handler">,
  handler: RouteSpec<G>["handler"],
): void {
  const { method, path } = ROUTES[name];
  app.route<G>({ ...options, method, url: path, handler });
}

const LISTED = new Set(Object.values(ROUTES).map(({ method, path }) => `${method} ${path}`));

/** Throws when `method path` is not a route of the list (the HEAD routes Fastify adds for GET ones aside). */
export function checkListed(method: string, path: string): void {
  if (method === "HEAD" || LISTED.has(`${method} ${path}`)) return;
  throw new Error(`${method} ${path} is not in the route list (src/http/api.ts): add it there, so the OpenAPI document lists it too`);
}
