/**
 * A lean HTTP/1.1 client for the benchmark on node:http keep-alive agents:
 * fetch adds its own overhead and pooling rules, and the bench must control
 * which connection each call uses (a long-poll holds its own; clicks reuse a
 * warm one, so no TCP handshake is timed).
 */
import { Agent, request } from "node:http";

export interface HttpReply {
  status: number;
  body: string;
}

export interface HttpCall {
  method: string;
  /** Path and query, e.g. "/v1/requests/abc?wait=30". */
  path: string;
  headers?: Record<string, string | number>;
  body?: string;
  agent: Agent;
}

/** A keep-alive agent; `maxSockets` bounds the connections it opens to one host. */
export function keepAliveAgent(maxSockets = Infinity): Agent {
  return new Agent({ keepAlive: true, maxSockets, maxFreeSockets: Math.min(maxSockets, 20_000), scheduling: "lifo" });
}

/** Sends one request to `base` (http://host:port) and resolves when the whole response body has arrived. */
export function send(base: URL, call: HttpCall): Promise<HttpReply> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { ...call.headers };
    if (call.body !== undefined) headers["content-length"] = Buffer.byteLength(call.body);
    const req = request({ hostname: base.hostname, port: base.port, method: call.method, path: call.path, headers, agent: call.agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(call.body);
  });
}

/** The JSON body of a reply with the expected status, or an error that shows what came instead. */
export function expectJson<T>(reply: HttpReply, status: number | number[], what: string): T {
  const wanted = Array.isArray(status) ? status : [status];
  if (!wanted.includes(reply.status)) throw new Error(`${what}: HTTP ${reply.status} ${reply.body.slice(0, 300)}`);
  return JSON.parse(reply.body) as T;
}
