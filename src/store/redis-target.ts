/**
 * How an ioredis connection reaches the store's Redis (src/config/redis.ts
 * says which): the address, the database, the ACL user and password, TLS,
 * or Sentinel's master. One place, so the store's command connection, its
 * subscriber (a duplicate of it), the audit log's connection and the start's
 * probe all reach the same server the same way.
 *
 * Sentinel, with ioredis's own support (`new Redis({ sentinels, name })`):
 * each connection asks the sentinels for the master's address when it
 * connects and on every reconnect, and checks (its ready check's INFO) that
 * the server it reached is still a master. `failoverDetector` also listens
 * to the sentinels' `+switch-master`, and drops a connection to the old
 * master at once: without it, a master that hangs rather than dies (or a
 * network that drops its packets) would keep the connection open, each call
 * timing out, until TCP gives up. A connection to a master that died fails
 * at once and reconnects on the usual schedule (redis-connection.ts), asking
 * the sentinels again each time, so calls go to the new master within about
 * a second of the sentinels promoting it.
 *
 * Redis Cluster, with ioredis's Cluster client: it asks the seed nodes for
 * the slots, sends each command to the master of its key's slot (the store's
 * keys are laid out so each script's keys share one, ./keys.ts), follows
 * MOVED and ASK, and refreshes the slots when a node fails. The options that
 * concern the whole client (offline queue, reconnects, lazy connect, ready
 * check) are the cluster's; the rest (credentials, TLS, timeouts) go to each
 * node's connection.
 */
import { isIP } from "node:net";
import { Cluster, Redis, type ClusterOptions, type RedisOptions } from "ioredis";
import type { RedisTarget } from "../config/redis.js";
import { parseRedisUrl } from "../config/redis.js";

/** How long a sentinel may take to answer where the master is (ms): one that takes longer is skipped for the next. */
export const SENTINEL_TIMEOUT_MS = 1_000;

/** `target` as a redis:// URL (the tests' and the bench's form) or as src/config read it. */
export type RedisTargetInput = RedisTarget | string;

/** The target a redis:// or rediss:// URL names; throws on anything else. */
export function toTarget(input: RedisTargetInput): RedisTarget {
  if (typeof input !== "string") return input;
  const target = parseRedisUrl(input);
  if (!target) throw new Error("not a redis[s]://[user:password@]host[:port][/db] URL");
  return target;
}

/** A command connection: to one server (or Sentinel's master), or a Cluster client. */
export type RedisClient = Redis | Cluster;

/** The ioredis options that reach `target` (one server or Sentinel's master; a cluster's are clusterOptions'). */
export function targetOptions(target: Exclude<RedisTarget, { mode: "cluster" }>): RedisOptions {
  const tls = target.tls === undefined ? undefined : { ...(target.tls.ca === undefined ? {} : { ca: target.tls.ca }) };
  const access = {
    ...(target.username === undefined ? {} : { username: target.username }),
    ...(target.password === undefined ? {} : { password: target.password }),
  };
  if (target.mode === "single") {
    const { host, port } = target.address;
    // SNI names the host the operator wrote (the certificate is checked against it either way); an IP is not sent as SNI (RFC 6066).
    const sni = isIP(host) === 0 ? { servername: host } : {};
    return { host, port, db: target.db, ...access, ...(tls ? { tls: { ...tls, ...sni } } : {}) };
  }
  return {
    sentinels: target.sentinels.map(({ host, port }) => ({ host, port })),
    name: target.name,
    ...access,
    ...(target.sentinelUsername === undefined ? {} : { sentinelUsername: target.sentinelUsername }),
    ...(target.sentinelPassword === undefined ? {} : { sentinelPassword: target.sentinelPassword }),
    ...(tls ? { tls, sentinelTLS: tls, enableTLSForSentinelMode: true } : {}),
    sentinelCommandTimeout: SENTINEL_TIMEOUT_MS,
    failoverDetector: true,
  };
}

/** The Cluster client's options for `options` (written for one connection) with the cluster's credentials and TLS. */
export function clusterOptions(target: Extract<RedisTarget, { mode: "cluster" }>, options: RedisOptions): ClusterOptions {
  const { enableOfflineQueue, lazyConnect, retryStrategy, enableReadyCheck, sentinelRetryStrategy: _s, failoverDetector: _f, ...perNode } = options;
  const tls = target.tls === undefined ? undefined : { ...(target.tls.ca === undefined ? {} : { ca: target.tls.ca }) };
  return {
    ...(enableOfflineQueue === undefined ? {} : { enableOfflineQueue }),
    ...(lazyConnect === undefined ? {} : { lazyConnect }),
    ...(enableReadyCheck === undefined ? {} : { enableReadyCheck }),
    ...(retryStrategy === undefined ? {} : { clusterRetryStrategy: retryStrategy ?? (() => null) }),
    redisOptions: {
      ...(target.username === undefined ? {} : { username: target.username }),
      ...(target.password === undefined ? {} : { password: target.password }),
      ...(tls ? { tls } : {}),
      ...perNode,
    },
  };
}

/** A new connection to `target` with `options` (redis-connection.ts's, or the probe's) on top of how to reach it: a Cluster client for a cluster. */
export function openRedis(target: RedisTargetInput, options: RedisOptions): RedisClient {
  const resolved = toTarget(target);
  if (resolved.mode === "cluster") return new Cluster(resolved.nodes, clusterOptions(resolved, options));
  return new Redis({ ...targetOptions(resolved), ...options });
}
