/**
 * A small stand-in for the relay's HTTP API on a real loopback socket, for
 * the client library and CLI tests: it keeps requests in memory (surviving
 * `restart()`, as Redis would), holds long-polls, and lets a test answer,
 * expire or cancel a request, or inject faults (`fault`) per call. It serves
 * GET /v1/audit from `auditEvents` (oldest first), paged as the relay pages.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface Call {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingMessage["headers"];
  text: string;
}

export interface Reply {
  status: number;
  json?: unknown;
  /** Raw body, sent instead of `json`. */
  text?: string;
  headers?: Record<string, string>;
  /** Drops the connection without a reply. */
  destroy?: boolean;
}

export interface StoredRequest {
  id: string;
  body: Record<string, unknown>;
  idempotencyKey: string | undefined;
  status: "pending" | "answered" | "expired" | "cancelled" | "failed";
  createdAt: number;
  expiresAt: number;
  decision?: unknown;
  error?: string;
  /** Who answered, as the relay's view shows it. */
  answeredBy?: { id: string; name?: string };
  /** Where the relay posted the message, once it has (set by a test). */
  slack?: { channel: string; ts: string };
}

export const TOKEN = "stand-in-token-0123456789";

/** An audit event as GET /v1/audit shows it (src/protocol/operator.ts). */
export interface StandInAuditEvent {
  id: string;
  /** ISO 8601. */
  at: string;
  type: string;
  requestId: string;
  [field: string]: unknown;
}

