/**
 * A Redis Cluster of a test's (or the bench's) own: three masters, no
 * replicas, each a throwaway redis-server (./redis-server.ts: its own free
 * port and temp dir, stopped with the process that started it) with
 * `--cluster-enabled yes` and a cluster bus port of its own, joined with
 * `redis-cli --cluster create`. Ready once every master says
 * cluster_state:ok and knows the other two. With `persist`, each master
 * keeps its data and its cluster config in a dir of its own (written
 * through on every command), so that one killed can be started again on its
 * ports (`restart`) and rejoin with its slots and data. With `tls`, the
 * masters speak TLS only, the cluster bus included. The shared Redis on 6379 and the
 * run's throwaway one are never touched. (No vitest import: the bench uses it.)
 */
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { promisify } from "node:util";
import { Cluster, Redis, type RedisOptions } from "ioredis";
import type { Certificates } from "./certificates.js";
import { freePort } from "./ports.js";
import { startRedisServer, type RedisServer } from "./redis-server.js";

const run = promisify(execFile);

export interface RedisCluster {
  masters: RedisServer[];
  /** REDIS_CLUSTER_NODES for a relay: every master, comma-separated redis:// URLs (rediss:// with `tls`). */
  nodes: string;
  /** The seed nodes as `{ host, port }` (for ioredis's Cluster). */
  seeds: Array<{ host: string; port: number }>;
  /** A Cluster client of the helper's (the caller quits it). */
  connect(): Cluster;
  /** Starts master `index` again (after its kill()) on its ports and dir (needs `persist`); resolves once the cluster is ok again. */
  restart(index: number): Promise<void>;
  stop(): Promise<void>;
}

export interface RedisClusterOptions {
  /** More redis-server arguments for every master (e.g. `--user …` for an ACL user). */
  args?: string[];
  /** Keep each master's data and cluster config in a dir of its own, for restart(). */
  persist?: boolean;
  /** TLS only (clients and the cluster bus), with this certificate (it must name IP:127.0.0.1: the nodes are given out by address). */
  tls?: Certificates;
}

/** Where one master listens and keeps its files. */
interface NodeSetup {
  port: number;
  bus: number;
  dataDir?: string;
}

const MASTERS = 3;

/** The redis-server arguments that make a master speak TLS only, on `port`. */
function tlsArgs(tls: Certificates, port: number): string[] {
  const files = ["--tls-cert-file", tls.certFile, "--tls-key-file", tls.keyFile, "--tls-ca-cert-file", tls.caFile];
  return ["--port", "0", "--tls-port", String(port), ...files, "--tls-auth-clients", "no", "--tls-cluster", "yes"];
}

/** One cluster-enabled master on `setup`'s ports (and dir). */
function startNode({ port, bus, dataDir }: NodeSetup, args: string[], tls: Certificates | undefined): Promise<RedisServer> {
  return startRedisServer(undefined, {
    port,
    ...(dataDir === undefined ? {} : { dataDir }),
    args: [...(tls ? tlsArgs(tls, port) : []), "--cluster-enabled", "yes", "--cluster-port", String(bus), "--cluster-node-timeout", "2000", ...args],
  });
}

/** One cluster-enabled master on a free port, its bus on another (others again when one was taken meanwhile). */
async function startFreshNode(args: string[], persist: boolean, tls: Certificates | undefined): Promise<{ server: RedisServer; setup: NodeSetup }> {
  let lastError: unknown;
  for (let attempt = 0; attempt < 3; attempt += 1) {
    const setup: NodeSetup = { port: await freePort(), bus: await freePort(), ...(persist ? { dataDir: mkdtempSync(join(tmpdir(), "relay-cluster-")) } : {}) };
    try {
      return { server: await startNode(setup, args, tls), setup };
    } catch (error) {
      if (setup.dataDir) rmSync(setup.dataDir, { recursive: true, force: true });
      lastError = error;
      if (!/address already in use/i.test(String(error))) break;
    }
  }
  throw lastError;
}

export async function startRedisCluster({ args = [], persist = false, tls }: RedisClusterOptions = {}): Promise<RedisCluster> {
  const clientTls = tls ? { tls: { ca: readFileSync(tls.caFile) } } : {};
  const masters: RedisServer[] = [];
  const setups: NodeSetup[] = [];
  const stop = async () => {
    await Promise.all(masters.map((master) => master.stop()));
    for (const { dataDir } of setups) if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    const started = await Promise.allSettled(Array.from({ length: MASTERS }, () => startFreshNode(args, persist, tls)));
    for (const result of started) {
      if (result.status === "fulfilled") {
        masters.push(result.value.server);
        setups.push(result.value.setup);
      }
    }
    const failed = started.find((result) => result.status === "rejected");
    if (failed) throw failed.reason;
    const addresses = masters.map(({ port }) => `127.0.0.1:${port}`);
    const cliTls = tls ? ["--tls", "--cacert", tls.caFile] : [];
    await run("redis-cli", [...cliTls, "--cluster", "create", ...addresses, "--cluster-replicas", "0", "--cluster-yes"], { timeout: 20_000 });
    await Promise.all(masters.map(({ port }) => untilReady(port, clientTls)));
  } catch (error) {
    await stop();
    throw error;
  }
  const seeds = masters.map(({ port }) => ({ host: "127.0.0.1", port }));
  return {
    masters,
    nodes: masters.map(({ port }) => `${tls ? "rediss" : "redis"}://127.0.0.1:${port}`).join(","),
    seeds,
    connect: () => new Cluster(seeds, { redisOptions: { maxRetriesPerRequest: 2, ...clientTls } }),
    async restart(index) {
      const setup = setups[index]!;
      if (!setup.dataDir) throw new Error("restart() needs a cluster started with persist");
      masters[index] = await startNode(setup, args, tls);
      await Promise.all(masters.map(({ port }) => untilReady(port, clientTls)));
    },
    stop,
  };
}

/** Resolves once the master on `port` says the cluster is ok and knows every master. */
async function untilReady(port: number, options: RedisOptions): Promise<void> {
  const redis = new Redis({ port, host: "127.0.0.1", maxRetriesPerRequest: 1, ...options });
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
