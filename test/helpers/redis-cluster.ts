/**
 * A Redis Cluster of a test's (or the bench's) own: three masters, no
 * replicas, each a throwaway redis-server (./redis-server.ts: its own free
 * port and temp dir, stopped with the process that started it) with
 * `--cluster-enabled yes` and a cluster bus port of its own, joined with
 * `redis-cli --cluster create`. Ready once every master says
 * cluster_state:ok and knows the other two. The shared Redis on 6379 and the
 * run's throwaway one are never touched. (No vitest import: the bench uses it.)
 */
import { execFile } from "node:child_process";
import { setTimeout as sleep } from "node:timers/promises";
import { promisify } from "node:util";
import { Cluster, Redis } from "ioredis";
import { freePort } from "./ports.js";
import { startRedisServer, type RedisServer } from "./redis-server.js";

const run = promisify(execFile);

export interface RedisCluster {
  masters: RedisServer[];
  /** REDIS_CLUSTER_NODES for a relay: every master, comma-separated redis:// URLs. */
  nodes: string;
  /** The seed nodes as `{ host, port }` (for ioredis's Cluster). */
  seeds: Array<{ host: string; port: number }>;
  /** A Cluster client of the helper's (the caller quits it). */
  connect(): Cluster;
  stop(): Promise<void>;
}

export interface RedisClusterOptions {
  /** More redis-server arguments for every master (e.g. `--user …` for an ACL user). */
  args?: string[];
}

const MASTERS = 3;

/** One cluster-enabled master on a free port, its bus on another. */
async function startNode(args: string[]): Promise<RedisServer> {
  let lastError: unknown;
  for (let attempt = 0; attempt < 3; attempt += 1) {
    const [port, bus] = [await freePort(), await freePort()];
    try {
      return await startRedisServer(undefined, {
        port,
        args: ["--cluster-enabled", "yes", "--cluster-port", String(bus), "--cluster-node-timeout", "2000", ...args],
      });
    } catch (error) {
      lastError = error;
      if (!/address already in use/i.test(String(error))) break;
    }
  }
  throw lastError;
}

export async function startRedisCluster({ args = [] }: RedisClusterOptions = {}): Promise<RedisCluster> {
  const masters: RedisServer[] = [];
  const stop = () => Promise.all(masters.map((master) => master.stop())).then(() => undefined);
  try {
    masters.push(...(await Promise.all(Array.from({ length: MASTERS }, () => startNode(args)))));
    const addresses = masters.map(({ port }) => `127.0.0.1:${port}`);
    await run("redis-cli", ["--cluster", "create", ...addresses, "--cluster-replicas", "0", "--cluster-yes"], { timeout: 20_000 });
    await Promise.all(masters.map(({ port }) => untilReady(port)));
  } catch (error) {
    await stop();
    throw error;
  }
  const seeds = masters.map(({ port }) => ({ host: "127.0.0.1", port }));
  return {
    masters,
    nodes: masters.map(({ url }) => url).join(","),
    seeds,
    connect: () => new Cluster(seeds, { redisOptions: { maxRetriesPerRequest: 2 } }),
    stop,
  };
}

/** Resolves once the master on `port` says the cluster is ok and knows every master. */
async function untilReady(port: number): Promise<void> {
  const redis = new Redis({ port, host: "127.0.0.1", maxRetriesPerRequest: 1 });
  const deadline = Date.now() + 20_000;
  try {
    for (;;) {
      const info = String(await redis.call("CLUSTER", "INFO"));
      const known = String(await redis.call("CLUSTER", "NODES"))
        .trim()
        .split("\n").length;
      if (/cluster_state:ok/.test(info) && known === MASTERS) return;
      if (Date.now() > deadline) throw new Error(`the cluster on port ${port} was not ok within 20 s: ${info.trim()}`);
      await sleep(50);
    }
  } finally {
    redis.disconnect();
  }
}
