/**
 * A Redis Cluster of a test's (or the bench's) own: three masters (and,
 * with `replicas`, one replica each), each a throwaway redis-server (./redis-server.ts: its own free
 * port and temp dir, stopped with the process that started it) with
 * `--cluster-enabled yes` and a cluster bus port of its own, joined with
 * `redis-cli --cluster create`. Ready once every master says
 * cluster_state:ok and knows every other node. With `replicas`, `failover`
 * kills a master (SIGKILL) and has its replica take over with CLUSTER
 * FAILOVER FORCE, as an operator (or the cluster itself, a node timeout
 * later) would. With `persist`, each master
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
  /** With `replicas`: replicas[i] replicates masters[i]; after failover(i) the two swap places (the old master is dead). */
  replicas: RedisServer[];
  /** REDIS_CLUSTER_NODES for a relay: every master, comma-separated redis:// URLs (rediss:// with `tls`). */
  nodes: string;
  /** The seed nodes as `{ host, port }` (for ioredis's Cluster). */
  seeds: Array<{ host: string; port: number }>;
  /** A Cluster client of the helper's (the caller quits it). */
  connect(): Cluster;
  /** Starts master `index` again (after its kill()) on its ports and dir (needs `persist`); resolves once the cluster is ok again. */
  restart(index: number): Promise<void>;
  /**
   * Waits until replicas[index] has every write masters[index] acknowledged, SIGKILLs the master, and
   * promotes the replica (CLUSTER FAILOVER FORCE); resolves once every live node says the cluster is ok
   * with the replica serving the slots (needs `replicas`).
   */
  failover(index: number): Promise<void>;
  stop(): Promise<void>;
}

