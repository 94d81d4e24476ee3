/**
 * RequestService long-polls: wait returns when the request ends, when its
 * own time is up, on abort, at the request's expiry and on close(); no
 * answer slips between reading and subscribing; idle() covers Slack work.
 */
import { describe, expect, it, vi } from "vitest";
import { createMemoryStore } from "../../../src/store/memory-store.js";
import { StoreUnavailableError } from "../../../src/requests/errors.js";
import { STORE_RETRY_INTERVAL_MS, type RequestStore } from "../../../src/requests/store.js";
import { ALLOW, bodyOf, deferred, flush, T0, useHarness, watch } from "../../helpers/service-harness.js";
import { ALICE } from "../../fixtures/people.js";

const h = useHarness();

const create = async (fields: Record<string, unknown> = {}) => (await h.service.create({ tokenName: "ci-bot", body: bodyOf(fields) })).record;

describe("wait", () => {
  it("returns at once when the request has already ended", async () => {
    const { id } = await create();
    await h.service.answer(id, ALLOW, ALICE);
    const wait = watch(h.service.wait(id, 60_000));
    await flush();
    expect(wait.settled).toBe(true);
    expect(await wait.value).toMatchObject({ status: "answered", decision: ALLOW });
    expect(h.service.waiting).toBe(0);
  });

  it("returns undefined at once for an unknown id", async () => {
    const wait = watch(h.service.wait("req-404", 60_000));
    await flush();
    expect(wait.settled).toBe(true);
    expect(await wait.value).toBeUndefined();
  });

  it("wakes the waiting agent with the decision as soon as a person answers", async () => {
    const { id } = await create();
    const wait = watch(h.service.wait(id, 60_000));
    await flush();
    expect(wait.settled).toBe(false);
    expect(h.service.waiting).toBe(1);
    await h.service.answer(id, ALLOW, ALICE);
    await flush();
    expect(wait.settled).toBe(true);
    expect(await wait.value).toMatchObject({ status: "answered", decision: ALLOW, answeredBy: ALICE });
    expect(h.service.waiting).toBe(0);
  });

  it("wakes a waiting agent on this instance with the ended record, without reading the store again", async () => {
    const store = createMemoryStore({ now: () => Date.now() });
    const reads: string[] = [];
    h.replace({ store: { ...store, get: (id) => (reads.push(id), store.get(id)) } });
    const { id } = await create();
    const wait = watch(h.service.wait(id, 60_000));
    await flush();
    const readsBeforeAnswer = reads.length;
    await h.service.answer(id, ALLOW, ALICE);
    await flush();
    expect(wait.settled).toBe(true);
    expect(await wait.value).toMatchObject({ status: "answered", decision: ALLOW, answeredBy: ALICE });
    expect(reads.length).toBe(readsBeforeAnswer + 1);
  });

  it("wakes a waiting agent with the ended record even when the store's notification comes before the transition's reply", async () => {
    const store = createMemoryStore({ now: () => Date.now() });
    const listeners: Array<(id: string) => void> = [];
    const reads: string[] = [];
    h.replace({
      store: {
        ...store,
        get: (id) => (reads.push(id), store.get(id)),
        onEnded: (listener) => (listeners.push(listener), () => undefined),
        // As Redis may deliver it: the notification first, the script's reply after.
        transition: async (id, change) => {
          const result = await store.transition(id, change);
          listeners.forEach((listener) => listener(id));
          await flush();
          return result;
        },
      },
    });
    const { id } = await create();
    const wait = watch(h.service.wait(id, 60_000));
    await flush();
    const readsBeforeAnswer = reads.length;
    await h.service.answer(id, ALLOW, ALICE);
    await flush();
    expect(wait.settled).toBe(true);
    expect(await wait.value).toMatchObject({ status: "answered", decision: ALLOW, answeredBy: ALICE });
    expect(reads.length).toBe(readsBeforeAnswer + 1);
  });

  it("a notification held back while a transition was in flight still wakes the waiters when the transition fails", async () => {
    const store = createMemoryStore({ now: () => Date.now() });
    const listeners: Array<(id: string) => void> = [];
    h.replace({
      store: {
        ...store,
        onEnded: (listener) => (listeners.push(listener), () => undefined),
        transition: async (id, change) => {
          await store.transition(id, change);
          listeners.forEach((listener) => listener(id));
          throw new Error("the reply was lost");
        },
      },
    });
    const { id } = await create();
    const wait = watch(h.service.wait(id, 60_000));
    await flush();
    await expect(h.service.answer(id, ALLOW, ALICE)).rejects.toThrow("the reply was lost");
    await flush();
    expect(wait.settled).toBe(true);
    expect(await wait.value).toMatchObject({ status: "answered", decision: ALLOW });
  });

  it("answers the waiting agent before the Slack message update starts", async () => {
    const { id } = await create();
    await flush();
    const events: string[] = [];
    h.messenger.showEndedWith = async () => {
      events.push("message update");
    };
    const wait = h.service.wait(id, 60_000).then(() => events.push("agent answered"));
    await flush();
    await h.service.answer(id, ALLOW, ALICE);
    await wait;
    await h.service.idle();
    expect(events).toEqual(["agent answered", "message update"]);
  });

  it("wakes every waiter of the request, and only those", async () => {
    const a = await create();
    const b = await create();
    const first = watch(h.service.wait(a.id, 60_000));
    const second = watch(h.service.wait(a.id, 60_000));
    const other = watch(h.service.wait(b.id, 60_000));
    await flush();
    await h.service.cancel(a.id, "agent");
    await flush();
    expect([first.settled, second.settled, other.settled]).toEqual([true, true, false]);
    expect((await first.value)?.status).toBe("cancelled");
    expect(h.service.waiting).toBe(1);
  });

  it("returns the request still pending once waitMs pass, not before", async () => {
    const { id } = await create();
    const wait = watch(h.service.wait(id, 5_000));
    await vi.advanceTimersByTimeAsync(4_999);
    expect(wait.settled).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(wait.settled).toBe(true);
    expect((await wait.value)?.status).toBe("pending");
    expect(h.service.waiting).toBe(0);
  });

  it("returns at once with waitMs 0", async () => {
    const { id } = await create();
    const wait = watch(h.service.wait(id, 0));
    await flush();
    expect(wait.settled).toBe(true);
    expect((await wait.value)?.status).toBe("pending");
  });

  it("stops holding when the signal aborts", async () => {
    const { id } = await create();
    const controller = new AbortController();
    const wait = watch(h.service.wait(id, 60_000, controller.signal));
    await flush();
    controller.abort();
    await flush();
    expect(wait.settled).toBe(true);
    expect((await wait.value)?.status).toBe("pending");
    expect(h.service.waiting).toBe(0);
  });

  it("returns at once when the signal has already aborted", async () => {
    const { id } = await create();
    const wait = watch(h.service.wait(id, 60_000, AbortSignal.abort()));
    await flush();
    expect(wait.settled).toBe(true);
  });

  it("never holds past the request's expiry: it returns the request expired", async () => {
    const { id } = await create({ timeoutSeconds: 2 });
    const wait = watch(h.service.wait(id, 60_000));
    await vi.advanceTimersByTimeAsync(1_999);
    expect(wait.settled).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(wait.settled).toBe(true);
    expect(await wait.value).toMatchObject({ status: "expired", endedAt: T0 + 2_000 });
  });

  it("does not miss an answer that lands between its first read and parking", async () => {
    const inner = createMemoryStore({ now: () => Date.now() });
    let afterRead: (() => Promise<unknown>) | undefined;
    const store: RequestStore = {
      ...inner,
      async get(id) {
        const record = await inner.get(id);
        const hook = afterRead;
        afterRead = undefined;
        await hook?.();
        return record;
      },
    };
    h.replace({ store });
    const { id } = await create();
    afterRead = () => inner.transition(id, { status: "answered", decision: ALLOW, answeredBy: ALICE, at: Date.now() });
    const wait = watch(h.service.wait(id, 60_000));
    await flush();
    expect(wait.settled).toBe(true);
    expect(await wait.value).toMatchObject({ status: "answered", decision: ALLOW });
  });
});

