/**
 * RequestService posting, crash-safe: the creating instance holds a new
 * request by a lease it renews while it tries; when it stops before the
 * message is recorded, any instance's recovery pass (run by the sweeper)
 * claims the request once the lease has run out and posts it. Instances are
 * services sharing one memory store; a creator that "dies" is one whose post
 * never settles and never renews.
 */
import { beforeEach, describe, expect, it, vi } from "vitest";
import { DEFAULT_POST_LEASE_MS, PermanentDeliveryError, RequestService } from "../../../src/requests/service.js";
import { createMemoryStore } from "../../../src/store/memory-store.js";
import type { RequestStore } from "../../../src/requests/store.js";
import { ALLOW, bodyOf, deferred, DEFAULT_CHANNEL, flush, T0, useHarness, type Harness } from "../../helpers/service-harness.js";
import { ALICE } from "../../fixtures/people.js";
import { FakeMessenger } from "../../helpers/fake-messenger.js";
import { claimedKeys } from "../../helpers/queue-entries.js";

const LEASE = DEFAULT_POST_LEASE_MS;
/** The creating instance; it dies mid-post (see beforeEach). */
const a = useHarness();

/** Another relay instance on the same store. */
function instance(store: RequestStore = a.store): Harness {
  return a.another({ store });
}

/** Makes an instance's posts never settle and never renew their lease: it died mid-post. */
function dying(h: Harness): Harness {
  h.messenger.postWith = () => new Promise(() => {});
  return h;
}

const create = async (h: Harness, fields: Record<string, unknown> = {}) => (await h.service.create({ tokenName: "ci-bot", body: bodyOf(fields) })).record;

beforeEach(() => {
  dying(a);
});

describe("the creating instance's lease", () => {
  it("no other instance posts a new request while its creator's lease runs", async () => {
    const { id } = await create(a);
    const b = instance();
    vi.setSystemTime(T0 + LEASE - 1);
    expect(await b.service.recoverUnposted()).toBe(0);
    expect(b.messenger.posts).toEqual([]);
    expect(a.messenger.posts.map((r) => r.id)).toEqual([id]);
  });

  it("before each attempt and each wait, the poster renews its lease to a full lease past that attempt", async () => {
    const renewed = deferred<boolean>();
    a.messenger.postWith = async (_record, { keepTrying }) => {
      renewed.resolve(await keepTrying!(T0 + 45_000));
      return new Promise(() => {});
    };
    const { id } = await create(a);
    expect(await renewed.promise).toBe(true);
    expect(await claimedKeys(a.store, "posting", T0 + 45_000 + LEASE - 1, LEASE, 10)).toEqual([]);
    expect(await claimedKeys(a.store, "posting", T0 + 45_000 + LEASE, LEASE, 10)).toEqual([id]);
  });

  it("when the request ended before the next attempt, the poster is told to stop; the request keeps its end and no message is recorded", async () => {
    const stopped = deferred<boolean>();
    const h = instance(createMemoryStore({ now: () => Date.now() }));
    h.messenger.postWith = async (record, { keepTrying }) => {
      await h.service.cancel(record.id, "agent");
      const keepGoing = await keepTrying!(Date.now());
      stopped.resolve(keepGoing);
      return keepGoing ? { channel: DEFAULT_CHANNEL, ts: "1700000000.000999" } : undefined;
    };
    const { id } = await create(h);
    expect(await stopped.promise).toBe(false);
    await h.service.idle();
    expect(await h.service.get(id)).toMatchObject({ status: "cancelled", cancelledBy: "agent" });
    expect((await h.service.get(id))?.slack).toBeUndefined();
    expect(h.messenger.ended).toEqual([]);
  });

  it("when renewing the lease fails, the post goes on and its message is recorded", async () => {
    const memory = createMemoryStore({ now: () => Date.now() });
    const h = instance({
      ...memory,
      retry: async () => {
        throw new Error("connection reset");
      },
    });
    let keptGoing: boolean | undefined;
    h.messenger.postWith = async (_record, { keepTrying }) => {
      keptGoing = await keepTrying!(Date.now());
      return { channel: DEFAULT_CHANNEL, ts: "1700000000.000777" };
    };
    const { id } = await create(h);
    await h.service.idle();
    expect(keptGoing).toBe(true);
    expect((await h.service.get(id))?.slack).toEqual({ channel: DEFAULT_CHANNEL, ts: "1700000000.000777" });
  });

  it("refuses a postLeaseMs that is not a positive whole number of milliseconds", () => {
    for (const postLeaseMs of [0, -1, 1.5, Number.NaN]) {
      const deps = { store: createMemoryStore(), messenger: new FakeMessenger(), defaultTimeoutSeconds: 60, postLeaseMs };
      expect(() => new RequestService(deps)).toThrow(/postLeaseMs/);
    }
  });
});