export interface RedisClusterOptions {
  /** More redis-server arguments for every master (e.g. `--user …` for an ACL user). */
  args?: string[];
  /** Keep each master's data and cluster config in a dir of its own, for restart(). */
  persist?: boolean;
  /** TLS only (clients and the cluster bus), with this certificate (it must name IP:127.0.0.1: the nodes are given out by address). */
  tls?: Certificates;
  /** One replica per master (six nodes). */
  replicas?: boolean;
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

export async function startRedisCluster({ args = [], persist = false, tls, replicas: withReplicas = false }: RedisClusterOptions = {}): Promise<RedisCluster> {
  const clientTls = tls ? { tls: { ca: readFileSync(tls.caFile) } } : {};
  const total = withReplicas ? MASTERS * 2 : MASTERS;
  const servers: RedisServer[] = [];
  const setups: NodeSetup[] = [];
  const masters: RedisServer[] = [];
  const replicas: RedisServer[] = [];
  const stop = async () => {
    await Promise.all(servers.map((server) => server.stop()));
    for (const { dataDir } of setups) if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    const started = await Promise.allSettled(Array.from({ length: total }, () => startFreshNode(args, persist, tls)));
    for (const result of started) {
      if (result.status === "fulfilled") {
        servers.push(result.value.server);
        setups.push(result.value.setup);
      }
    }
    const failed = started.find((result) => result.status === "rejected");
    if (failed) throw failed.reason;
    const addresses = servers.map(({ port }) => `127.0.0.1:${port}`);
    const cliTls = tls ? ["--tls", "--cacert", tls.caFile] : [];
    await run("redis-cli", [...cliTls, "--cluster", "create", ...addresses, "--cluster-replicas", withReplicas ? "1" : "0", "--cluster-yes"], {
      timeout: 20_000,
    });
    await Promise.all(servers.map(({ port }) => untilReady(port, clientTls, total)));
    // redis-cli makes the first nodes given the masters; which replica follows which master, the nodes say.
    masters.push(...servers.slice(0, MASTERS));
    if (withReplicas) replicas.push(...(await pairReplicas(masters, servers.slice(MASTERS), clientTls)));
  } catch (error) {
    await stop();
    throw error;
  }
  const seeds = masters.map(({ port }) => ({ host: "127.0.0.1", port }));
  return {
    masters,
    replicas,
    nodes: masters.map(({ port }) => `${tls ? "rediss" : "redis"}://127.0.0.1:${port}`).join(","),
    seeds,
    connect: () => new Cluster(seeds, { redisOptions: { maxRetriesPerRequest: 2, ...clientTls } }),
    async restart(index) {
      const setup = setups[index]!;
      if (!setup.dataDir) throw new Error("restart() needs a cluster started with persist");
      masters[index] = await startNode(setup, args, tls);
      servers[index] = masters[index];
      await Promise.all(masters.map(({ port }) => untilReady(port, clientTls, total)));
    },
    async failover(index) {
      const [master, replica] = [masters[index]!, replicas[index]];
      if (!replica) throw new Error("failover() needs a cluster started with replicas");
      await untilReplicated(master.port, replica.port, clientTls);
      await master.kill();
      await withNode(replica.port, clientTls, (redis) => redis.call("CLUSTER", "FAILOVER", "FORCE"));
      const live = servers.filter((server) => server !== master);
      await Promise.all(live.map(({ port }) => untilReady(port, clientTls, total, replica.port)));
      [masters[index], replicas[index]] = [replica, master];
    },
    stop,
  };
}

/**
 * Resolves once the node on `port` says the cluster is ok and knows all `total` nodes (and, with
 * `master`, sees the node on that port as a master).
 */
async function untilReady(port: number, options: RedisOptions, total: number, master?: number): Promise<void> {
  const deadline = Date.now() + 20_000;
  await withNode(port, options, async (redis) => {
    for (;;) {
      const info = String(await redis.call("CLUSTER", "INFO"));
      const nodes = String(await redis.call("CLUSTER", "NODES"))
        .trim()
        .split("\n");
      const promoted = master === undefined || nodes.some((line) => line.includes(`127.0.0.1:${master}@`) && /\bmaster\b/.test(line));
      if (/cluster_state:ok/.test(info) && nodes.length === total && promoted) return;
      if (Date.now() > deadline) throw new Error(`the cluster on port ${port} was not ok within 20 s: ${info.trim()}`);
      await sleep(50);
    }
  });
}

/** For each master, the replica that follows it (CLUSTER NODES: "<id> <addr> slave <master id> …"), once each has one. */
async function pairReplicas(masters: RedisServer[], others: RedisServer[], options: RedisOptions): Promise<RedisServer[]> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const lines = await withNode(masters[0]!.port, options, async (redis) =>
      String(await redis.call("CLUSTER", "NODES"))
        .trim()
        .split("\n"),
    );
    const idOf = (port: number) => lines.find((line) => line.includes(`127.0.0.1:${port}@`))?.split(" ")[0];
    const follows = (replica: RedisServer, master: RedisServer) =>
      lines.some((line) => line.includes(`127.0.0.1:${replica.port}@`) && line.includes(` slave ${idOf(master.port)} `));
    const pairs = masters.map((master) => others.find((other) => follows(other, master)));
    if (pairs.every((replica) => replica !== undefined)) return pairs as RedisServer[];
    if (Date.now() > deadline) throw new Error(`not every master has a replica within 20 s:\n${lines.join("\n")}`);
    await sleep(100);
  }
}

/** Resolves once the replica on `replicaPort` has processed everything the master on `masterPort` has. */
async function untilReplicated(masterPort: number, replicaPort: number, options: RedisOptions): Promise<void> {
  const offset = (text: string, field: string) => Number(new RegExp(`^${field}:(\\d+)`, "m").exec(text)?.[1] ?? -1);
  const target = await withNode(masterPort, options, async (redis) => offset(await redis.info("replication"), "master_repl_offset"));
  const deadline = Date.now() + 20_000;
  await withNode(replicaPort, options, async (redis) => {
    while (offset(await redis.info("replication"), "slave_repl_offset") < target) {
      if (Date.now() > deadline) throw new Error(`the replica on port ${replicaPort} did not catch up within 20 s`);
      await sleep(50);
    }
  });
}

/** Runs `task` with a plain connection to one node, then closes it. */
async function withNode<T>(port: number, options: RedisOptions, task: (redis: Redis) => Promise<T>): Promise<T> {
  const redis = new Redis({ port, host: "127.0.0.1", maxRetriesPerRequest: 1, ...options });
  try {
    return await task(redis);
  } finally {
    redis.disconnect();
  }
}