describe("wait while the store is away", () => {
  /** The memory store, with reads failing as an unreachable store's do while `down`. */
  function flakyStore() {
    const inner = createMemoryStore({ now: () => Date.now() });
    const state = { down: false, reads: 0 };
    const store: RequestStore = {
      ...inner,
      async get(id) {
        state.reads += 1;
        if (state.down) throw new StoreUnavailableError("test: store down");
        return inner.get(id);
      },
    };
    h.replace({ store });
    return { inner, state };
  }

  it("fails at once when the first read fails: nothing is known", async () => {
    const { state } = flakyStore();
    const { id } = await create();
    state.down = true;
    const error = await h.service.wait(id, 60_000).then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(StoreUnavailableError);
    expect((error as StoreUnavailableError).lastKnown).toBeUndefined();
    expect(h.service.waiting).toBe(0);
  });

  it("reads again every STORE_RETRY_INTERVAL_MS after a failed re-read, and answers once the store is back", async () => {
    const { inner, state } = flakyStore();
    const { id } = await create();
    const wait = watch(h.service.wait(id, 60_000));
    await flush();
    state.down = true;
    // The store notifies the end; the re-read it wakes fails.
    await inner.transition(id, { status: "answered", decision: ALLOW, answeredBy: ALICE, at: Date.now() });
    await flush();
    const failed = state.reads;
    await vi.advanceTimersByTimeAsync(STORE_RETRY_INTERVAL_MS - 1);
    expect(state.reads).toBe(failed);
    await vi.advanceTimersByTimeAsync(1);
    expect(state.reads).toBe(failed + 1);
    expect(wait.settled).toBe(false);
    state.down = false;
    await vi.advanceTimersByTimeAsync(STORE_RETRY_INTERVAL_MS);
    expect(wait.settled).toBe(true);
    expect(await wait.value).toMatchObject({ status: "answered", decision: ALLOW });
    expect(h.service.waiting).toBe(0);
  });

  it("answers what it last knew, the request pending, when the store is still away as the wait ends", async () => {
    const { state } = flakyStore();
    const { id } = await create();
    const wait = h.service.wait(id, 5_000);
    const outcome = wait.then(
      () => undefined,
      (error: unknown) => error,
    );
    await flush();
    state.down = true;
    await vi.advanceTimersByTimeAsync(5_000);
    const error = await outcome;
    expect(error).toBeInstanceOf(StoreUnavailableError);
    expect((error as StoreUnavailableError).lastKnown).toEqual({
      id,
      kind: "permission",
      status: "pending",
      createdAt: new Date(T0).toISOString(),
      expiresAt: expect.any(String),
      slack: expect.objectContaining({ channel: expect.any(String) }),
    });
    expect(h.service.waiting).toBe(0);
  });
});

