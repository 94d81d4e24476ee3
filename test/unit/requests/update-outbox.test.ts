import { describe, expect, it } from "vitest";
import { silentLogger } from "../../../src/logger.js";
import { PermanentDeliveryError, TransientDeliveryError, type RequestMessenger } from "../../../src/requests/delivery.js";
import type { RequestRecord } from "../../../src/requests/model.js";
import { UPDATE_GRACE_MS } from "../../../src/requests/store.js";
import { UpdateOutbox } from "../../../src/requests/update-outbox.js";
import type { RequestStore } from "../../../src/requests/store.js";
import { onWorker } from "../../helpers/queue-worker.js";
import { createMemoryStore } from "../../../src/store/memory-store.js";
import { ALICE, BOB } from "../../fixtures/people.js";
import { FakeMessenger } from "../../helpers/fake-messenger.js";
import { deferred } from "../../helpers/service-harness.js";
import { recordOf } from "../../helpers/slack.js";

const T0 = 1_700_000_000_000;

/** An outbox on its own queue worker, as the service runs it; `runOnce` is one sweep, and says how many updates it settled. */
function outboxOn(store: RequestStore, messenger: Pick<RequestMessenger, "showEnded" | "findPosted">, now: () => number) {
  const { handler, runOnce } = onWorker(store, now, (worker) => new UpdateOutbox({ store, messenger, worker, logger: silentLogger, now }));
  return Object.assign(handler, { runOnce });
}

/** A memory store holding one answered request with a message, its update queued; a messenger whose showEnded runs `outcomes` in turn. */
async function setUp(outcomes: Array<() => Promise<void>>) {
  const clock = { t: T0 };
  const store = createMemoryStore({ now: () => clock.t });
  const shown: RequestRecord[] = [];
  const messenger: Pick<RequestMessenger, "showEnded"> = {
    showEnded: async (record) => {
      shown.push(record);
      await (outcomes.shift() ?? (async () => {}))();
    },
  };
  const pending = recordOf({ kind: "step_gate", toolName: "Bash", input: {} }, { createdAt: T0, expiresAt: T0 + 600_000 });
  const { slack, ...unposted } = pending;
  await store.create(unposted);
  await store.setSlackMessage(pending.id, slack!);
  const result = await store.transition(pending.id, { status: "answered", decision: { reply: "y" }, answeredBy: { id: ALICE.id }, at: T0 });
  const record = "record" in result ? result.record : pending;
  const outbox = outboxOn(store, messenger, () => clock.t);
  return { clock, store, shown, outbox, record };
}

describe("the message-update outbox", () => {
  it("an update that succeeds at once is done: no sweep tries it again", async () => {
    const { clock, shown, outbox, record } = await setUp([]);
    outbox.show(record);
    await outbox.idle();
    clock.t += 10 * UPDATE_GRACE_MS;
    expect(await outbox.runOnce()).toBe(0);
    expect(shown).toHaveLength(1);
  });

  it("after a 429 the update is tried again only once Retry-After has passed, and then it is done", async () => {
    const { clock, shown, outbox, record } = await setUp([
      async () => {
        throw new TransientDeliveryError("ratelimited", 7000);
      },
    ]);
    outbox.show(record);
    await outbox.idle();
    clock.t += 6999;
    expect(await outbox.runOnce()).toBe(0);
    clock.t += 1;
    expect(await outbox.runOnce()).toBe(1);
    expect(shown).toHaveLength(2);
    clock.t += 10 * UPDATE_GRACE_MS;
    expect(await outbox.runOnce()).toBe(0);
  });

  it("keeps retrying transient failures with growing waits, with no limit on attempts", async () => {
    const failures = Array.from({ length: 12 }, () => async () => {
      throw new TransientDeliveryError("http_503");
    });
    const { clock, shown, outbox, record } = await setUp(failures);
    outbox.show(record);
    await outbox.idle();
    while (shown.length < 13) {
      clock.t += 60_000;
      await outbox.runOnce();
    }
    clock.t += 60_000;
    expect(await outbox.runOnce()).toBe(0);
    expect(shown).toHaveLength(13);
  });

  it("a permanent refusal (the message was deleted) drops the update", async () => {
    const { clock, shown, outbox, record } = await setUp([
      async () => {
        throw new PermanentDeliveryError("message_not_found");
      },
    ]);
    outbox.show(record);
    await outbox.idle();
    clock.t += 10 * UPDATE_GRACE_MS;
    expect(await outbox.runOnce()).toBe(0);
    expect(shown).toHaveLength(1);
  });

  it("an update left behind by another instance is made by the sweep once due, with the stored record", async () => {
    const { clock, shown, outbox, record } = await setUp([]);
    clock.t += UPDATE_GRACE_MS;
    expect(await outbox.runOnce()).toBe(1);
    expect(shown.map((r) => [r.id, r.status])).toEqual([[record.id, "answered"]]);
  });
});

