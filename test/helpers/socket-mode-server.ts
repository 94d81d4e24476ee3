/**
 * A local stand-in for Slack's Socket Mode: one loopback HTTP server that
 * answers Web API calls (apps.connections.open returns a ws:// URL on the
 * same server, other methods are answered from `api`) and a `ws`
 * WebSocketServer that says hello, delivers envelopes and collects acks.
 */
import { once } from "node:events";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { WebSocketServer, type WebSocket } from "ws";

export interface StandInCall {
  method: string;
  args: Record<string, string>;
  authorization: string | undefined;
}

export interface AckFrame {
  envelope_id: string;
  payload?: unknown;
}

export interface SocketModeStandIn {
  /** Web API base URL ("http://127.0.0.1:<port>/api/"). */
  apiUrl: string;
  calls: StandInCall[];
  /** Resolves once a client holds an open connection that has been sent hello. */
  connected(): Promise<void>;
  /** Sends an envelope and resolves with the client's ack frame for it. */
  deliver(type: "interactive" | "events_api", payload: unknown): Promise<AckFrame>;
  /** Number of WebSocket connections currently open. */
  readonly openConnections: number;
  /** Resolves once no client is connected (the client closed its side). */
  disconnected(): Promise<void>;
  close(): Promise<void>;
}

export type ApiHandler = (args: Record<string, string>) => Record<string, unknown>;

export async function startSocketModeServer(api: Record<string, ApiHandler> = {}): Promise<SocketModeStandIn> {
  const calls: StandInCall[] = [];
  const sockets = new Set<WebSocket>();
  const acks = new Map<string, (frame: AckFrame) => void>();
  let helloSent: () => void = () => {};
  let ready = new Promise<void>((resolve) => (helloSent = resolve));
  let envelopes = 0;
  const whenEmpty = new Set<() => void>();
  let port = 0;

  const server = createServer((req, res) => {
    void readBody(req).then((body) => {
      const method = (req.url ?? "").replace(/^\/api\//, "").split("?")[0] ?? "";
      const args = Object.fromEntries(new URLSearchParams(body));
      calls.push({ method, args, authorization: req.headers.authorization });
      const reply =
        method === "apps.connections.open"
          ? req.headers.authorization?.startsWith("Bearer xapp-")
            ? { ok: true, url: `ws://127.0.0.1:${port}/link?ticket=test` }
            : { ok: false, error: "invalid_auth" }
          : (api[method]?.(args) ?? { ok: false, error: "unknown_method" });
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(reply));
    });
  });
  const wss = new WebSocketServer({ server, path: "/link" });
  wss.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => {
      sockets.delete(socket);
      if (sockets.size > 0) return;
      ready = new Promise<void>((resolve) => (helloSent = resolve));
      whenEmpty.forEach((resolve) => resolve());
      whenEmpty.clear();
    });
    socket.on("message", (data) => {
      const frame = JSON.parse(String(data)) as AckFrame;
      acks.get(frame.envelope_id)?.(frame);
      acks.delete(frame.envelope_id);
    });
    socket.send(JSON.stringify({ type: "hello", num_connections: 1, connection_info: { app_id: "A0RELAY" } }));
    helloSent();
  });

  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  port = (server.address() as AddressInfo).port;

  return {
    apiUrl: `http://127.0.0.1:${port}/api/`,
    calls,
    connected: () => ready,
    get openConnections() {
      return sockets.size;
    },
    disconnected: () => (sockets.size === 0 ? Promise.resolve() : new Promise<void>((resolve) => whenEmpty.add(resolve))),
    deliver(type, payload) {
      const socket = [...sockets][0];
      if (!socket) return Promise.reject(new Error("no Socket Mode client is connected"));
      envelopes += 1;
      const envelopeId = `env-${envelopes}`;
      const acked = new Promise<AckFrame>((resolve) => acks.set(envelopeId, resolve));
      socket.send(JSON.stringify({ envelope_id: envelopeId, type, payload, accepts_response_payload: type === "interactive" }));
      return acked;
    },
    async close() {
      for (const socket of sockets) socket.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}
