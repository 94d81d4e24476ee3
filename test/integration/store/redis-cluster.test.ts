/**
 * The Redis store on a real Redis Cluster of three masters the file starts
 * (test/helpers/redis-cluster.ts): the store contract (a script whose keys
 * spread over two slots would fail with CROSSSLOT), the keys spread over
 * every master, and a request that ends on one instance waking a waiter on
 * another (PUBLISH from a script reaches a subscriber on any node).
 */
import { randomUUID } from "node:crypto";
import type { Cluster } from "ioredis";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { RequestRecord } from "../../../src/requests/model.js";
import type { RequestStore } from "../../../src/requests/store.js";
import { connectRedisRuleStore } from "../../../src/store/redis-rules.js";
import { connectRedisStore, createRedisStore } from "../../../src/store/redis-store.js";
import { startRedisCluster, type RedisCluster } from "../../helpers/redis-cluster.js";
import { uniquePrefix } from "../../helpers/redis.js";
import { runStoreContract } from "../../helpers/store-contract.js";
import { sleep, until } from "../../helpers/until.js";
import { ALICE } from "../../fixtures/people.js";

let cluster: RedisCluster;
let redis: Cluster;
const prefixes: string[] = [];

beforeAll(async () => {
  cluster = await startRedisCluster();
  redis = cluster.connect();
}, 60_000);
afterEach(async () => {
  await Promise.all(prefixes.splice(0).map((prefix) => deleteKeysUnder(prefix)));
});
afterAll(async () => {
  redis?.disconnect();
  await cluster?.stop();
});

/** Every key under `prefix`, per master (SCAN on each). */
async function keysPerMaster(prefix: string): Promise<string[][]> {
  return Promise.all(
    redis.nodes("master").map(async (node) => {
      const found: string[] = [];
      let cursor = "0";
      do {
        const [next, batch] = await node.scan(cursor, "MATCH", `${prefix}:*`, "COUNT", 1000);
        found.push(...batch);
        cursor = next;
      } while (cursor !== "0");
      return found;
    }),
  );
}

async function deleteKeysUnder(prefix: string): Promise<void> {
  const keys = (await keysPerMaster(prefix)).flat();
  await Promise.all(keys.map((key) => redis.del(key)));
}

function freshPrefix(): string {
  const prefix = uniquePrefix();
  prefixes.push(prefix);
  return prefix;
}

runStoreContract("redis cluster", async ({ now, retentionMs }) => {
  const store = createRedisStore({ redis, prefix: freshPrefix(), now, retentionMs });
  await store.ready();
  return { store, elapse: sleep };
});

describe("the Redis store on a cluster", () => {
  const T0 = 1_800_000_000_000;
  const opened: Array<{ close(): Promise<void> }> = [];
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((store) => store.close()));
  });

  /** A store with its own two connections to the cluster, as one relay process has. */
  async function instance(prefix: string): Promise<RequestStore> {
    const store = connectRedisStore({ mode: "cluster", nodes: cluster.seeds }, { prefix, now: () => T0 });
    opened.push(store);
    await store.ready();
    return store;
  }

  const pending = (id: string = randomUUID()): RequestRecord => ({
    id,
    status: "pending",
    tokenName: "ci",
    channel: "C0123456789",
    body: { kind: "permission", toolName: "Bash", input: { command: "deploy" } },
    createdAt: T0,
    expiresAt: T0 + 60_000,
  });

  it("spreads the requests over every master, and finds each by id, by idempotency key and in the listing", async () => {
    const prefix = freshPrefix();
    const store = await instance(prefix);
    // One token's creates with an idempotency key go on that token's shard: 48 tokens spread them.
    const created = await Promise.all(
      Array.from({ length: 48 }, (_, i) => store.create({ ...pending(), tokenName: `ci-${i}` }, { idempotencyKey: `ci:spread-${i}` })),
    );
    const perMaster = await keysPerMaster(prefix);
    for (const keys of perMaster) expect(keys.length).toBeGreaterThan(0);
    for (const [i, { record }] of created.entries()) {
      expect(await store.get(record.id)).toStrictEqual(record);
      expect((await store.create({ ...pending(), tokenName: `ci-${i}` }, { idempotencyKey: `ci:spread-${i}` })).record.id).toBe(record.id);
    }
    expect((await store.listRequests({ status: "pending", limit: 100 })).map(({ id }) => id).sort()).toStrictEqual(
      created.map(({ record }) => record.id).sort(),
    );
    expect(await store.counts()).toStrictEqual({ pending: 48, callbacks: 0 });
  });

  it("when the click lands on instance B, the listener on instance A wakes with the id", async () => {
    const prefix = freshPrefix();
    const [a, b] = [await instance(prefix), await instance(prefix)];
    // Nine requests on random shards: some on a master other than the one A's subscription is on.
    const requests = Array.from({ length: 9 }, () => pending());
    for (const request of requests) await a.create(request);
    const woken: string[] = [];
    a.onEnded((id) => woken.push(id));
    for (const request of requests) {
      const result = await b.transition(request.id, {
        status: "answered",
        decision: { behavior: "allow", updatedInput: {} },
        answeredBy: { id: ALICE.id },
        at: T0,
      });
      expect(result.outcome).toBe("applied");
    }
    await until(() => woken.length === requests.length, 3000, "A to hear every end");
    expect(woken.sort()).toStrictEqual(requests.map(({ id }) => id).sort());
  });

  it("keeps the rules on one slot: create, find, use and revoke work on the cluster", async () => {
    const prefix = freshPrefix();
    const rules = connectRedisRuleStore({ mode: "cluster", nodes: cluster.seeds }, { prefix });
    opened.push(rules);
    const rule = {
      id: randomUUID(),
      token: "ci",
      sessionId: "s1",
      toolName: "Bash",
      createdBy: { id: ALICE.id },
      createdAt: T0,
      expiresAt: T0 + 60_000,
      uses: 0,
      requestId: randomUUID(),
    };
    await rules.create(rule, T0);
    expect(await rules.find({ token: "ci", sessionId: "s1", toolName: "Bash" }, T0 + 1)).toMatchObject({ id: rule.id });
    expect(await rules.use(rule.id, T0 + 2)).toMatchObject({ uses: 1 });
    expect(await rules.revoke(rule.id, T0 + 3)).toMatchObject({ id: rule.id });
    expect(await rules.find({ token: "ci", sessionId: "s1", toolName: "Bash" }, T0 + 4)).toBeUndefined();
  });
});