/**
 * Two instances (an outbox each) on one store and one Slack message: every
 * render lands in `landed` when Slack answers it; a render of a pending
 * record waits for `hold` while it is set.
 */
async function twoInstances(quorum: number) {
  const clock = { t: T0 };
  const store = createMemoryStore({ now: () => clock.t });
  const landed: RequestRecord[] = [];
  const gate: { hold?: Promise<void> } = {};
  const messenger = new FakeMessenger();
  messenger.showEndedWith = async (record) => {
    if (record.status === "pending" && gate.hold) await gate.hold;
    landed.push(record);
  };
  const outbox = (over: RequestStore = store) => outboxOn(over, messenger, () => clock.t);
  const request = recordOf({ kind: "step_gate", toolName: "Bash", input: {} }, { createdAt: T0, expiresAt: T0 + 600_000 });
  await store.create(request);
  const approve = async (person: string) => {
    const result = await store.approve(request.id, { person: { id: person }, at: clock.t }, quorum, {
      status: "answered",
      decision: { reply: "y" },
      answeredBy: { id: person },
      at: clock.t,
    });
    if (!("record" in result)) throw new Error(`approve was ${result.outcome}`);
    return result.record;
  };
  const shown = () => landed.map((record) => `${record.status} ${record.approvals?.length ?? 0}`);
  /** The updates any sweep would still find, long after everything settled. */
  const leftQueued = () => store.claim("updates", (clock.t += 10 * UPDATE_GRACE_MS), 30_000, 10);
  return { clock, store, gate, outbox, approve, shown, landed, leftQueued };
}

