/**
 * The one queue worker (src/requests/queue-worker.ts) on a real memory store:
 * what each outcome of a handler does to its entry (completed, retried after
 * the backoff or Slack's Retry-After, given up, handed back, left to its
 * lease), lease renewal while a handler runs long, stop while handling, and
 * the per-queue counts it reports.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createLogger, silentLogger } from "../../../src/logger.js";
import { PermanentDeliveryError, TransientDeliveryError } from "../../../src/requests/delivery.js";
import { StoreUnavailableError } from "../../../src/requests/errors.js";
import type { QueueOutcome } from "../../../src/requests/metrics.js";
import { OutageLog } from "../../../src/requests/outage-log.js";
import { QueueWorker, type Handled, type QueueHandler, type Work } from "../../../src/requests/queue-worker.js";
import type { ClaimedEntry, RequestStore } from "../../../src/requests/store.js";
import { createMemoryStore } from "../../../src/store/memory-store.js";
import { permissionRecord } from "../../fixtures/records.js";
import { until } from "../../helpers/until.js";

const T0 = 1_800_000_000_000;
const LEASE_MS = 60_000;
const BACKOFF = { baseMs: 1000, maxMs: 60_000 };

type Attempt = (entry: ClaimedEntry, work: Work) => Promise<Handled>;

/** A callbacks-queue handler that runs `attempt`; the settings are the worker's knobs under test. */
function handlerOf(attempt: Attempt, settings: Partial<QueueHandler> = {}): QueueHandler {
  return {
    queue: "callbacks",
    name: "test entry",
    leaseMs: LEASE_MS,
    batchSize: 10,
    backoff: BACKOFF,
    parallel: true,
    otherErrors: "retry",
    heartbeat: "at once",
    handle: attempt,
    ...settings,
  };
}

const workers: QueueWorker[] = [];
afterEach(async () => {
  await Promise.all(workers.splice(0).map((worker) => worker.stop()));
});

/** A store with one request's callback queued (due at T0), a worker on it with `handler`, and what the worker counted. */
async function setUp(attempt: Attempt, settings: Partial<QueueHandler> = {}, clock: { t: number } = { t: T0 }) {
  const store: RequestStore = createMemoryStore({ now: () => clock.t });
  const record = permissionRecord({ callbackUrl: "https://hooks.example.com/relay" }, { createdAt: T0 - 1000, expiresAt: T0 + 600_000 });
  await store.create(record);
  await store.transition(record.id, { status: "cancelled", at: T0 });
  const counted: Array<[string, QueueOutcome]> = [];
  const logs: string[] = [];
  const logger = createLogger({ level: "debug", write: (line) => logs.push(line) });
  const worker = new QueueWorker({
    store,
    logger,
    now: () => clock.t,
    random: () => 0,
    outage: new OutageLog(logger, "tests pause"),
    metrics: { handled: (queue, outcome) => counted.push([queue, outcome]) },
  });
  worker.add(handlerOf(attempt, settings));
  workers.push(worker);
  /** The callback entries a claim at `at` finds due. */
  const due = (at: number) => store.claim("callbacks", at, 1, 10);
  return { store, worker, clock, id: record.id, counted, logs, due };
}

