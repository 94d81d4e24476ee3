/**
 * The Redis store on a real Redis Cluster of three masters the file starts
 * (test/helpers/redis-cluster.ts): the store contract (a script whose keys
 * spread over two slots would fail with CROSSSLOT), the keys spread over
 * every master, and a request that ends on one instance waking a waiter on
 * another (PUBLISH from a script reaches a subscriber on any node).
 */
import { randomUUID } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import type { RequestRecord } from "../../../src/requests/model.js";
import type { RequestStore } from "../../../src/requests/store.js";
import { connectRedisStore, createRedisStore } from "../../../src/store/redis-store.js";
import { runStoreContract } from "../../helpers/store-contract.js";
import { useTestCluster } from "../../helpers/store-backends.js";
import { sleep, until } from "../../helpers/until.js";
import { ALICE } from "../../fixtures/people.js";

const testCluster = useTestCluster();

runStoreContract("redis cluster", async ({ now, retentionMs }) => {
  const store = createRedisStore({ redis: testCluster.redis(), prefix: testCluster.prefix(), now, retentionMs });
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
    const store = connectRedisStore({ mode: "cluster", nodes: testCluster.cluster().seeds }, { prefix, now: () => T0 });
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

  it("spreads the requests of many agent tokens over every master, and finds each by id, by idempotency key and in the listing", async () => {
    const prefix = testCluster.prefix();
    const store = await instance(prefix);
    // A token's requests (with its idempotency keys) sit on that token's shard: 48 tokens spread over the masters.
    const ofToken = (i: number) => ({ ...pending(), tokenName: `agent-${i}` });
    const created = await Promise.all(Array.from({ length: 48 }, (_, i) => store.create(ofToken(i), { idempotencyKey: `agent-${i}:spread` })));
    const perMaster = await testCluster.keysPerMaster(prefix);
    for (const keys of perMaster) expect(keys.length).toBeGreaterThan(0);
    for (const [i, { record }] of created.entries()) {
      expect(await store.get(record.id)).toStrictEqual(record);
      expect((await store.create(ofToken(i), { idempotencyKey: `agent-${i}:spread` })).record.id).toBe(record.id);
    }
    expect((await store.listRequests({ status: "pending", limit: 100 })).map(({ id }) => id).sort()).toStrictEqual(
      created.map(({ record }) => record.id).sort(),
    );
    expect(await store.counts()).toStrictEqual({ pending: 48, callbacks: 0 });
  });

  it("when the click lands on instance B, the listener on instance A wakes with the id", async () => {
    const prefix = testCluster.prefix();
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
});
