/**
 * The relay's HTTP front door, on Fastify: the agent API, the Claude Code
 * hook, health, metrics, the API document and Slack's events in HTTP mode. Fastify
 * routes, reads bodies within the limit and logs through the relay's pino
 * logger; this module fixes how: agent routes authenticate before a body is
 * read, an unknown path is 404 and a wrong method 405 with `Allow` (both
 * before the body is read), and every failure, Fastify's own included, goes
 * through the one error mapping (./errors.ts) to the relay's error shape.
 * Transport only: the RequestService, HookCalls, RequestListing and
 * AuditTrail do the work.
 */
import { STATUS_CODES } from "node:http";
import type { Socket } from "node:net";
import Fastify, { type FastifyReply, type FastifyRequest } from "fastify";
import type { AgentToken } from "../config/config.js";
import { silentLogger, type Logger } from "../logger.js";
import { DEFAULT_MCP_PROGRESS_SECONDS } from "../mcp/waiting.js";
import { DEFAULT_HOOK_TIMEOUT_SECONDS } from "../protocol/claude-code-hook.js";
import { MAX_WAIT_SECONDS } from "../protocol/request-view.js";
import type { AuditTrail } from "../requests/audit-trail.js";
import type { HookCalls } from "../requests/hooks/calls.js";
import type { RequestListing } from "../requests/listing.js";
import type { RequestService } from "../requests/service.js";
import { registerConsoleRoutes, type ConsoleDeps } from "../console/routes.js";
import { useBearerAuth } from "./auth.js";
import { clientErrorReply, errorReply, notFound } from "./errors.js";
import { REQUEST_ID_HEADER, RequestLines, requestIdOf, requestLogger } from "./logging.js";
import type { RelayMetrics } from "./metrics.js";
import { refuseOtherMethods, routesByPath } from "./methods.js";
import { registerOpenApiRoute } from "./openapi.js";
import { CreateRateLimit } from "./rate-limit.js";
import { registerAuditRoutes } from "./routes/audit.js";
import { registerClaudeCodeHookRoutes } from "./routes/claude-code-hook.js";
import { registerHealthRoutes, type ReadinessCheck } from "./routes/health.js";
import { registerMcpRoute } from "./routes/mcp.js";
import { registerMetricsRoute } from "./routes/metrics.js";
import { registerRequestRoutes, type RequestRoutesDeps } from "./routes/requests.js";
import { registerRuleRoutes } from "./routes/rules.js";
import { registerSlackRoute, type SlackListener } from "./routes/slack.js";
import { discardUpload, useJsonBodies, type HttpApp } from "./transport.js";

export interface HttpDeps {
  service: RequestService;
  /** Holds Claude Code hook calls; shutdown closes it. */
  hookCalls: HookCalls;
  /** Agent tokens from the configuration. */
  tokens: readonly AgentToken[];
  /** Admin (operator) tokens from the configuration (RELAY_ADMIN_TOKENS); none by default. */
  adminTokens?: readonly AgentToken[];
  /** Lists requests (GET /v1/requests). */
  listing: RequestListing;
  /** Reads the audit trail (GET /v1/audit). */
  audit: Pick<AuditTrail, "read">;
  logger?: Logger;
  /** Largest accepted request body, in bytes. */
  bodyLimitBytes?: number;
  /** Largest body of a create and of a Claude Code hook call, in bytes (RELAY_MAX_BODY); `bodyLimitBytes` when absent. */
  agentBodyLimitBytes?: number;
  /** Bolt's HTTP receiver, mounted at POST /slack/events (HTTP mode); absent → 404 there. */
  slackListener?: SlackListener;
  /** Permalinks of the requests' Slack messages, shown in the agent API's views (absent without Slack). */
  messageLinks?: RequestRoutesDeps["messageLinks"];
  /** Whether the store and Slack answer; drives GET /readyz. */
  readiness: () => Promise<ReadinessCheck>;
  /** Longest `?wait=` an agent may ask for, in seconds. */
  maxWaitSeconds?: number;
  /** Claude Code's hook timeout (seconds) when the hook URL has no `?timeout=` (RELAY_HOOK_TIMEOUT). */
  hookTimeoutSeconds?: number;
  /** Milliseconds between the keepalive spaces of a held hook call (RELAY_HOOK_KEEPALIVE). */
  hookKeepaliveMs?: number;
  /** Milliseconds between the progress notifications of a waiting MCP tool call (RELAY_MCP_PROGRESS). */
  mcpProgressMs?: number;
  /** Origins a browser-based MCP client may call POST /mcp from (RELAY_MCP_ORIGINS); default none. */
  mcpOrigins?: readonly string[];
  /** Served at GET /metrics; absent → 404 there. */
  metrics?: RelayMetrics;
  /** METRICS_TOKEN: the bearer token GET /metrics asks for; absent → open. */
  metricsToken?: string;
  /** RELAY_CREATE_RATE_LIMIT: creates (POST /v1/requests, hook calls, MCP tool calls that create) one agent token may make per minute here; absent → no limit. */
  createRateLimit?: number;
  /** The web console (src/console): served under /console when given. */
  console?: Omit<ConsoleDeps, "service" | "listing" | "logger" | "audit" | "adminTokens">;
}