describe("what an attempt comes to", () => {
  it("done: the entry is completed and counted done", async () => {
    const { worker, due, counted } = await setUp(async () => ({ outcome: "done" }));
    expect(await worker.runOnce("callbacks")).toStrictEqual({ done: 1, retried: 0, dropped: 0, released: 0 });
    expect(await due(T0 + 100 * LEASE_MS)).toStrictEqual([]);
    expect(counted).toStrictEqual([["callbacks", "done"]]);
  });

  it("a transient failure is retried after the backoff, doubling with each attempt", async () => {
    const { worker, due, clock, id } = await setUp(async () => {
      throw new TransientDeliveryError("http_503");
    });
    // random() = 0: half of base · 2^(n−1).
    for (const [attempts, delay] of [
      [1, 500],
      [2, 1000],
      [3, 2000],
      [4, 4000],
    ] as const) {
      const at = clock.t;
      expect(await worker.runOnce("callbacks")).toMatchObject({ retried: 1 });
      expect(await due(at + delay - 1)).toStrictEqual([]);
      expect(await due(at + delay)).toStrictEqual([{ key: id, id, attempts }]);
      // That claim leased it for 1 ms: due again, to the worker, just after.
      clock.t = at + delay + 1;
    }
  });

  it("Slack's Retry-After wins over a shorter backoff, and a longer backoff wins over it", async () => {
    const ratelimited = async (): Promise<Handled> => {
      throw new TransientDeliveryError("ratelimited", 30_000);
    };
    const quick = await setUp(ratelimited);
    await quick.worker.runOnce("callbacks");
    expect(await quick.due(T0 + 29_999)).toStrictEqual([]);
    expect(await quick.due(T0 + 30_000)).toStrictEqual([{ key: quick.id, id: quick.id, attempts: 1 }]);
    // The third attempt's backoff: half of 20 s · 2² = 40 s, longer than Slack's 30 s.
    const slow = await setUp(ratelimited, { backoff: { baseMs: 20_000, maxMs: 120_000 } });
    await slow.store.retry("callbacks", slow.id, T0, 2);
    await slow.worker.runOnce("callbacks");
    expect(await slow.due(T0 + 39_999)).toStrictEqual([]);
    expect(await slow.due(T0 + 40_000)).toStrictEqual([{ key: slow.id, id: slow.id, attempts: 3 }]);
  });

  it("a retry that would come after the handler's give-up time is given up instead, with a warning", async () => {
    const { worker, due, counted, logs } = await setUp(async () => ({ outcome: "retry", reason: "http_503", giveUpAt: T0 + 100, giveUpWhy: "too late" }));
    expect(await worker.runOnce("callbacks")).toMatchObject({ dropped: 1, retried: 0 });
    expect(await due(T0 + 100 * LEASE_MS)).toStrictEqual([]);
    expect(counted).toStrictEqual([["callbacks", "dropped"]]);
    expect(logs.join("\n")).toContain('"msg":"test entry given up"');
  });

  it("a refusal for good is given up at once", async () => {
    const { worker, due } = await setUp(async () => {
      throw new PermanentDeliveryError("channel_not_found");
    });
    expect(await worker.runOnce("callbacks")).toMatchObject({ dropped: 1 });
    expect(await due(T0 + 100 * LEASE_MS)).toStrictEqual([]);
  });

  it("another error is retried or given up as the handler says", async () => {
    const failing = async (): Promise<Handled> => {
      throw new Error("a bug");
    };
    const retrying = await setUp(failing, { otherErrors: "retry" });
    expect(await retrying.worker.runOnce("callbacks")).toMatchObject({ retried: 1 });
    const givingUp = await setUp(failing, { otherErrors: "give up" });
    expect(await givingUp.worker.runOnce("callbacks")).toMatchObject({ dropped: 1 });
    expect(await givingUp.due(T0 + 100 * LEASE_MS)).toStrictEqual([]);
  });

  it("a store outage leaves the entry to its lease: it comes back once the lease runs out, its attempts unchanged", async () => {
    const { worker, due, id, counted } = await setUp(async () => {
      throw new StoreUnavailableError("redis down");
    });
    expect(await worker.runOnce("callbacks")).toStrictEqual({ done: 0, retried: 0, dropped: 0, released: 0 });
    expect(await due(T0 + LEASE_MS - 1)).toStrictEqual([]);
    expect(await due(T0 + LEASE_MS)).toStrictEqual([{ key: id, id, attempts: 0 }]);
    expect(counted).toStrictEqual([]);
  });

  it("an entry another step settled (settled) is left alone, and one left as claimed comes back after its lease", async () => {
    const settled = await setUp(async (entry) => {
      await settled.store.complete("callbacks", entry.key);
      return { outcome: "settled" };
    });
    expect(await settled.worker.runOnce("callbacks")).toMatchObject({ done: 1 });
    const left = await setUp(async () => ({ outcome: "left" }));
    expect(await left.worker.runOnce("callbacks")).toStrictEqual({ done: 0, retried: 0, dropped: 0, released: 0 });
    expect(await left.due(T0 + LEASE_MS)).toHaveLength(1);
  });
});

