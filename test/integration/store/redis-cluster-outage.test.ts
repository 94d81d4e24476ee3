/**
 * A master of a Redis Cluster dies (SIGKILL) and comes back, under two store
 * instances (test/helpers/redis-cluster.ts, each master persisted to a dir of
 * its own). While it is gone every store call answers or throws
 * StoreUnavailableError within the store's bound, as on one server (docs/operations.md
 * "When Redis is down"); once it is back with its slots and data, every
 * request is readable again, and a request ended on one instance wakes the
 * other. And a master of a cluster with replicas fails over (issue 19 item
 * 4a): the master holding the most requests is SIGKILLed once its replica has
 * everything it acknowledged, and the replica takes over (CLUSTER FAILOVER
 * FORCE); every promise holds as before: pending requests are still pending,
 * answered ones keep their decision, a second answer gets the first one back,
 * a request whose deadline passed is expired exactly once, and a waiter on one
 * instance (subscribed before the failover) wakes when the request ends on
 * the other.
 */
import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { StoreUnavailableError } from "../../../src/requests/errors.js";
import type { RequestRecord } from "../../../src/requests/model.js";
import type { RequestStore } from "../../../src/requests/store.js";
import { connectRedisStore } from "../../../src/store/redis-store.js";
import { startRedisCluster, type RedisCluster } from "../../helpers/redis-cluster.js";
import { until } from "../../helpers/until.js";
import { ALICE } from "../../fixtures/people.js";

const TIMEOUT_MS = 1_000;
/** The store's bound plus room for a loaded machine. */
const BOUND_MS = TIMEOUT_MS + 700;
const PREFIX = "coutage";
const ALLOW = { behavior: "allow", updatedInput: { command: "deploy" } } as const;

let cluster: RedisCluster;
let withReplicas: RedisCluster;
const stores: RequestStore[] = [];

beforeAll(async () => {
  [cluster, withReplicas] = await Promise.all([startRedisCluster({ persist: true }), startRedisCluster({ replicas: true })]);
}, 60_000);
afterAll(async () => {
  await Promise.all(stores.map((store) => store.close()));
  await Promise.all([cluster?.stop(), withReplicas?.stop()]);
});

async function instance(on = cluster): Promise<RequestStore> {
  const store = connectRedisStore({ mode: "cluster", nodes: on.seeds }, { prefix: PREFIX, timeoutMs: TIMEOUT_MS });
  stores.push(store);
  await store.ready();
  return store;
}

const pending = (expiresInMs = 600_000): RequestRecord => ({
  id: randomUUID(),
  status: "pending",
  tokenName: "ci",
  channel: "C0123456789",
  body: { kind: "permission", toolName: "Bash", input: { command: "deploy" } },
  createdAt: Date.now(),
  expiresAt: Date.now() + expiresInMs,
});

const answer = (by: string) => ({ status: "answered" as const, decision: ALLOW, answeredBy: { id: by }, at: Date.now() });

/** What `task` gave, and how long it took. */
async function timed<T>(task: () => Promise<T>): Promise<{ value?: T; error?: unknown; ms: number }> {
  const started = Date.now();
  try {
    return { value: await task(), ms: Date.now() - started };
  } catch (error) {
    return { error, ms: Date.now() - started };
  }
}

/** The index of the master holding the most keys under the prefix. */
async function busiestMaster(on: RedisCluster): Promise<number> {
  const held = await Promise.all(
    on.masters.map(async ({ port }) => {
      const node = new Redis({ port, host: "127.0.0.1" });
      const [, keys] = await node.scan("0", "MATCH", `${PREFIX}:*`, "COUNT", 10_000);
      node.disconnect();
      return keys.length;
    }),
  );
  return held.indexOf(Math.max(...held));
}

