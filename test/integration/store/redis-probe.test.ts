/**
 * The start's probe of the store (src/store/redis-probe.ts) when nothing
 * answers yet: it asks again until its window passes, then says who did not
 * answer and why (every sentinel's error); a store that comes up within the
 * window is taken. (Refusals, unknown master names and TLS: the start tests
 * redis-auth and redis-sentinel-start.)
 */
import { afterEach, describe, expect, it } from "vitest";
import type { RedisTarget } from "../../../src/config/redis.js";
import { probeRedis } from "../../../src/store/redis-probe.js";
import { freePort } from "../../helpers/ports.js";
import { startRedisServer, type RedisServer } from "../../helpers/redis-server.js";
import { sleep } from "../../helpers/until.js";

let server: RedisServer | undefined;
afterEach(async () => {
  await server?.stop();
  server = undefined;
});

const single = (port: number): RedisTarget => ({ mode: "single", address: { host: "127.0.0.1", port }, db: 0 });

describe("the start's probe of a store that does not answer", () => {
  it("no sentinel answers: once the window has passed, the sentinels are unreachable, each with its error", async () => {
    const ports = [await freePort(), await freePort()];
    const started = Date.now();
    const problem = await probeRedis(
      { mode: "sentinel", sentinels: ports.map((port) => ({ host: "127.0.0.1", port })), name: "relaymaster" },
      { windowMs: 800 },
    );
    expect(Date.now() - started).toBeGreaterThanOrEqual(700);
    // The window as it was, not rounded: 0.8 s.
    expect(problem).toMatchObject({ kind: "unreachable", by: "sentinel", seconds: 0.8 });
    const reason = problem?.kind === "unreachable" ? problem.reason : "";
    for (const port of ports) expect(reason).toContain(`127.0.0.1:${port}: connect ECONNREFUSED 127.0.0.1:${port}`);
  });

  it("one server that does not answer: unreachable once the window has passed", async () => {
    const port = await freePort();
    expect(await probeRedis(single(port), { windowMs: 500 })).toEqual({
      kind: "unreachable",
      by: "server",
      reason: `connect ECONNREFUSED 127.0.0.1:${port}`,
      seconds: 0.5,
    });
  });

  it("a server that comes up within the window is taken", async () => {
    const port = await freePort();
    const probing = probeRedis(single(port), { windowMs: 8_000 });
    await sleep(400);
    server = await startRedisServer(undefined, { port });
    expect(await probing).toBeUndefined();
  });
});