export const DEFAULT_BODY_LIMIT_BYTES = 1_048_576;

/** Server timeouts (ms) that let a 60 s long-poll finish. */
export const SERVER_TIMEOUTS = {
  /** Whole request, body included; longer than the longest long-poll plus slack. */
  requestTimeout: 120_000,
  /** Time to receive the headers; bounds slow-header (slowloris) clients. */
  headersTimeout: 30_000,
  /** Idle keep-alive connections; longer than load balancers' idle timeouts (ALB 60 s, nginx 60 s). */
  keepAliveTimeout: 75_000,
} as const;

/**
 * Fastify loads its JSON-schema compilers (ajv, fast-json-stringify) when it is
 * constructed, about 110 ms of every start, for route schemas the relay does not
 * declare: bodies are parsed with the zod schemas of src/protocol. These builders
 * keep them unloaded, and say so should a route ever declare a schema.
 */
const NO_ROUTE_SCHEMAS = {
  buildValidator: (): never => {
    throw new Error("Fastify route schemas are not used here: parse with the zod schemas of src/protocol (see src/http/server.ts)");
  },
  buildSerializer: (): never => {
    throw new Error("Fastify response schemas are not used here: replies are plain JSON (see src/http/server.ts)");
  },
};

/** Headers of every response the relay writes itself (Bolt writes its own). */
const COMMON_HEADERS = { "cache-control": "no-store", "x-content-type-options": "nosniff" } as const;

export function createHttpApp(deps: HttpDeps): HttpApp {
  const logger = deps.logger ?? silentLogger;
  const bodyLimitBytes = deps.bodyLimitBytes ?? DEFAULT_BODY_LIMIT_BYTES;
  const app = Fastify({
    loggerInstance: logger,
    logController: new RequestLines(),
    genReqId: (req) => requestIdOf(req),
    childLoggerFactory: (parent, bindings, _options, req) => requestLogger(parent, bindings, req),
    bodyLimit: bodyLimitBytes,
    requestTimeout: SERVER_TIMEOUTS.requestTimeout,
    keepAliveTimeout: SERVER_TIMEOUTS.keepAliveTimeout,
    // Longer ids are refused by the route as not found, like any unknown id.
    routerOptions: { maxParamLength: 1000 },
    schemaController: { compilersFactory: NO_ROUTE_SCHEMAS },
    // Requests on open connections are served while held calls drain (as before Fastify), not refused in Fastify's shape.
    return503OnClosing: false,
    // An undecodable path is a path the relay does not have.
    frameworkErrors: (error, request, reply) => sendError(reply, notFound("This path"), request, bodyLimitBytes),
    clientErrorHandler: answerClientError,
  });
  app.server.headersTimeout = SERVER_TIMEOUTS.headersTimeout;

  // Runs before any route's own hooks (authentication): an unknown path is 404 with or without a token.
  app.addHook("onRequest", (request, _reply, done) => done(request.is404 || hasEmptyParam(request) ? notFound("This path") : undefined));
  const auth = useBearerAuth(app, { agents: deps.tokens, admins: deps.adminTokens ?? [] });
  useJsonBodies(app);
  app.addHook("onSend", (request, reply, payload, done) => {
    reply.headers(commonHeaders(request));
    if (!request.raw.complete && !unreadBodyIsSmall(request, routeBodyLimit(request) ?? bodyLimitBytes)) reply.header("connection", "close");
    // Draining: the client's next call opens a new connection, which a load balancer sends elsewhere.
    if (deps.service.isDraining) reply.header("connection", "close");
    done(null, payload);
  });
  app.setErrorHandler(async (error, request, reply) => {
    if (isTooLarge(error)) await discardUpload(request.raw);
    sendError(reply, error, request, bodyLimitBytes);
    return reply;
  });
  app.setNotFoundHandler(async () => {
    throw notFound("This path");
  });

  const declared = routesByPath(app);
  registerHealthRoutes(app, { readiness: deps.readiness, draining: () => deps.service.isDraining, logger });
  registerOpenApiRoute(app);
  if (deps.metrics) registerMetricsRoute(app, { metrics: deps.metrics, ...(deps.metricsToken === undefined ? {} : { token: deps.metricsToken }) });
  const agentBodies = deps.agentBodyLimitBytes === undefined ? {} : { bodyLimitBytes: deps.agentBodyLimitBytes };
  const perMinute = deps.createRateLimit;
  const createLimit =
    perMinute === undefined
      ? undefined
      : new CreateRateLimit(app, { perMinute, onLimited: (token, reference) => deps.service.rateLimited(token, reference, perMinute) });
  const creates = createLimit ? { limitCreates: createLimit.preHandler } : {};
  registerRequestRoutes(app, {
    service: deps.service,
    listing: deps.listing,
    auth,
    maxWaitSeconds: deps.maxWaitSeconds ?? MAX_WAIT_SECONDS,
    ...agentBodies,
    ...creates,
    ...(deps.messageLinks ? { messageLinks: deps.messageLinks } : {}),
  });
  registerAuditRoutes(app, { audit: deps.audit, authenticate: auth.admin });
  registerRuleRoutes(app, { rules: deps.service.rules, authenticate: auth.any });
  registerClaudeCodeHookRoutes(app, {
    hookCalls: deps.hookCalls,
    authenticate: auth.agent,
    hookTimeoutSeconds: deps.hookTimeoutSeconds ?? DEFAULT_HOOK_TIMEOUT_SECONDS,
    ...(deps.hookKeepaliveMs === undefined ? {} : { keepaliveMs: deps.hookKeepaliveMs }),
    ...agentBodies,
    ...creates,
  });
  registerMcpRoute(app, {
    service: deps.service,
    authenticate: auth.agent,
    progressMs: deps.mcpProgressMs ?? DEFAULT_MCP_PROGRESS_SECONDS * 1000,
    allowedOrigins: deps.mcpOrigins ?? [],
    ...(createLimit ? { createLimit } : {}),
  });
  if (deps.slackListener) registerSlackRoute(app, { listener: deps.slackListener, bodyLimitBytes });
  if (deps.console) {
    registerConsoleRoutes(app, {
      ...deps.console,
      service: deps.service,
      listing: deps.listing,
      logger,
      audit: deps.audit,
      adminTokens: deps.adminTokens ?? [],
    });
  }
  refuseOtherMethods(app, declared);
  return app;
}