describe("a master of the cluster dies and comes back", () => {
  it(
    "calls fail with StoreUnavailableError within the bound while it is gone; once it is back, every request is there and wake-ups work",
    { timeout: 60_000 },
    async () => {
      const [a, b] = [await instance(), await instance()];
      const requests = Array.from({ length: 24 }, () => pending());
      for (const request of requests) await a.create(request);
      // The master that holds the most of them dies.
      const victim = await busiestMaster(cluster);
      await cluster.masters[victim]!.kill();

      const during = await Promise.all(requests.map((request) => timed(() => b.get(request.id))));
      for (const { ms, error } of during) {
        expect(ms).toBeLessThan(BOUND_MS);
        if (error !== undefined) expect(error).toBeInstanceOf(StoreUnavailableError);
      }
      expect(during.filter(({ error }) => error !== undefined).length).toBeGreaterThan(0);
      const sweep = await timed(() => b.dueForExpiry(Date.now(), 100));
      expect(sweep.ms).toBeLessThan(BOUND_MS);
      expect(sweep.error).toBeInstanceOf(StoreUnavailableError);

      await cluster.restart(victim);
      const back = Date.now();
      await until(
        async () => (await Promise.all(requests.map((request) => b.get(request.id).catch(() => undefined)))).every((record) => record?.status === "pending"),
        15_000,
        "every request to be readable again",
      );
      const recoveredMs = Date.now() - back;
      expect(recoveredMs).toBeLessThan(10_000);

      const woken = new Set<string>();
      a.onEnded((id) => woken.add(id));
      for (const request of requests) {
        const result = await b.transition(request.id, {
          status: "answered",
          decision: { behavior: "allow", updatedInput: {} },
          answeredBy: { id: ALICE.id },
          at: Date.now(),
        });
        expect(result.outcome).toBe("applied");
      }
      await until(() => woken.size === requests.length, 5_000, "A to hear every end");
    },
  );
});

describe("a master of the cluster fails over to its replica", () => {
  it("keeps pending requests, answers and waiters, and expires what is due exactly once", { timeout: 90_000 }, async () => {
    const [a, b] = [await instance(withReplicas), await instance(withReplicas)];
    const waiting = Array.from({ length: 24 }, () => pending());
    const answered = Array.from({ length: 8 }, () => pending());
    const dueSoon = Array.from({ length: 4 }, () => pending(1_500));
    for (const request of [...waiting, ...answered, ...dueSoon]) await a.create(request);
    for (const request of answered) expect((await a.transition(request.id, answer("U0FIRST"))).outcome).toBe("applied");
    const woken = new Set<string>();
    a.onEnded((id) => woken.add(id));
    let resyncs = 0;
    a.onResync(() => (resyncs += 1));

    const victim = await busiestMaster(withReplicas);
    const during: Array<Promise<{ ms: number; error?: unknown }>> = [];
    const started = Date.now();
    const failover = withReplicas.failover(victim);
    // Calls made while it happens: each answers or fails as unavailable within the bound, none hangs.
    while (Date.now() - started < 3_000) {
      for (const request of waiting.slice(0, 6)) during.push(timed(() => b.get(request.id)));
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    await failover;
    const failoverMs = Date.now() - started;
    for (const { ms, error } of await Promise.all(during)) {
      expect(ms).toBeLessThan(BOUND_MS);
      if (error !== undefined) expect(error).toBeInstanceOf(StoreUnavailableError);
    }
    expect(failoverMs).toBeLessThan(15_000);

    // Every request reads back as it was, from either instance, once the replica serves the slots.
    await until(
      async () => (await Promise.all(waiting.map((r) => b.get(r.id).catch(() => undefined)))).every((record) => record?.status === "pending"),
      15_000,
      "every pending request to be readable again",
    );
    for (const request of answered) {
      const record = await a.get(request.id);
      expect(record).toMatchObject({ status: "answered", decision: ALLOW, answeredBy: { id: "U0FIRST" } });
      const again = await b.transition(request.id, answer("U0LATE"));
      expect(again).toMatchObject({ outcome: "already_ended", record: { status: "answered", answeredBy: { id: "U0FIRST" } } });
    }

    // Due requests are handed out for expiry and expire once, whichever instance sweeps.
    const due = new Set([...(await a.dueForExpiry(Date.now(), 100)), ...(await b.dueForExpiry(Date.now(), 100))]);
    for (const request of dueSoon) expect(due).toContain(request.id);
    const expiries = await Promise.all(
      dueSoon.flatMap((request) => [a, b].map((store) => store.transition(request.id, { status: "expired", at: Date.now() }))),
    );
    expect(expiries.filter((result) => result.outcome === "applied")).toHaveLength(dueSoon.length);

    // A waiter subscribed on A before the failover hears every end on B (or is told to read again, and finds it ended).
    for (const request of waiting) expect((await b.transition(request.id, answer("U0ALICE"))).outcome).toBe("applied");
    await until(
      async () =>
        waiting.every((r) => woken.has(r.id)) ||
        (resyncs > 0 && (await Promise.all(waiting.map((r) => a.get(r.id)))).every((record) => record?.status === "answered")),
      10_000,
      "A to hear every end",
    );
    expect(woken.size + resyncs).toBeGreaterThan(0);
  });
});
