/**
 * A TCP proxy on loopback that cuts any connection idle for `idleMs` (no byte
 * either way), as load balancers do (AWS ALB, nginx and others default to
 * 60 s): both sides are destroyed, so the client sees its request fail and
 * the server sees the caller leave. It keeps what the server sent back on each
 * connection, so a test can see the bytes that kept a reply alive.
 *
 * Hand-written: a few lines over node:net; a real proxy would be one more
 * process to install and start.
 */
import { createConnection, createServer, type AddressInfo, type Socket } from "node:net";

export interface IdleProxy {
  /** e.g. http://127.0.0.1:41234 */
  url: string;
  /** Connections cut for idleness so far. */
  readonly cuts: number;
  /** What the server sent back, per connection, in the order they opened. */
  readonly replies: readonly string[];
  close(): Promise<void>;
}

export async function startIdleProxy(target: string, idleMs: number): Promise<IdleProxy> {
  const { hostname, port } = new URL(target);
  const sockets = new Set<Socket>();
  const replies: string[] = [];
  let cuts = 0;
  const server = createServer((client) => {
    const upstream = createConnection({ host: hostname, port: Number(port) });
    const index = replies.push("") - 1;
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on("close", () => sockets.delete(socket));
      socket.on("error", () => undefined);
    }
    let timer = setTimeout(cut, idleMs);
    function cut() {
      cuts += 1;
      client.destroy();
      upstream.destroy();
    }
    const active = () => {
      clearTimeout(timer);
      timer = setTimeout(cut, idleMs);
    };
    client.on("data", (chunk: Buffer) => {
      active();
      upstream.write(chunk);
    });
    upstream.on("data", (chunk: Buffer) => {
      active();
      replies[index] += chunk.toString("latin1");
      client.write(chunk);
    });
    client.on("close", () => {
      clearTimeout(timer);
      upstream.destroy();
    });
    upstream.on("close", () => {
      clearTimeout(timer);
      client.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${address.port}`,
    get cuts() {
      return cuts;
    },
    replies,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
