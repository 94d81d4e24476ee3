/**
 * Slack's Socket Mode on top of the one Web API stand-in (slack-web-api.ts):
 * apps.connections.open (with an app token, xapp-…) returns a ws:// URL on
 * the same loopback server, where a `ws` WebSocketServer says hello, delivers
 * envelopes and collects acks. Every other method is the Web API stand-in's,
 * so a Socket Mode relay posts, updates and looks people up exactly as an
 * HTTP-mode one does in tests.
 */
import { WebSocketServer, type WebSocket } from "ws";
import { startSlackWebApi, type SlackWebApiStandIn, type StandInOptions } from "./slack-web-api.js";

export interface AckFrame {
  envelope_id: string;
  payload?: unknown;
}

export interface SocketModeStandIn extends SlackWebApiStandIn {
  /** Resolves once a client holds an open connection that has been sent hello. */
  connected(): Promise<void>;
  /** Sends an envelope and resolves with the client's ack frame for it. */
  deliver(type: "interactive" | "events_api", payload: unknown): Promise<AckFrame>;
  /** Number of WebSocket connections currently open. */
  readonly openConnections: number;
  /** Resolves once no client is connected (the client closed its side). */
  disconnected(): Promise<void>;
}

export async function startSocketModeServer(options: StandInOptions = {}): Promise<SocketModeStandIn> {
  const api = await startSlackWebApi(options);
  const sockets = new Set<WebSocket>();
  const acks = new Map<string, (frame: AckFrame) => void>();
  let helloSent: () => void = () => {};
  let ready = new Promise<void>((resolve) => (helloSent = resolve));
  let envelopes = 0;
  const whenEmpty = new Set<() => void>();
  const wsUrl = api.url.replace(/^http:/, "ws:").replace(/\/api\/$/, "/link?ticket=test");

  api.answer("apps.connections.open", (_args, call) =>
    call.authorization?.startsWith("Bearer xapp-") ? { ok: true, url: wsUrl } : { ok: false, error: "invalid_auth" },
  );
  const wss = new WebSocketServer({ server: api.server, path: "/link" });
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

  const closeApi = api.close;
  Object.defineProperty(api, "openConnections", { get: () => sockets.size });
  return Object.assign(api as SlackWebApiStandIn & Pick<SocketModeStandIn, "openConnections">, {
    connected: () => ready,
    disconnected: () => (sockets.size === 0 ? Promise.resolve() : new Promise<void>((resolve) => whenEmpty.add(resolve))),
    deliver(type: "interactive" | "events_api", payload: unknown) {
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
      await closeApi();
    },
  });
}