/** Also where Fastify answers without hooks (an undecodable path). */
function sendError(reply: FastifyReply, error: unknown, request: FastifyRequest, bodyLimitBytes: number): void {
  const limit = routeBodyLimit(request) ?? bodyLimitBytes;
  const { status, body, headers } = errorReply(error, { log: request.log, requestId: request.id, bodyLimitBytes: limit });
  void reply
    .code(status)
    .headers({ ...commonHeaders(request), ...headers })
    .send(body);
}

/** Fastify's refusal of a body over the limit, or the relay's own. */
function isTooLarge(error: unknown): boolean {
  const { code } = (error ?? {}) as { code?: unknown };
  return code === "FST_ERR_CTP_BODY_TOO_LARGE" || code === "relay_body_too_large";
}

/** The route's own body limit (RELAY_MAX_BODY on creates and hook calls), when it has one; undefined before routing. */
function routeBodyLimit(request: FastifyRequest): number | undefined {
  try {
    return request.routeOptions.bodyLimit;
  } catch {
    return undefined;
  }
}

/** A path parameter that is empty ("/v1/requests/") names nothing. */
function hasEmptyParam(request: FastifyRequest): boolean {
  const params = request.params as Record<string, string>;
  for (const name in params) if (params[name] === "") return true;
  return false;
}

function commonHeaders(request: FastifyRequest): Record<string, string> {
  return { ...COMMON_HEADERS, [REQUEST_ID_HEADER]: request.id };
}

/**
 * After an early refusal (401, 404, 415, …) Node discards the unread body to
 * keep the connection; that is cheap only when the body is known to be small.
 * A larger or chunked one closes the connection instead.
 */
function unreadBodyIsSmall(request: FastifyRequest, limit: number): boolean {
  const declared = request.headers["content-length"];
  return declared !== undefined && Number(declared) <= limit;
}

/**
 * Answers what Node's parser refused, as Node would (only when no response
 * has started on the socket, so the peer never reads a corrupted stream), but
 * with the relay's JSON body; then closes the connection.
 */
function answerClientError(error: NodeJS.ErrnoException, socket: Socket): void {
  const inFlight = (socket as { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (error.code !== "ECONNRESET" && socket.writable && !inFlight?.headersSent) {
    const { status, body } = clientErrorReply(error);
    const payload = JSON.stringify(body);
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        Object.entries(COMMON_HEADERS)
          .map(([name, value]) => `${name}: ${value}\r\n`)
          .join("") +
        `Content-Length: ${Buffer.byteLength(payload)}\r\nConnection: close\r\n\r\n${payload}`,
    );
  }
  socket.destroy(error);
}

/**
 * Listens on `port`. Without a host, on every interface as Node does (IPv6
 * and IPv4 where the machine has IPv6, IPv4 alone otherwise): Fastify alone
 * would default to localhost, unreachable from outside a container.
 */
export async function listenHttp(app: HttpApp, port: number, host?: string): Promise<void> {
  if (host !== undefined) {
    await app.listen({ port, host });
    return;
  }
  try {
    await app.listen({ port, host: "::" });
  } catch (error) {
    if ((error as { code?: unknown }).code !== "EAFNOSUPPORT" && (error as { code?: unknown }).code !== "EADDRNOTAVAIL") throw error;
    await app.listen({ port, host: "0.0.0.0" });
  }
}
