/**
 * The relay's HTTP front door: routes every request (agents' API, health,
 * Slack's events in HTTP mode), authenticates agent routes before any body is
 * read, and sends every failure through the one error mapping. Transport
 * only; the RequestService does the work.
 */
import { createServer, STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import type { AgentToken } from "../config.js";
import { silentLogger, type Logger } from "../logger.js";
import type { RequestService } from "../requests/service.js";
import { createAuthenticator } from "./auth.js";
import { clientErrorReply, errorReply, methodNotAllowed, notFound } from "./errors.js";
import { COMMON_HEADERS, send } from "./response.js";
import type { Route } from "./route.js";
import { Router } from "./router.js";
import { DEFAULT_HOOK_TIMEOUT_SECONDS } from "../protocol/claude-code-hook.js";
import { MAX_WAIT_SECONDS } from "../protocol/request-view.js";
import { registerClaudeCodeHookRoutes } from "./routes/claude-code-hook.js";
import { registerHealthRoutes, type Readiness } from "./routes/health.js";
import { registerRequestRoutes } from "./routes/requests.js";
import { registerSlackRoute, type SlackListener } from "./routes/slack.js";

export interface HttpDeps {
  service: RequestService;
  /** Agent tokens from the configuration. */
  tokens: readonly AgentToken[];
  logger?: Logger;
  /** Largest accepted request body, in bytes. */
  bodyLimitBytes?: number;
  /** Bolt's HTTP receiver, mounted at POST /slack/events (HTTP mode); absent → 404 there. */
  slackListener?: SlackListener;
  /** Whether the store and Slack answer; drives GET /readyz. */
  readiness: () => Promise<Readiness>;
  /** Longest `?wait=` an agent may ask for, in seconds. */
  maxWaitSeconds?: number;
  /** Claude Code's hook timeout (seconds) when the hook URL has no `?timeout=` (RELAY_HOOK_TIMEOUT). */
  hookTimeoutSeconds?: number;
}

export type HttpHandler = (req: IncomingMessage, res: ServerResponse) => void;

export const DEFAULT_BODY_LIMIT_BYTES = 1_048_576;

export function createHttpHandler(deps: HttpDeps): HttpHandler {
  const logger = deps.logger ?? silentLogger;
  const bodyLimitBytes = deps.bodyLimitBytes ?? DEFAULT_BODY_LIMIT_BYTES;
  const maxWaitSeconds = deps.maxWaitSeconds ?? MAX_WAIT_SECONDS;
  const authenticate = createAuthenticator(deps.tokens);

  const router = new Router<Route>();
  registerHealthRoutes(router, { readiness: deps.readiness, logger });
  registerRequestRoutes(router, { service: deps.service, bodyLimitBytes, maxWaitSeconds });
  registerClaudeCodeHookRoutes(router, { service: deps.service, bodyLimitBytes, logger, hookTimeoutSeconds: deps.hookTimeoutSeconds ?? DEFAULT_HOOK_TIMEOUT_SECONDS });
  if (deps.slackListener) registerSlackRoute(router, { listener: deps.slackListener, bodyLimitBytes });

  async function dispatch(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = req.url ?? "/";
    const mark = url.indexOf("?");
    const path = mark < 0 ? url : url.slice(0, mark);
    const method = req.method ?? "GET";
    try {
      const match = router.match(method, path);
      if (match.kind === "not_found") throw notFound("This path");
      if (match.kind === "method_not_allowed") throw methodNotAllowed(match.allow);
      const route = match.handler;
      const agent = route.auth ? authenticate(req.headers.authorization) : "";
      const query = mark < 0 ? "" : url.slice(mark + 1);
      const reply = await route.handle({ req, res, params: match.params, query, agent });
      if (reply) send(res, reply);
    } catch (error) {
      const reply = errorReply(error, logger, { method, path });
      if (res.headersSent) {
        res.destroy();
        return;
      }
      if (!req.complete && !unreadBodyIsSmall(req, bodyLimitBytes)) reply.close = true;
      send(res, reply);
    }
  }

  return (req, res) => void dispatch(req, res);
}

/**
 * After an early refusal (401, 404, 415, …) Node discards the unread body to
 * keep the connection; that is cheap only when the body is known to be small.
 * A larger or chunked one closes the connection instead.
 */
function unreadBodyIsSmall(req: IncomingMessage, limit: number): boolean {
  const declared = req.headers["content-length"];
  return declared !== undefined && Number(declared) <= limit;
}

/** Server timeouts (ms) that let a 60 s long-poll finish. */
export const SERVER_TIMEOUTS = {
  /** Whole request, body included; longer than the longest long-poll plus slack. */
  requestTimeout: 120_000,
  /** Time to receive the headers; bounds slow-header (slowloris) clients. */
  headersTimeout: 30_000,
  /** Idle keep-alive connections; longer than load balancers' idle timeouts (ALB 60 s, nginx 60 s). */
  keepAliveTimeout: 75_000,
} as const;

export function createHttpServer(deps: HttpDeps): Server {
  const server = createServer(
    { requestTimeout: SERVER_TIMEOUTS.requestTimeout, headersTimeout: SERVER_TIMEOUTS.headersTimeout },
    createHttpHandler(deps),
  );
  server.keepAliveTimeout = SERVER_TIMEOUTS.keepAliveTimeout;
  server.on("clientError", answerClientError);
  return server;
}

/**
 * Answers what Node's parser refused, as Node would (only when no response
 * has started on the socket, so the peer never reads a corrupted stream), but
 * with a JSON body; then closes the connection.
 */
function answerClientError(error: NodeJS.ErrnoException, socket: Duplex): void {
  const inFlight = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (error.code !== "ECONNRESET" && socket.writable && !inFlight?.headersSent) {
    const reply = clientErrorReply(error);
    const payload = JSON.stringify(reply.body);
    socket.write(
      `HTTP/1.1 ${reply.status} ${STATUS_CODES[reply.status]}\r\n` +
        Object.entries(COMMON_HEADERS).map(([name, value]) => `${name}: ${value}\r\n`).join("") +
        `Content-Length: ${Buffer.byteLength(payload)}\r\nConnection: close\r\n\r\n${payload}`,
    );
  }
  socket.destroy(error);
}