describe("the message-update outbox with approvals counted on several instances", () => {
  it("when the request ends on B while A shows it pending, A's late render is followed by the ended message", async () => {
    const { gate, outbox, approve, shown, leftQueued } = await twoInstances(2);
    const [a, b] = [outbox(), outbox()];
    const held = deferred<void>();
    gate.hold = held.promise;
    a.show(await approve(ALICE.id), { later: false });
    b.show(await approve(BOB.id), { later: false });
    await b.idle();
    expect(shown()).toStrictEqual(["answered 2"]);
    held.resolve();
    await a.idle();
    expect(shown()).toStrictEqual(["answered 2", "pending 1", "answered 2"]);
    expect(await leftQueued()).toStrictEqual([]);
  });

  it("when B counts another approval while A shows the first, A shows the request again with both", async () => {
    const { gate, outbox, approve, shown, leftQueued } = await twoInstances(3);
    const [a, b] = [outbox(), outbox()];
    const held = deferred<void>();
    gate.hold = held.promise;
    a.show(await approve(ALICE.id), { later: false });
    const second = await approve(BOB.id);
    gate.hold = undefined;
    b.show(second, { later: false });
    await b.idle();
    held.resolve();
    await a.idle();
    expect(shown()).toStrictEqual(["pending 2", "pending 1", "pending 2"]);
    expect(await leftQueued()).toStrictEqual([]);
  });

  it("a pending render that lands before the request changes is done, and the ended one follows from whoever ends it", async () => {
    const { outbox, approve, shown, leftQueued } = await twoInstances(2);
    const [a, b] = [outbox(), outbox()];
    a.show(await approve(ALICE.id), { later: false });
    await a.idle();
    b.show(await approve(BOB.id), { later: false });
    await b.idle();
    expect(shown()).toStrictEqual(["pending 1", "answered 2"]);
    expect(await leftQueued()).toStrictEqual([]);
  });

  it("when the request ends here just after its pending render was completed, the ended message follows at once, not at the next sweep", async () => {
    const { store, outbox, approve, shown, leftQueued } = await twoInstances(2);
    let endHere: (() => Promise<void>) | undefined;
    const a = outbox({
      ...store,
      async completePendingUpdate(id, shownApprovals, retryAt) {
        const done = await store.completePendingUpdate(id, shownApprovals, retryAt);
        const end = endHere;
        endHere = undefined;
        await end?.();
        return done;
      },
    });
    endHere = async () => a.show(await approve(BOB.id), { later: false });
    a.show(await approve(ALICE.id), { later: false });
    await a.idle();
    expect(shown()).toStrictEqual(["pending 1", "answered 2"]);
    expect(await leftQueued()).toStrictEqual([]);
  });

  it("the update of a counted approval left behind by an instance that died is made by another's sweep, showing the count", async () => {
    const { clock, outbox, approve, shown } = await twoInstances(2);
    await approve(ALICE.id);
    const sweeper = outbox();
    expect(await sweeper.runOnce()).toBe(0);
    clock.t += UPDATE_GRACE_MS;
    expect(await sweeper.runOnce()).toBe(1);
    expect(shown()).toStrictEqual(["pending 1"]);
    clock.t += 10 * UPDATE_GRACE_MS;
    expect(await sweeper.runOnce()).toBe(0);
  });

  it("when A's pending render fails and the request ends meanwhile, the sweep's retry shows it ended", async () => {
    const { clock, outbox, approve, shown, store } = await twoInstances(2);
    const a = outbox();
    const messengerFails = async () => {
      throw new TransientDeliveryError("http_503");
    };
    const failing = outboxOn(store, { showEnded: messengerFails }, () => clock.t);
    failing.show(await approve(ALICE.id), { later: false });
    await failing.idle();
    await approve(BOB.id);
    clock.t += UPDATE_GRACE_MS;
    expect(await a.runOnce()).toBe(1);
    expect(shown()).toStrictEqual(["answered 2"]);
  });
});

describe("the message-update outbox when a request is given more time", () => {
  const deadline = (record: RequestRecord) => `${record.status} until ${record.expiresAt - T0}`;

  /** Instance A's render of a counted approval held in flight, and the request then given 30 more minutes (`moved`). */
  async function shownThenMoved() {
    const instances = await twoInstances(3);
    const a = instances.outbox();
    const held = deferred<void>();
    instances.gate.hold = held.promise;
    const counted = await instances.approve(ALICE.id);
    a.show(counted, { later: false });
    const result = await instances.store.extend(counted.id, counted.expiresAt + 1_800_000);
    if (result.outcome !== "applied") throw new Error(`extend was ${result.outcome}`);
    return { ...instances, a, held, moved: result.record };
  }

  it("when B moves the deadline while A shows the approval with the old one, A shows the request again with the new deadline", async () => {
    const { gate, a, outbox, landed, leftQueued, held, moved } = await shownThenMoved();
    const b = outbox();
    gate.hold = undefined;
    b.show(moved, { later: false });
    await b.idle();
    held.resolve();
    await a.idle();
    expect(landed.map(deadline)).toStrictEqual(["pending until 2400000", "pending until 600000", "pending until 2400000"]);
    expect(await leftQueued()).toStrictEqual([]);
  });

  it("a newer deadline handed to show while this instance renders the old one is shown right after it", async () => {
    const { gate, a, landed, leftQueued, held, moved } = await shownThenMoved();
    a.show(moved, { later: false });
    gate.hold = undefined;
    held.resolve();
    await a.idle();
    expect(landed.map(deadline)).toStrictEqual(["pending until 600000", "pending until 2400000"]);
    expect(await leftQueued()).toStrictEqual([]);
  });
});