describe("close", () => {
  it("releases every held wait at once with the request as it is, and the count drops to 0", async () => {
    const a = await create();
    const b = await create();
    const waits = [h.service.wait(a.id, 60_000), h.service.wait(a.id, 60_000), h.service.wait(b.id, 60_000)].map(watch);
    await flush();
    expect(h.service.waiting).toBe(3);
    h.service.close();
    await flush();
    expect(waits.map((w) => w.settled)).toEqual([true, true, true]);
    expect((await waits[0]!.value)?.status).toBe("pending");
    expect(h.service.waiting).toBe(0);
    expect(h.service.isClosed).toBe(true);
  });

  it("makes a wait started after close return at once", async () => {
    const { id } = await create();
    h.service.close();
    const wait = watch(h.service.wait(id, 60_000));
    await flush();
    expect(wait.settled).toBe(true);
  });
});

describe("idle", () => {
  it("resolves only once the background Slack post has finished", async () => {
    const post = deferred<{ channel: string; ts: string }>();
    h.messenger.postWith = () => post.promise;
    const { id } = await create();
    const idle = watch(h.service.idle());
    await flush();
    expect(idle.settled).toBe(false);
    post.resolve({ channel: "C0DEFAULT01", ts: "1700000000.000500" });
    await idle.value;
    expect((await h.store.get(id))?.slack).toEqual({ channel: "C0DEFAULT01", ts: "1700000000.000500" });
  });

  it("also waits for message updates started by the post it waits for", async () => {
    const post = deferred<{ channel: string; ts: string }>();
    const update = deferred<void>();
    h.messenger.postWith = () => post.promise;
    h.messenger.showEndedWith = () => update.promise;
    const { id } = await create();
    await h.service.cancel(id, "agent");
    post.resolve({ channel: "C0DEFAULT01", ts: "1700000000.000500" });
    const idle = watch(h.service.idle());
    await flush();
    expect(h.messenger.ended).toHaveLength(1);
    expect(idle.settled).toBe(false);
    update.resolve();
    await idle.value;
  });

  it("also waits for Slack work that starts while it is waiting", async () => {
    const first = await create();
    await h.service.idle();
    const post = deferred<{ channel: string; ts: string }>();
    const update = deferred<void>();
    h.messenger.postWith = () => post.promise;
    h.messenger.showEndedWith = () => update.promise;
    await create();
    const idle = watch(h.service.idle());
    await h.service.answer(first.id, ALLOW, ALICE);
    post.resolve({ channel: "C0DEFAULT01", ts: "1700000000.000500" });
    await flush();
    expect(h.messenger.ended.map((r) => r.id)).toEqual([first.id]);
    expect(idle.settled).toBe(false);
    update.resolve();
    await idle.value;
  });

  it("resolves at once when nothing runs in the background", async () => {
    const idle = watch(h.service.idle());
    await flush();
    expect(idle.settled).toBe(true);
  });
});
