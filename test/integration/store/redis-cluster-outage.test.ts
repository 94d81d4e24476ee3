/**
 * A master of a Redis Cluster dies (SIGKILL) and comes back, under two store
 * instances (test/helpers/redis-cluster.ts, each master persisted to a dir of
 * its own). While it is gone every store call answers or throws
 * StoreUnavailableError within the store's bound, as on one server (docs/operations.md
 * "When Redis is down"); once it is back with its slots and data, every
 * request is readable again, and a request ended on one instance wakes the
 * other.
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

let cluster: RedisCluster;
const stores: RequestStore[] = [];

beforeAll(async () => {
  cluster = await startRedisCluster({ persist: true });
}, 60_000);
afterAll(async () => {
  await Promise.all(stores.map((store) => store.close()));
  await cluster?.stop();
});

async function instance(): Promise<RequestStore> {
  const store = connectRedisStore({ mode: "cluster", nodes: cluster.seeds }, { prefix: PREFIX, timeoutMs: TIMEOUT_MS });
  stores.push(store);
  await store.ready();
  return store;
}

const pending = (): RequestRecord => ({
  id: randomUUID(),
  status: "pending",
  tokenName: "ci",
  channel: "C0123456789",
  body: { kind: "permission", toolName: "Bash", input: { command: "deploy" } },
  createdAt: Date.now(),
  expiresAt: Date.now() + 600_000,
});

/** What `task` gave, and how long it took. */
async function timed<T>(task: () => Promise<T>): Promise<{ value?: T; error?: unknown; ms: number }> {
  const started = Date.now();
  try {
    return { value: await task(), ms: Date.now() - started };
  } catch (error) {
    return { error, ms: Date.now() - started };
  }
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
      const held = await Promise.all(
        cluster.masters.map(async ({ port }) => {
          const node = new Redis({ port, host: "127.0.0.1" });
          const [, keys] = await node.scan("0", "MATCH", `${PREFIX}:*`, "COUNT", 10_000);
          node.disconnect();
          return keys.length;
        }),
      );
      const victim = held.indexOf(Math.max(...held));
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