describe("the update of a request that ended while still being posted (its poster may have died after Slack took the message)", () => {
  const ts = "1700000001.000100";

  /** A memory store holding one request that expired before its message was recorded; a messenger whose findPosted runs `lookups` in turn. */
  async function unpostedSetUp(lookups: Array<() => Promise<Array<{ channel: string; ts: string }>>>) {
    const clock = { t: T0 };
    const store = createMemoryStore({ now: () => clock.t });
    const shown: RequestRecord[] = [];
    const looked: RequestRecord[] = [];
    const messenger: Pick<RequestMessenger, "showEnded" | "findPosted"> = {
      showEnded: async (record) => void shown.push(record),
      findPosted: async (record) => (looked.push(record), (lookups.shift() ?? (async () => []))()),
    };
    const { slack: _slack, ...unposted } = recordOf({ kind: "step_gate", toolName: "Bash", input: {} }, { createdAt: T0, expiresAt: T0 + 1000 });
    await store.create(unposted);
    clock.t = T0 + 1000;
    const result = await store.transition(unposted.id, { status: "expired", at: clock.t });
    if (result.outcome !== "applied") throw new Error(`expiry was ${result.outcome}`);
    const outbox = outboxOn(store, messenger, () => clock.t);
    return { clock, store, shown, looked, outbox, record: result.record };
  }

  it("is left to its queued entry, which finds the message in the channel's history, records it as a copy and shows it ended", async () => {
    const { clock, store, shown, looked, outbox, record } = await unpostedSetUp([async () => [{ channel: record.channel, ts }]]);
    outbox.show(record);
    await outbox.idle();
    expect(looked).toStrictEqual([]);
    clock.t += UPDATE_GRACE_MS;
    expect(await outbox.runOnce()).toBe(1);
    expect(looked.map((r) => r.id)).toStrictEqual([record.id]);
    expect(shown.map((r) => [r.status, r.slack, r.otherMessages])).toStrictEqual([["expired", undefined, [{ channel: record.channel, ts }]]]);
    expect(await store.findBySlackMessage({ channel: record.channel, ts })).toBe(record.id);
    clock.t += 10 * UPDATE_GRACE_MS;
    expect(await outbox.runOnce()).toBe(0);
  });

  it("when the history shows no message of it, nothing is shown and the update is done", async () => {
    const { clock, shown, looked, outbox } = await unpostedSetUp([]);
    clock.t += UPDATE_GRACE_MS;
    expect(await outbox.runOnce()).toBe(1);
    expect(looked).toHaveLength(1);
    expect(shown).toStrictEqual([]);
    clock.t += 10 * UPDATE_GRACE_MS;
    expect(await outbox.runOnce()).toBe(0);
  });

  it("when Slack does not answer the look-up (429), it is tried again after Retry-After", async () => {
    const { clock, shown, looked, outbox, record } = await unpostedSetUp([
      async () => {
        throw new TransientDeliveryError("ratelimited", 5000);
      },
      async () => [{ channel: record.channel, ts }],
    ]);
    clock.t += UPDATE_GRACE_MS;
    expect(await outbox.runOnce()).toBe(1);
    expect(shown).toStrictEqual([]);
    clock.t += 4999;
    expect(await outbox.runOnce()).toBe(0);
    clock.t += 1;
    expect(await outbox.runOnce()).toBe(1);
    expect(looked).toHaveLength(2);
    expect(shown).toHaveLength(1);
  });
});