export class RelayStandIn {
  readonly calls: Call[] = [];
  readonly requests = new Map<string, StoredRequest>();
  /**
   * Faults: return a Reply to answer a call yourself, "lose" to handle it
   * normally but drop the connection instead of replying, or undefined to
   * let the stand-in answer.
   */
  fault: ((call: Call) => Reply | "lose" | undefined | Promise<Reply | "lose" | undefined>) | undefined;
  /** Answers POST /v1/hooks/claude-code. */
  hook: (call: Call) => Reply | Promise<Reply> = () => ({ status: 404, json: { error: { code: "relay_not_found", message: "no hook" } } });
  /** What GET /v1/audit serves, oldest first. */
  auditEvents: StandInAuditEvent[] = [];
  /** What GET /v1/audit says the cap kept out (its `dropped`), if anything. */
  auditDropped: { events: number; from: string; to: string; reason: string } | undefined;
  /** Seconds before a request expires when its body names no timeout. */
  defaultTimeoutSeconds = 600;
  private server: Server | undefined;
  private port = 0;
  private readonly waiters = new Map<string, Set<() => void>>();
  private createdListeners: Array<(request: StoredRequest) => void> = [];
  private nextId = 1;

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async start(): Promise<this> {
    const server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(this.port, "127.0.0.1", () => resolve());
    });
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
    return this;
  }

  /** Closes the socket and drops every open connection (held long-polls included). */
  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  async restart(downMs = 0): Promise<void> {
    await this.stop();
    if (downMs > 0) await new Promise((resolve) => setTimeout(resolve, downMs));
    await this.start();
  }

  /** Resolves with the next request created. */
  nextRequest(): Promise<StoredRequest> {
    return new Promise((resolve) => this.createdListeners.push(resolve));
  }

  answer(id: string, decision: unknown): void {
    this.end(id, { status: "answered", decision });
  }

  end(id: string, change: Partial<StoredRequest> & { status: StoredRequest["status"] }): void {
    const request = this.requests.get(id);
    if (!request) throw new Error(`no request ${id}`);
    if (request.status === "pending") Object.assign(request, change);
    for (const wake of this.waiters.get(id) ?? []) wake();
  }

  callsTo(method: string, pathPrefix: string): Call[] {
    return this.calls.filter((c) => c.method === method && c.path.startsWith(pathPrefix));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const url = new URL(req.url ?? "/", "http://stand-in");
    const call: Call = {
      method: req.method ?? "GET",
      path: url.pathname,
      query: url.searchParams,
      headers: req.headers,
      text: Buffer.concat(chunks).toString("utf8"),
    };
    this.calls.push(call);
    const fault = await this.fault?.(call);
    const reply = fault === undefined || fault === "lose" ? await this.route(call, res) : fault;
    if (!reply) return;
    if (reply.destroy || fault === "lose") {
      req.socket.destroy();
      return;
    }
    const body = reply.text ?? (reply.json === undefined ? "" : JSON.stringify(reply.json));
    if (res.destroyed) return;
    res.writeHead(reply.status, { "content-type": "application/json", ...reply.headers });
    res.end(body);
  }

  private async route(call: Call, res: ServerResponse): Promise<Reply | undefined> {
    if (call.headers.authorization !== `Bearer ${TOKEN}`) return error(401, "relay_unauthorized", "Send a relay token.");
    if (call.method === "POST" && call.path === "/v1/hooks/claude-code") return this.hook(call);
    if (call.method === "POST" && call.path === "/v1/requests") return this.create(call);
    if (call.method === "GET" && call.path === "/v1/audit") return this.readAudit(call.query);
    const match = /^\/v1\/requests\/([^/]+)$/.exec(call.path);
    const request = match ? this.requests.get(decodeURIComponent(match[1]!)) : undefined;
    if (!request) return error(404, "relay_not_found", "No such request.");
    if (call.method === "DELETE") {
      if (request.status === "answered") return error(409, "relay_already_answered", "Already answered.", request.decision);
      this.end(request.id, { status: "cancelled" });
      return { status: 200, json: view(request) };
    }
    const wait = Number(call.query.get("wait") ?? 0);
    if (request.status === "pending" && wait > 0) await this.hold(request.id, wait * 1000, res);
    return { status: 200, json: view(request) };
  }

  private create(call: Call): Reply {
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(call.text) as Record<string, unknown>;
    } catch {
      return error(400, "relay_invalid_json", "Invalid JSON.");
    }
    const key = typeof call.headers["idempotency-key"] === "string" ? call.headers["idempotency-key"] : undefined;
    const existing = key === undefined ? undefined : [...this.requests.values()].find((r) => r.idempotencyKey === key);
    // As the relay: 200 and the request as it is now, for a key that names one already (201 only for a new one).
    if (existing) return { status: 200, json: view(existing) };
    const now = Date.now();
    const timeout = typeof body.timeoutSeconds === "number" ? body.timeoutSeconds : this.defaultTimeoutSeconds;
    const request: StoredRequest = { id: `r${this.nextId++}`, body, idempotencyKey: key, status: "pending", createdAt: now, expiresAt: now + timeout * 1000 };
    this.requests.set(request.id, request);
    const listeners = this.createdListeners;
    this.createdListeners = [];
    for (const listener of listeners) listener(request);
    return { status: 201, json: created(request) };
  }

  /** As the relay: `since` (ISO or Unix ms), `after` (an id), `requestId`, `limit` (default 100), and `next` when more follow. */
  private readAudit(query: URLSearchParams): Reply {
    const since = query.get("since");
    const sinceMs = since === null ? undefined : /^\d+$/.test(since) ? Number(since) : Date.parse(since);
    const after = query.get("after");
    const start = after === null ? 0 : this.auditEvents.findIndex((e) => e.id === after) + 1;
    const limit = Number(query.get("limit") ?? 100);
    const matching = this.auditEvents
      .slice(start)
      .filter((e) => (sinceMs === undefined || Date.parse(e.at) >= sinceMs) && (query.get("requestId") ?? e.requestId) === e.requestId);
    const events = matching.slice(0, limit);
    const next = matching.length > limit ? { next: events[events.length - 1]!.id } : {};
    return { status: 200, json: { events, ...next, ...(this.auditDropped ? { dropped: this.auditDropped } : {}) } };
  }

  private hold(id: string, ms: number, res: ServerResponse): Promise<void> {
    return new Promise((resolve) => {
      const set = this.waiters.get(id) ?? new Set<() => void>();
      this.waiters.set(id, set);
      const done = () => {
        clearTimeout(timer);
        set.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      set.add(done);
      res.on("close", done);
    });
  }
}

export function error(status: number, code: string, message: string, details?: unknown): Reply {
  return { status, json: { error: { code, message, ...(details === undefined ? {} : { details }) } } };
}

function created(request: StoredRequest) {
  return { id: request.id, status: request.status, expiresAt: new Date(request.expiresAt).toISOString() };
}

export function view(request: StoredRequest) {
  return {
    id: request.id,
    kind: request.body.kind,
    status: request.status,
    createdAt: new Date(request.createdAt).toISOString(),
    expiresAt: new Date(request.expiresAt).toISOString(),
    ...(request.decision === undefined ? {} : { decision: request.decision }),
    ...(request.error === undefined ? {} : { error: request.error }),
    ...(request.answeredBy === undefined ? {} : { answeredBy: request.answeredBy }),
    ...(request.slack === undefined ? {} : { slack: request.slack }),
  };
}
