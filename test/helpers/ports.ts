/**
 * Loopback ports for tests that must name one before a process listens on it
 * (PORT for a spawned relay, a redis-server's --port): the OS picks a free
 * port, which is released again for the caller to use.
 */
import { createServer } from "node:net";

/** A port nothing listens on right now. */
export async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve, reject) => {
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", resolve);
  });
  const address = probe.address();
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  if (address === null || typeof address === "string") throw new Error("could not pick a free port");
  return address.port;
}