describe("a handler that runs longer than its lease", () => {
  it("keeps its entry: the worker renews the lease every third of it, so no other claim takes the entry meanwhile", async () => {
    const leaseMs = 60;
    const realTime = {
      get t() {
        return Date.now();
      },
    };
    let claimsMeanwhile = 0;
    let looks = 0;
    const { store, worker, id } = await setUp(
      async () => {
        const end = Date.now() + 4 * leaseMs;
        while (Date.now() < end) {
          claimsMeanwhile += (await store.claim("callbacks", Date.now(), leaseMs, 10)).length;
          looks += 1;
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
        return { outcome: "done" };
      },
      { leaseMs },
      realTime,
    );
    await store.retry("callbacks", id, Date.now(), 0);
    expect(await worker.runOnce("callbacks")).toMatchObject({ done: 1 });
    expect(looks).toBeGreaterThan(5);
    expect(claimsMeanwhile).toBe(0);
  });

  it("is told (its signal aborts) when a renewal finds the entry gone", async () => {
    const leaseMs = 30;
    let aborted = false;
    const { store, worker } = await setUp(
      async (entry, work) => {
        await store.complete("callbacks", entry.key);
        await until(() => work.signal.aborted, 2000, "the signal to abort");
        aborted = true;
        return { outcome: "settled" };
      },
      { leaseMs },
    );
    await worker.runOnce("callbacks");
    expect(aborted).toBe(true);
  });

  it("with heartbeat 'once renewed', is renewed only from its own first renewal", async () => {
    const leaseMs = 30;
    const renewals: number[] = [];
    const { store, worker } = await setUp(
      async (_entry, work) => {
        await new Promise((resolve) => setTimeout(resolve, 3 * leaseMs));
        renewals.push(0);
        await work.renew();
        await new Promise((resolve) => setTimeout(resolve, 3 * leaseMs));
        return { outcome: "done" };
      },
      { leaseMs, heartbeat: "once renewed" },
    );
    const retry = store.retry.bind(store);
    store.retry = async (...args) => {
      renewals.push(args[2]);
      return retry(...args);
    };
    await worker.runOnce("callbacks");
    expect(renewals[0]).toBe(0);
    expect(renewals.length).toBeGreaterThan(2);
  });
});

describe("start, kick and stop", () => {
  it("stop tells an attempt in flight to let go, hands its entry back due at once and resolves once it has", async () => {
    let started = false;
    const { worker, store, id, clock } = await setUp(async (_entry, work) => {
      started = true;
      await new Promise<void>((resolve) => work.signal.addEventListener("abort", () => resolve(), { once: true }));
      return { outcome: "released" };
    });
    worker.start(60_000);
    await until(() => started, 2000, "the attempt to start");
    await worker.stop();
    expect(await store.claim("callbacks", clock.t, LEASE_MS, 10)).toStrictEqual([{ key: id, id, attempts: 0 }]);
  });

  it("a kick makes a loop look again at once rather than at its next poll", async () => {
    const handled: string[] = [];
    const { worker, store, clock } = await setUp(async (entry) => {
      handled.push(entry.id);
      return { outcome: "done" };
    });
    worker.start(60_000);
    await until(() => handled.length === 1, 2000, "the first entry");
    const other = permissionRecord({ callbackUrl: "https://hooks.example.com/relay" }, { id: "req-0002", createdAt: T0, expiresAt: T0 + 600_000 });
    await store.create(other);
    await store.transition(other.id, { status: "cancelled", at: clock.t });
    worker.kick("callbacks");
    await until(() => handled.length === 2, 2000, "the kicked entry");
  });

  it("a store outage in the loops is logged once when it starts and once when it ends", async () => {
    const logs: string[] = [];
    const logger = createLogger({ level: "info", write: (line) => logs.push(line) });
    let down = true;
    const store = createMemoryStore();
    const worker = new QueueWorker({
      store: {
        ...store,
        claim: async (...args) => {
          if (down) throw new StoreUnavailableError("redis down");
          return store.claim(...args);
        },
      },
      logger,
      now: Date.now,
      outage: new OutageLog(logger, "tests pause"),
    });
    workers.push(worker);
    worker.add(handlerOf(async () => ({ outcome: "done" })));
    worker.add(handlerOf(async () => ({ outcome: "done" }), { queue: "notices" }));
    worker.start(5);
    await new Promise((resolve) => setTimeout(resolve, 60));
    down = false;
    await new Promise((resolve) => setTimeout(resolve, 30));
    const messages = logs.map((line) => (JSON.parse(line) as { msg: string }).msg);
    expect(messages.filter((msg) => msg === "the store is unavailable: tests pause until it is back")).toHaveLength(1);
    expect(messages.filter((msg) => msg === "the store is back: tests resume")).toHaveLength(1);
  });

  it("refuses a second handler for the same queue", () => {
    const worker = new QueueWorker({ store: createMemoryStore(), logger: silentLogger, now: Date.now, outage: new OutageLog(silentLogger, "tests pause") });
    worker.add(handlerOf(async () => ({ outcome: "done" })));
    expect(() => worker.add(handlerOf(async () => ({ outcome: "done" })))).toThrow("the callbacks queue has a handler already");
  });
});
