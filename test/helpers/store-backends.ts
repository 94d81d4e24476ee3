/**
 * The stores a contract suite (rule-store-contract.ts, sign-in-store-contract.ts)
 * runs on, set up once per test file: the memory store, the Redis store on
 * the run's test Redis (one-shard layout), and the Redis store on a real
 * Redis Cluster of three masters the file starts (./redis-cluster.ts; the
 * tagged layout, where a script whose keys sit on two slots fails with
 * CROSSSLOT). Each Redis store gets a fresh prefix, and every key under it
 * is deleted after its test (on every master of the cluster).
 */
import type { Cluster } from "ioredis";
import { afterAll, afterEach, beforeAll } from "vitest";
import type { RedisClient } from "../../src/store/redis-target.js";
import { startRedisCluster, type RedisCluster } from "./redis-cluster.js";
import { keysUnder, uniquePrefix, useTestRedis } from "./redis.js";

export interface TestCluster {
  /** The cluster the file started (its seeds, for a store that opens its own connections). */
  cluster(): RedisCluster;
  /** One Cluster connection of the file's, open from before the first test to after the last. */
  redis(): Cluster;
  /** A fresh key prefix; every key under it is deleted after the test. */
  prefix(): string;
  /** Every key under `prefix`, per master (SCAN on each). */
  keysPerMaster(prefix: string): Promise<string[][]>;
}

/** For a test file: a Redis Cluster of its own, started before the first test and stopped after the last. */
export function useTestCluster(): TestCluster {
  let cluster: RedisCluster | undefined;
  let redis: Cluster | undefined;
  const prefixes: string[] = [];
  const keysPerMaster = (prefix: string) => Promise.all(redis!.nodes("master").map((node) => keysUnder(node, prefix)));
  beforeAll(async () => {
    cluster = await startRedisCluster();
    redis = cluster.connect();
  }, 60_000);
  afterEach(async () => {
    const keys = (await Promise.all(prefixes.splice(0).map(keysPerMaster))).flat(2);
    await Promise.all(keys.map((key) => redis!.del(key)));
  });
  afterAll(async () => {
    redis?.disconnect();
    await cluster?.stop();
  });
  return {
    cluster: () => cluster!,
    redis: () => redis!,
    prefix: () => {
      const prefix = uniquePrefix();
      prefixes.push(prefix);
      return prefix;
    },
    keysPerMaster,
  };
}

/** A contract suite: registers its tests under `name`, building each store with `make`. */
export type StoreContract<Store, Options> = (name: string, make: (options?: Options) => Promise<Store>) => void;

/** How one kind of store is built on each backend. */
export interface StoreBuilders<Store, Options> {
  memory(options: Options | undefined): Store | Promise<Store>;
  /** On `redis` (one server or a cluster) under `prefix`; the connection is the file's (the store must not close it). */
  redis(redis: RedisClient, prefix: string, options: Options | undefined): Store | Promise<Store>;
}

/**
 * For a test file: the test Redis and a cluster of its own (each set up once),
 * and `run`, which runs a contract on memory, on Redis and on the cluster.
 */
export function useStoreBackends(): { run<Store, Options>(contract: StoreContract<Store, Options>, build: StoreBuilders<Store, Options>): void } {
  const single = useTestRedis();
  const cluster = useTestCluster();
  return {
    run(contract, build) {
      contract("memory", async (options) => build.memory(options));
      contract("redis", async (options) => build.redis(single.redis(), single.prefix(), options));
      contract("redis cluster", async (options) => build.redis(cluster.redis(), cluster.prefix(), options));
    },
  };
}
