/**
 * The loopback floor under click → agent, measured in the same run as the
 * relay so that the ratio between the two means something on a shared, noisy
 * machine: the same HTTP client, the same two connections (a held long-poll
 * and a warm pool for the click), a click body of the same size, a server in
 * its own process on the same node binary — and nothing else
 * (bench/floor-server.mjs). When the relay's cycle idles before the click,
 * the floor's idles as long, so both pay the machine's wake-up cost.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import { once } from "node:events";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { expectJson, keepAliveAgent, send } from "./http.js";

export interface Floor {
  /** One cycle: hold a wait, idle `idleMs`, send a click-sized POST; resolves with the milliseconds from the POST to the held reply. */
  cycle(idleMs: number): Promise<number>;
  close(): Promise<void>;
}

export async function startFloor(root: string, clickBytes: number): Promise<Floor> {
  const child: ChildProcess = spawn(process.execPath, [join(root, "bench", "floor-server.mjs")], { stdio: ["ignore", "pipe", "inherit"] });
  const [chunk] = (await Promise.race([
    once(child.stdout!, "data"),
    once(child, "exit").then(() => {
      throw new Error("the floor's server exited before it listened");
    }),
  ])) as [Buffer];
  const base = new URL(`http://127.0.0.1:${chunk.toString("utf8").trim()}`);
  const pool = keepAliveAgent(512);
  const held = keepAliveAgent();
  const body = `payload=${"x".repeat(Math.max(0, clickBytes - 8))}`;
  const headers = { "content-type": "application/x-www-form-urlencoded" };

  return {
    async cycle(idleMs) {
      const id = randomUUID();
      const wait = send(base, { method: "GET", path: `/wait/${id}`, agent: held });
      wait.catch(() => undefined);
      for (let attempt = 0; ; attempt += 1) {
        const reply = expectJson<{ held: boolean }>(await send(base, { method: "GET", path: `/held/${id}`, agent: pool }), 200, "floor GET /held");
        if (reply.held) break;
        if (attempt > 2000) throw new Error("the floor's server never held the wait");
        await sleep(attempt < 3 ? 0 : 2);
      }
      if (idleMs > 0) await sleep(idleMs);
      const started = performance.now();
      const released = send(base, { method: "POST", path: `/release/${id}`, headers, body, agent: pool });
      released.catch(() => undefined);
      const reply = await wait;
      const elapsed = performance.now() - started;
      if (reply.status !== 200 || (await released).status !== 200) throw new Error(`floor cycle failed: HTTP ${reply.status}`);
      return elapsed;
    },
    async close() {
      pool.destroy();
      held.destroy();
      if (child.exitCode === null && child.signalCode === null) {
        child.kill("SIGTERM");
        await once(child, "exit");
      }
    },
  };
}
