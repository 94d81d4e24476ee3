/**
 * A Sentinel group of a test's own: a master, its replica and one sentinel
 * (quorum 1), each a throwaway redis-server (./redis-server.ts) on its own
 * free port and temp dir, with timings short enough that a failover takes a
 * second or two (the master is down after 400 ms without an answer; a failed
 * failover is tried again after 2 s); with `tls`, all three speak TLS only
 * (replication and the sentinel's links included). The shared Redis on 6379
 * and the run's throwaway one are never touched.
 */
import { readFileSync } from "node:fs";
import { Redis, type RedisOptions } from "ioredis";
import type { Certificates } from "./certificates.js";
import { freePort } from "./ports.js";
import { startRedisServer, type RedisServer, type RedisServerOptions } from "./redis-server.js";
import { sleep, until } from "./until.js";

export const MASTER_NAME = "relaymaster";

export interface SentinelGroupOptions {
  /** More arguments for the master and the replica (e.g. `--requirepass`, `--user`, `--masterauth`). */
  serverArgs?: string[];
  /** More lines for the sentinel's config (e.g. `requirepass`, `sentinel auth-pass <name> <password>`). */
  sentinelConfig?: string[];
  /** How the helper signs in to the master and the replica. */
  serverAuth?: Pick<RedisOptions, "username" | "password">;
  /** How the helper signs in to the sentinel. */
  sentinelAuth?: Pick<RedisOptions, "username" | "password">;
  /** TLS only, with this certificate (it must name IP:127.0.0.1: the sentinel names the master by address). */
  tls?: Certificates;
}

export interface SentinelGroup {
  master: RedisServer;
  replica: RedisServer;
  sentinel: RedisServer;
  /** REDIS_SENTINELS and REDIS_SENTINEL_NAME for a relay. */
  env: Record<string, string>;
  /** The port of the server the sentinel names as master now. */
  masterPort(): Promise<number>;
  /** Resolves once the replica holds every write the master has acknowledged. */
  replicated(): Promise<void>;
  /** A connection of the helper's to the server on `port` (the caller quits it). */
  connect(port: number): Redis;
  stop(): Promise<void>;
}

export async function startSentinelGroup(options: SentinelGroupOptions = {}): Promise<SentinelGroup> {
  const { serverArgs = [], sentinelConfig = [], serverAuth = {}, sentinelAuth = {}, tls } = options;
  const stops: Array<() => Promise<void>> = [];
  const stopAll = () => Promise.all(stops.splice(0).map((stop) => stop())).then(() => undefined);
  const clientTls = tls ? { tls: { ca: readFileSync(tls.caFile) } } : {};
  const connect = (port: number) => new Redis({ port, host: "127.0.0.1", maxRetriesPerRequest: 1, ...clientTls, ...serverAuth });
  /** A server on a port of its own; with TLS, on the TLS port only. */
  const start = async (args: string[], more: RedisServerOptions = {}) => {
    if (!tls) return startRedisServer(undefined, { ...more, args });
    const port = await freePort();
    const files = ["--tls-cert-file", tls.certFile, "--tls-key-file", tls.keyFile, "--tls-ca-cert-file", tls.caFile];
    const tlsArgs = ["--port", "0", "--tls-port", String(port), ...files, "--tls-auth-clients", "no", "--tls-replication", "yes"];
    return startRedisServer(undefined, { ...more, port, args: [...tlsArgs, ...args] });
  };
  // Each look opens a connection of its own (the server may be the one a test kills), so looks are 25 ms apart.
  const info = async (port: number, field: string) => {
    await sleep(25);
    const redis = connect(port);
    try {
      return new RegExp(`^${field}:(.*)$`, "m").exec(await redis.info("replication"))?.[1]?.trim();
    } finally {
      redis.disconnect();
    }
  };
  try {
    // DEBUG SLEEP plays a hung master; a replica syncs at once, not after the 5 s Redis waits for more replicas by default.
    const common = ["--enable-debug-command", "yes", "--repl-diskless-sync-delay", "0", ...serverArgs];
    const master = await start(common);
    stops.push(master.stop);
    const replica = await start([...common, "--replicaof", "127.0.0.1", String(master.port)]);
    stops.push(replica.stop);
    await until(async () => (await info(replica.port, "master_link_status")) === "up", 10_000, "the replica to sync");
    const config = [
      `sentinel monitor ${MASTER_NAME} 127.0.0.1 ${master.port} 1`,
      `sentinel down-after-milliseconds ${MASTER_NAME} 400`,
      `sentinel failover-timeout ${MASTER_NAME} 2000`,
      ...sentinelConfig,
    ];
    const sentinel = await start([], { sentinel: true, config: `${config.join("\n")}\n` });
    stops.push(sentinel.stop);
    const sentinelClient = new Redis({ port: sentinel.port, host: "127.0.0.1", maxRetriesPerRequest: 1, ...clientTls, ...sentinelAuth });
    stops.push(async () => sentinelClient.disconnect());
    const sentinelSays = async (...args: string[]) => {
      await sleep(25);
      return sentinelClient.call("SENTINEL", ...args);
    };
    await until(async () => ((await sentinelSays("REPLICAS", MASTER_NAME)) as unknown[]).length === 1, 10_000, "the sentinel to find the replica");
    const masterPort = async () => Number(((await sentinelSays("GET-MASTER-ADDR-BY-NAME", MASTER_NAME)) as string[])[1]);

    return {
      master,
      replica,
      sentinel,
      env: { REDIS_SENTINELS: `127.0.0.1:${sentinel.port}`, REDIS_SENTINEL_NAME: MASTER_NAME },
      masterPort,
      async replicated() {
        const offset = await info(master.port, "master_repl_offset");
        await until(async () => (await info(replica.port, "slave_repl_offset")) === offset, 5_000, "the replica to catch up");
      },
      connect,
      stop: stopAll,
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}
