/**
 * What reaches ioredis for each kind of store target (src/store/redis-target.ts):
 * the address, database, user and password of one server, TLS with SNI and
 * a CA of one's own, and for Sentinel the sentinels, the master's name, both
 * sets of credentials, TLS for both, and the failover detector. Read back
 * from real ioredis clients that never connect (lazyConnect).
 */
import { Cluster, Redis } from "ioredis";
import { afterEach, describe, expect, it } from "vitest";
import type { RedisTarget } from "../../../src/config/redis.js";
import { commandConnectionOptions, reconnectDelay } from "../../../src/store/redis-connection.js";
import { openRedis, SENTINEL_TIMEOUT_MS, type RedisClient } from "../../../src/store/redis-target.js";

const CA = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
const opened: RedisClient[] = [];
afterEach(() => opened.splice(0).forEach((redis) => redis.disconnect()));

function clientFor(target: RedisTarget | string): RedisClient {
  const redis = openRedis(target, { ...commandConnectionOptions(2000), lazyConnect: true });
  opened.push(redis);
  return redis;
}

function optionsFor(target: RedisTarget | string) {
  const redis = clientFor(target);
  if (!(redis instanceof Redis)) throw new Error("expected a connection to one server");
  return redis.options;
}

describe("ioredis options for one Redis server", () => {
  it("a redis:// URL: host, port, database, user and password, no TLS, with the bounded-call options kept", () => {
    const options = optionsFor("redis://relay:pw@cache.internal:6380/3");
    expect(options).toMatchObject({
      host: "cache.internal",
      port: 6380,
      db: 3,
      username: "relay",
      password: "pw",
      enableOfflineQueue: false,
      commandTimeout: 2000,
    });
    expect(options.tls).toBeUndefined();
    expect(options.sentinels).toBeFalsy();
  });

  it("rediss:// turns TLS on, sending the host name as SNI and trusting the CA of REDIS_TLS_CA_FILE", () => {
    const target: RedisTarget = { mode: "single", address: { host: "cache.internal", port: 6380 }, db: 0, tls: { ca: CA } };
    expect(optionsFor(target).tls).toEqual({ ca: CA, servername: "cache.internal" });
    expect(optionsFor("rediss://cache.internal").tls).toEqual({ servername: "cache.internal" });
  });

  it("an IP address is not sent as SNI (RFC 6066), and Node's own CAs are trusted without a CA file", () => {
    expect(optionsFor("rediss://10.0.0.5:6380").tls).toEqual({});
  });

  it("a string that is not a redis[s]:// URL is refused before any connection is made", () => {
    expect(() => optionsFor("http://cache.internal")).toThrow("not a redis[s]://[user:password@]host[:port][/db] URL");
  });
});

describe("ioredis options for Sentinel", () => {
  const target: RedisTarget = {
    mode: "sentinel",
    sentinels: [
      { host: "s1", port: 26379 },
      { host: "s2", port: 26380 },
    ],
    name: "relay-master",
    username: "relay",
    password: "master-pw",
    sentinelUsername: "watcher",
    sentinelPassword: "sentinel-pw",
  };

  it("asks the sentinels for the master by name, signing in to each with its own credentials, and follows +switch-master", () => {
    const { mode: _mode, ...sentinelOptions } = target;
    expect(optionsFor(target)).toMatchObject({
      ...sentinelOptions,
      role: "master",
      sentinelCommandTimeout: SENTINEL_TIMEOUT_MS,
      failoverDetector: true,
      retryStrategy: reconnectDelay,
    });
  });

  it("REDIS_TLS=true: TLS to the sentinels and to the master, with the same CA", () => {
    expect(optionsFor({ ...target, tls: { ca: CA } })).toMatchObject({ tls: { ca: CA }, sentinelTLS: { ca: CA }, enableTLSForSentinelMode: true });
    expect(optionsFor(target).enableTLSForSentinelMode).toBe(false);
  });
});

describe("ioredis options for Redis Cluster", () => {
  const target: RedisTarget = {
    mode: "cluster",
    nodes: [
      { host: "node-1", port: 7000 },
      { host: "node-2", port: 7001 },
    ],
    username: "relay",
    password: "pw",
  };

  it("a Cluster client of the seed nodes: credentials and timeouts on every node's connection, offline queue and reconnects on the cluster's", () => {
    const cluster = clientFor(target);
    expect(cluster).toBeInstanceOf(Cluster);
    const { options } = cluster as Cluster;
    expect(cluster.isCluster).toBe(true);
    expect(options).toMatchObject({ enableOfflineQueue: false, lazyConnect: true, clusterRetryStrategy: reconnectDelay });
    expect(options.redisOptions).toMatchObject({ username: "relay", password: "pw", commandTimeout: 2000, maxRetriesPerRequest: 0 });
    expect(options.redisOptions?.tls).toBeUndefined();
  });

  it("rediss:// nodes turn TLS on for every node, trusting the CA of REDIS_TLS_CA_FILE", () => {
    expect((clientFor({ ...target, tls: { ca: CA } }) as Cluster).options.redisOptions?.tls).toEqual({ ca: CA });
  });
});