describe("recoverUnposted", () => {
  it("posts a request whose creator stopped before posting it, once the lease has run out, and it can then be answered", async () => {
    const { id } = await create(a);
    const b = instance();
    vi.setSystemTime(T0 + LEASE);
    expect(await b.service.recoverUnposted()).toBe(1);
    await b.service.idle();
    expect(b.messenger.posts.map((r) => r.id)).toEqual([id]);
    expect((await b.service.get(id))?.slack).toEqual({ channel: DEFAULT_CHANNEL, ts: "1700000000.000101" });
    vi.setSystemTime(T0 + 10 * LEASE);
    expect(await b.service.recoverUnposted()).toBe(0);
    expect(await b.service.answer(id, ALLOW, ALICE)).toMatchObject({ outcome: "applied" });
    await b.service.idle();
    expect(b.messenger.ended.map((r) => r.status)).toEqual(["answered"]);
  });

  it("when two instances recover at once, the request is posted once", async () => {
    await create(a);
    const [b, c] = [instance(), instance()];
    vi.setSystemTime(T0 + LEASE);
    const started = await Promise.all([b.service.recoverUnposted(), c.service.recoverUnposted()]);
    await Promise.all([b.service.idle(), c.service.idle()]);
    expect(started.sort()).toEqual([0, 1]);
    expect(b.messenger.posts.length + c.messenger.posts.length).toBe(1);
  });

  it("does not post a second time a request this instance is still posting", async () => {
    await create(a);
    vi.setSystemTime(T0 + LEASE);
    expect(await a.service.recoverUnposted()).toBe(0);
    expect(a.messenger.posts).toHaveLength(1);
  });

  it("leaves a request past its deadline to the expiry sweep, which takes it out of the posting set", async () => {
    const { id } = await create(a, { timeoutSeconds: 60 });
    const b = instance();
    vi.setSystemTime(T0 + 60_000);
    expect(await b.service.recoverUnposted()).toBe(0);
    expect(b.messenger.posts).toEqual([]);
    expect(await b.service.expireDue()).toBe(1);
    expect((await b.service.get(id))?.status).toBe("expired");
    expect(await claimedKeys(b.store, "posting", T0 + 100 * LEASE, LEASE, 10)).toEqual([]);
  });

  it("fails the request with Slack's reason when Slack refuses the recovered post for good", async () => {
    const { id } = await create(a);
    const b = instance();
    b.messenger.postWith = async () => {
      throw new PermanentDeliveryError("channel_not_found");
    };
    vi.setSystemTime(T0 + LEASE);
    await b.service.recoverUnposted();
    await b.service.idle();
    expect(await b.service.get(id)).toMatchObject({ status: "failed", error: "channel_not_found" });
  });

  it("forgets, without posting, a claimed id whose request already has its message, has ended or is gone", async () => {
    const memory = createMemoryStore({ now: () => Date.now() });
    const forgotten: string[] = [];
    const h = instance({
      ...memory,
      claim: async (queue, ...claim) =>
        queue === "posting" ? ["req-1", "req-2", "req-gone"].map((id) => ({ key: id, id, attempts: 0 })) : memory.claim(queue, ...claim),
      complete: async (queue, key) => {
        if (queue === "posting") forgotten.push(key);
        return memory.complete(queue, key);
      },
    });
    await create(h);
    await create(h);
    await h.service.idle();
    await h.service.cancel("req-2", "agent");
    h.messenger.posts.length = 0;
    expect(await h.service.recoverUnposted()).toBe(0);
    await h.service.idle();
    expect(h.messenger.posts).toEqual([]);
    expect(forgotten).toEqual(["req-1", "req-2", "req-gone"]);
  });

  it("goes on with the other claimed ids when reading one fails", async () => {
    const memory = createMemoryStore({ now: () => Date.now() });
    const h = instance({
      ...memory,
      get: async (id) => {
        if (id === "req-1") throw new Error("stored request is unreadable");
        return memory.get(id);
      },
    });
    dying(h);
    await create(h);
    await create(h);
    const b = instance(h.store);
    vi.setSystemTime(T0 + LEASE);
    expect(await b.service.recoverUnposted()).toBe(1);
    expect(b.messenger.posts.map((r) => r.id)).toEqual(["req-2"]);
  });
});

describe("the sweeper", () => {
  it("posts a request left unposted within one tick after the lease has run out", async () => {
    const { id } = await create(a);
    const b = instance();
    const stop = b.service.startSweeper(1000);
    await vi.advanceTimersByTimeAsync(LEASE - 1000);
    expect(b.messenger.posts).toEqual([]);
    await vi.advanceTimersByTimeAsync(1000);
    await flush();
    await b.service.idle();
    stop();
    expect(b.messenger.posts.map((r) => r.id)).toEqual([id]);
    expect((await b.service.get(id))?.slack).toBeDefined();
  });

  it("still recovers when the expiry sweep of the same tick fails", async () => {
    await create(a);
    const b = instance({
      ...a.store,
      dueForExpiry: async () => {
        throw new Error("connection reset");
      },
    });
    const stop = b.service.startSweeper(1000);
    await vi.advanceTimersByTimeAsync(LEASE);
    await flush();
    await b.service.idle();
    stop();
    expect(b.messenger.posts).toHaveLength(1);
  });
});
