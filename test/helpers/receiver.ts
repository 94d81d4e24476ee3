/**
 * A real HTTP server on 127.0.0.1 that stands in for an agent's callback
 * receiver: it records every POST (path, headers, raw body) and answers what
 * the test says, so callback tests run over real sockets with no fetch mocks.
 */
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface Hit {
  path: string;
  headers: IncomingHttpHeaders;
  /** The raw body, exactly as received. */
  body: string;
  /** Date.now() when it arrived. */
  at: number;
}

/** What to answer: a status (with optional headers, after `delayMs`), or "hang" to never answer. */
export type Reply = { status: number; headers?: Record<string, string>; delayMs?: number } | "hang";

export interface Receiver {
  /** Base URL, e.g. http://127.0.0.1:41234 */
  url: string;
  hits: Hit[];
  /** Hits on one path. */
  on(path: string): Hit[];
  close(): Promise<void>;
}

/** Starts a receiver; `reply` picks the answer to each hit (default 200). */
export async function startReceiver(reply: (hit: Hit, index: number) => Reply = () => ({ status: 200 })): Promise<Receiver> {
  const hits: Hit[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const hit: Hit = { path: req.url ?? "", headers: req.headers, body: Buffer.concat(chunks).toString("utf8"), at: Date.now() };
      hits.push(hit);
      const answer = reply(hit, hits.length - 1);
      if (answer === "hang") return;
      setTimeout(() => {
        res.writeHead(answer.status, { "content-type": "text/plain", ...answer.headers });
        res.end("ok");
      }, answer.delayMs ?? 0);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    hits,
    on: (path) => hits.filter((hit) => hit.path === path),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A loopback URL nothing listens on (the port was just freed). */
export async function closedPortUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}
