/**
 * Everything the soak runs against, and the faults it does to it: a
 * redis-server of its own (own port and data dir, append-only so a restart
 * keeps what it acknowledged; the shared 6379 is never touched), two relay
 * instances started as `npm start` runs them (bench/relay-process.ts) on
 * fixed ports so they come back where clients and proxies know them, an
 * idle-cutting proxy in front of each (test/helpers/idle-proxy.ts), and a
 * load balancer's choice for each call: a random instance that is up and
 * not draining. Each relay process is sampled every few seconds: resident
 * memory and open file descriptors from /proc, heap from its /metrics.
 */
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { startRelayProcess, type RelayProcess } from "../relay-process.js";
import { startIdleProxy, type IdleProxy } from "../../test/helpers/idle-proxy.js";
import { freePort } from "../../test/helpers/ports.js";
import { startRedisServer, type RedisServer } from "../../test/helpers/redis-server.js";
import type { FaultWindow, Sample } from "./history.js";

export interface Instance {
  name: string;
  port: number;
  lives: number;
  process?: RelayProcess;
  /** In the balancer's rotation: started, healthy, not draining. */
  up: boolean;
  /** The fault being done to it (a SIGKILL, a restart): the next one waits for it. */
  busy: Promise<void>;
  proxy: IdleProxy;
}

export interface WorldOptions {
  root: string;
  /** The relays' environment, REDIS_URL excepted (set here). */
  env: Record<string, string>;
  /** The proxies cut connections idle this long. */
  idleMs: number;
  random: () => number;
  /** Write each relay's output to <logDir>/<instance>.log. */
  logDir?: string;
}

export interface World {
  instances: Instance[];
  redisUrl: string;
  samples: Sample[];
  faults: FaultWindow[];
  /** A base URL for one call: a random instance in rotation, directly or through its idle proxy. */
  route(viaProxy: boolean): URL | undefined;
  /** SIGKILL one instance, start it again after `downMs`. */
  sigkill(index: number, downMs: number): Promise<void>;
  /** SIGTERM each instance in turn, waiting for it to come back before the next. */
  rollingRestart(): Promise<void>;
  /** Stop Redis (SIGKILL), start it again on its port and data after `downMs`. */
  restartRedis(downMs: number): Promise<void>;
  stop(): Promise<void>;
}

export async function startWorld({ root, env, idleMs, random, logDir }: WorldOptions): Promise<World> {
  const dataDir = mkdtempSync(join(tmpdir(), "relay-soak-redis-"));
  const redisPort = await freePort();
  let redis: RedisServer = await startRedisServer(undefined, { port: redisPort, dataDir });
  const redisUrl = redis.url;
  const samples: Sample[] = [];
  const faults: FaultWindow[] = [];
  const instances: Instance[] = [];
  for (const name of ["a", "b"]) {
    const port = await freePort();
    instances.push({ name, port, lives: 0, up: false, busy: Promise.resolve(), proxy: await startIdleProxy(`http://127.0.0.1:${port}`, idleMs) });
  }

  let allDownSince: number | undefined;
  /** Takes `instance` in or out of rotation, and records the times none is in it. */
  function setUp(instance: Instance, up: boolean): void {
    instance.up = up;
    const anyUp = instances.some((i) => i.up);
    if (!anyUp && allDownSince === undefined) allDownSince = Date.now();
    if (anyUp && allDownSince !== undefined) {
      faults.push({ kind: "all-down", from: allDownSince, to: Date.now() });
      allDownSince = undefined;
    }
  }

  /** Runs `fault` on `instance` once the fault before it on that instance is over. */
  function exclusively(instance: Instance, fault: () => Promise<void>): Promise<void> {
    const done = instance.busy.then(fault);
    instance.busy = done.catch(() => undefined);
    return done;
  }

  async function start(instance: Instance): Promise<void> {
    for (let attempt = 1; ; attempt += 1) {
      try {
        const logFile = logDir === undefined ? {} : { logFile: join(logDir, `${instance.name}.log`) };
        instance.process = await startRelayProcess({ root, env: { ...env, REDIS_URL: redisUrl }, port: instance.port, ...logFile });
        break;
      } catch (error) {
        // The port may linger for a moment after a kill; a relay that cannot start at all fails the run.
        if (attempt >= 5) throw error;
        await sleep(1000);
      }
    }
    instance.lives += 1;
    setUp(instance, true);
  }
  await Promise.all(instances.map(start));

  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      await Promise.all(instances.map((instance) => sample(instance, samples)));
      await sleep(5000);
    }
  })();

  const world: World = {
    instances,
    redisUrl,
    samples,
    faults,
    route(viaProxy) {
      const live = instances.filter((i) => i.up);
      const instance = live[Math.floor(random() * live.length)];
      if (!instance) return undefined;
      return new URL(viaProxy ? instance.proxy.url : `http://127.0.0.1:${instance.port}`);
    },
    async sigkill(index, downMs) {
      const instance = instances[index]!;
      await exclusively(instance, async () => {
        const from = Date.now();
        setUp(instance, false);
        if (instance.process) {
          process.kill(instance.process.pid, "SIGKILL");
          await instance.process.stop();
        }
        await sleep(downMs);
        await start(instance);
        faults.push({ kind: "sigkill", from, to: Date.now(), detail: instance.name });
      });
    },
    async rollingRestart() {
      const from = Date.now();
      for (const instance of instances) {
        await exclusively(instance, async () => {
          setUp(instance, false);
          await instance.process?.stop();
          await start(instance);
        });
      }
      faults.push({ kind: "sigterm-roll", from, to: Date.now() });
    },
    async restartRedis(downMs) {
      const from = Date.now();
      await redis.kill();
      await sleep(downMs);
      redis = await startRedisServer(undefined, { port: redisPort, dataDir });
      faults.push({ kind: "redis-restart", from, to: Date.now() });
    },
    async stop() {
      sampling = false;
      await sampler;
      await Promise.all(instances.map(async (instance) => (await instance.process?.stop(), await instance.proxy.close())));
      await redis.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  return world;
}

async function sample(instance: Instance, samples: Sample[]): Promise<void> {
  const relay = instance.process;
  if (!relay || !instance.up) return;
  try {
    const heap = await relay.heap();
    samples.push({
      life: `${instance.name}#${instance.lives}`,
      at: Date.now(),
      rssBytes: relay.rss(),
      heapUsedBytes: heap.heapUsed,
      fds: readdirSync(`/proc/${relay.pid}/fd`).length,
    });
  } catch {
    // Stopped between the check and the reading: no sample.
  }
}

/** The relay's last log lines, for a failing run. */
export function tail(instance: Instance): string {
  return instance.process?.output() ?? "";
}
