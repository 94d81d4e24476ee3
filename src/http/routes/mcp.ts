/**
 * POST /mcp: the relay's MCP server over Streamable HTTP (the MCP spec's
 * transport), stateless: every POST gets a fresh McpServer and transport from
 * the official SDK, so any relay instance serves any call. Thin: checks the
 * Origin and the agent token, then hands the JSON-RPC body to the SDK; the
 * tools themselves are src/mcp/tools.ts.
 *
 * - Origin: the spec asks servers to refuse a foreign Origin with 403 (a
 *   browser page, through DNS rebinding, must not reach the server). MCP
 *   clients that are not browsers send none; a request that carries one is
 *   served only when RELAY_MCP_ORIGINS lists it.
 * - Cancellation: a stateless server sees a client's notifications/cancelled
 *   in a POST of its own, not on the call's stream. So each tools/call in
 *   flight is listed here by token, session and JSON-RPC id, and a
 *   cancellation that names it aborts it (its request is cancelled, its
 *   stream ends). The session id is only that key: one is handed out at
 *   initialize (Mcp-Session-Id) and clients send it back; no state is kept
 *   under it, only the client's name and version are carried in it
 *   (../mcp-session.ts). A call whose connection closes is aborted the same way. Behind
 *   a load balancer the cancellation may reach another instance than the
 *   one holding the call: one that holds no such call announces it through
 *   the store (Redis pub/sub) and the instance holding it aborts it. The key
 *   holds the agent token, so only the token that made a call cancels it.
 *   A cancel may also arrive before its call: one no instance holds is
 *   remembered for CANCEL_MEMORY_MS, and a call whose key was cancelled is
 *   answered as cancelled (approve: a deny; ask_user: an error result) without
 *   creating a request. Only under a session id: without one, JSON-RPC ids
 *   repeat from one client to the next of the same token.
 * - Limits: a tool call that creates (approve, ask_user) counts against the
 *   token's create rate (RELAY_CREATE_RATE_LIMIT, the agent API's window) and
 *   its pending cap, like POST /v1/requests; past either, ask_user is a tool
 *   error and approve a deny, each naming the limit and when to retry.
 */
import { Readable } from "node:stream";
import type { ReadableStream as NodeReadableStream } from "node:stream/web";
import type { FastifyReply, FastifyRequest } from "fastify";
import { CALL_CANCELLED, CONNECTION_CLOSED, Holders } from "../../mcp/waiting.js";
import { RelayError } from "../../requests/errors.js";
import type { RequestService } from "../../requests/service.js";
import { serveRoute } from "../api.js";
import type { AuthHook } from "../auth.js";
import type { CreateRateLimit } from "../rate-limit.js";
import { serviceRelay } from "../mcp-relay.js";
import { clientInfoOf, newSessionId } from "../mcp-session.js";
import { clientGone, jsonBody, type HttpApp } from "../transport.js";

const SESSION_HEADER = "mcp-session-id";

export interface McpRouteDeps {
  service: RequestService;
  authenticate: AuthHook;
  /** Milliseconds between progress notifications of a waiting call (RELAY_MCP_PROGRESS). */
  progressMs: number;
  /** Origins (scheme://host[:port]) a request carrying an Origin header may come from (RELAY_MCP_ORIGINS). */
  allowedOrigins: readonly string[];
  /** The create rate limit per token (../rate-limit.ts), shared with the agent API: each tool call that creates counts; absent → none. */
  createLimit?: CreateRateLimit;
}

type JsonRpcId = string | number;

/**
 * How long a cancel for a call no instance holds is remembered (under its
 * key, in the store): a call that arrives after its cancel (another
 * instance, a slower connection) is answered as cancelled, asking nobody.
 */
export const CANCEL_MEMORY_MS = 60_000;

/**
 * The MCP SDK and the tools, loaded on the first call to POST /mcp: the SDK
 * and its JSON Schema validator take 100–400 ms to load, which a relay that
 * serves no MCP client should not spend on every start (Node keeps a module
 * once loaded, so later calls pay nothing).
 */
async function loadSdk() {
  const [{ createMcpServer }, { WebStandardStreamableHTTPServerTransport }] = await Promise.all([
    import("../../mcp/tools.js"),
    import("@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js"),
  ]);
  return { createMcpServer, WebStandardStreamableHTTPServerTransport };
}

export function registerMcpRoute(app: HttpApp, { service, authenticate, progressMs, allowedOrigins, createLimit }: McpRouteDeps): void {
  const holders = new Holders();
  /** The tools/call requests in flight, by callKey. */
  const inFlight = new Map<string, AbortController>();
  const stopCancels = service.onCallCancelled((key) => inFlight.get(key)?.abort(CALL_CANCELLED));
  app.server.once("close", stopCancels);
  const origins = new Set(allowedOrigins.map((origin) => origin.toLowerCase()));
  const checkOrigin: AuthHook = (request, _reply, done) => {
    const origin = request.headers.origin;
    done(origin === undefined || origins.has(origin.toLowerCase()) ? undefined : foreignOrigin());
  };

  serveRoute(app, "mcp", { onRequest: [checkOrigin, authenticate] }, async (request, reply) => {
    const body = jsonBody(request);
    const { createMcpServer, WebStandardStreamableHTTPServerTransport } = await loadSdk();
    const messages = Array.isArray(body) ? (body as unknown[]) : [body];
    const session = request.headers[SESSION_HEADER];
    const keyOf = (id: JsonRpcId) => callKey(request.agent, typeof session === "string" ? session : "", id);
    /** Cancels are remembered for calls under a session only (see the header). */
    const remembers = typeof session === "string" && session !== "";
    // A call held on another instance, or not come yet, hears of its cancel through the store (see the header).
    for (const id of cancelledIds(messages)) {
      const held = inFlight.get(keyOf(id));
      if (held) held.abort(CALL_CANCELLED);
      // Awaited: once its cancel is answered, a call the client sends next finds it remembered.
      else await service.announceCancelledCall(keyOf(id), remembers ? CANCEL_MEMORY_MS : undefined);
    }

    const calls = new Map<JsonRpcId, AbortController>();
    for (const id of toolCallIds(messages)) {
      const controller = new AbortController();
      calls.set(id, controller);
      inFlight.set(keyOf(id), controller);
    }
    reply.raw.once("close", () => {
      for (const id of calls.keys()) if (inFlight.get(keyOf(id)) === calls.get(id)) inFlight.delete(keyOf(id));
    });
    // Listed first, then looked up: a cancel either was remembered before the look-up or is announced after the listing.
    if (remembers) {
      await Promise.all(
        [...calls].map(async ([id, controller]) => {
          if (await service.wasCallCancelled(keyOf(id))) controller.abort(CALL_CANCELLED);
        }),
      );
    }
    const gone = clientGone(reply.raw);
    gone.addEventListener("abort", () => calls.forEach((controller) => controller.abort(CONNECTION_CLOSED)), { once: true });

    const relay = serviceRelay({
      service,
      agent: request.agent,
      logger: request.log,
      reference: request.id,
      ...(createLimit ? { createLimit: { limit: createLimit, request } } : {}),
    });
    const clientInfo = clientInfoOf(typeof session === "string" ? session : undefined);
    const server = createMcpServer({ relay, holders, progressMs, clientInfo, callSignal: (id) => calls.get(id)?.signal });
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    // A cancelled call sends no response (the spec's rule): its stream is ended here instead. One
    // cancelled before it came is answered (its tool says it was cancelled): its client has let it go.
    for (const controller of calls.values()) controller.signal.addEventListener("abort", () => void transport.close(), { once: true });
    reply.raw.once("close", () => void server.close());
    await server.connect(transport);
    const response = await transport.handleRequest(webRequest(request), { parsedBody: body });
    return relayResponse(reply, response, messages.find(isInitialize));
  });
}

/** The SDK's response as the Fastify reply: status, headers and body (an SSE stream or JSON). */
function relayResponse(reply: FastifyReply, response: Response, initialize: unknown): FastifyReply {
  reply.code(response.status);
  response.headers.forEach((value, name) => void reply.header(name, value));
  if (initialize !== undefined && response.ok)
    reply.header(SESSION_HEADER, newSessionId((initialize as { params?: { clientInfo?: unknown } }).params?.clientInfo));
  if (!response.body) return reply.send();
  return reply.send(Readable.fromWeb(response.body as NodeReadableStream<Uint8Array>));
}

/** The request as the SDK reads it: only its headers matter (the body is passed parsed). */
function webRequest(request: FastifyRequest): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (typeof value === "string") headers.set(name, value);
    else if (Array.isArray(value)) for (const item of value) headers.append(name, item);
  }
  return new Request(`http://${request.host}${request.url}`, { method: "POST", headers });
}

function callKey(agent: string, session: string, id: JsonRpcId): string {
  return JSON.stringify([agent, session, id]);
}

function isJsonRpcId(value: unknown): value is JsonRpcId {
  return typeof value === "string" || typeof value === "number";
}

function toolCallIds(messages: unknown[]): JsonRpcId[] {
  return messages.flatMap((message) => {
    const { method, id } = (message ?? {}) as { method?: unknown; id?: unknown };
    return method === "tools/call" && isJsonRpcId(id) ? [id] : [];
  });
}

function cancelledIds(messages: unknown[]): JsonRpcId[] {
  return messages.flatMap((message) => {
    const { method, params } = (message ?? {}) as { method?: unknown; params?: { requestId?: unknown } };
    return method === "notifications/cancelled" && isJsonRpcId(params?.requestId) ? [params.requestId] : [];
  });
}

function isInitialize(message: unknown): boolean {
  return (message as { method?: unknown } | null)?.method === "initialize";
}

function foreignOrigin(): RelayError {
  return new RelayError("relay_forbidden", "This Origin may not use the relay's MCP endpoint: list it in RELAY_MCP_ORIGINS to allow it.");
}
