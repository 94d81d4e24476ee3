/**
 * The store contract for docs/architecture.md §7, run from store-contract.ts against
 * every store: approvals counted towards a quorum (one atomic step with the
 * final answer), pending message updates, the reminder queue (leased like
 * the callbacks, dropped by every step that ends a request) and the listing.
 */
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { Approval } from "../../src/requests/model.js";
import { entryKey, UPDATE_GRACE_MS, type AnsweredTransition, type Transition } from "../../src/requests/store.js";
import type { OpenStore } from "./store-contract.js";
import { claimedKeys } from "./queue-entries.js";
import { ALICE, BOB, CAROL, DAVE, MALLORY } from "../fixtures/people.js";
import { until } from "./until.js";

const LEASE_MS = 30_000;
const FAR = 10 * 60_000;
const slack = (n: number) => ({ channel: "C0123456789", ts: `1800000000.00020${n}` });

export function runPolicyContract(open: OpenStore): void {
  const approval = (id: string, at: number): Approval => ({ person: { id, name: `name of ${id}` }, at });
  const final = (at: number, id = BOB.id): AnsweredTransition => ({ status: "answered", decision: { reply: "y" }, answeredBy: { id }, at });

  describe("approvals", () => {
    it("an approval short of the quorum is counted: the request stays pending with it, and its message update is queued", async () => {
      const { store, created, clock } = await open();
      const request = await created({ slack: slack(1) });
      const first = approval(ALICE.id, clock.t + 5);
      const result = await store.approve(request.id, first, 2, final(clock.t + 5, ALICE.id));
      expect(result).toStrictEqual({ outcome: "counted", record: { ...request, approvals: [first] } });
      expect(await store.get(request.id)).toStrictEqual({ ...request, approvals: [first] });
      expect(await store.claim("updates", clock.t + 5 + UPDATE_GRACE_MS - 1, LEASE_MS, 10)).toStrictEqual([]);
      expect(await store.claim("updates", clock.t + 5 + UPDATE_GRACE_MS, LEASE_MS, 10)).toStrictEqual([{ key: request.id, id: request.id, attempts: 0 }]);
      expect(await store.dueForExpiry(request.expiresAt, 10)).toStrictEqual([request.id]);
    });

    it("a counted approval of a request without a Slack message queues no update", async () => {
      const { store, created, clock } = await open();
      const request = await created();
      expect((await store.approve(request.id, approval(ALICE.id, clock.t), 2, final(clock.t))).outcome).toBe("counted");
      expect(await store.claim("updates", clock.t + FAR, LEASE_MS, 10)).toStrictEqual([]);
    });

    it("the same person approving again is a duplicate and changes nothing", async () => {
      const { store, created, clock } = await open();
      const request = await created();
      const first = approval(ALICE.id, clock.t);
      await store.approve(request.id, first, 2, final(clock.t, ALICE.id));
      const again = await store.approve(request.id, approval(ALICE.id, clock.t + 9), 2, final(clock.t + 9, ALICE.id));
      expect(again).toStrictEqual({ outcome: "duplicate", record: { ...request, approvals: [first] } });
      expect(await store.get(request.id)).toStrictEqual({ ...request, approvals: [first] });
    });

    it("the approval that makes the quorum answers the request with every approval in the record, oldest first, as an answer does", async () => {
      const { store, created, clock } = await open();
      const request = await created({
        slack: slack(2),
        body: { kind: "step_gate", toolName: "Bash", input: {}, callbackUrl: "https://hooks.example.com/relay" },
      });
      const seen: string[] = [];
      store.onEnded((id) => seen.push(id));
      const approvals = [approval(CAROL.id, clock.t), approval(ALICE.id, clock.t), approval(BOB.id, clock.t)];
      for (const counted of approvals.slice(0, 2)) await store.approve(request.id, counted, 3, final(clock.t));
      const result = await store.approve(request.id, approvals[2]!, 3, final(clock.t + 1, BOB.id));
      const answered = { ...request, approvals, status: "answered", decision: { reply: "y" }, answeredBy: { id: BOB.id }, endedAt: clock.t + 1 };
      expect(result).toStrictEqual({ outcome: "applied", record: answered });
      expect(await store.get(request.id)).toStrictEqual(answered);
      await until(() => seen.includes(request.id), 2000, "the ended notification");
      expect(await store.dueForExpiry(request.expiresAt, 10)).toStrictEqual([]);
      expect(await store.claim("callbacks", clock.t + 1, LEASE_MS, 10)).toStrictEqual([{ key: request.id, id: request.id, attempts: 0 }]);
      expect(await store.claim("updates", clock.t + 1 + UPDATE_GRACE_MS, LEASE_MS, 10)).toStrictEqual([{ key: request.id, id: request.id, attempts: 0 }]);
    });

    it("a quorum of 1 answers at the first approval and takes the request out of the posting set", async () => {
      const { store, created, clock } = await open();
      const request = await created();
      const result = await store.approve(request.id, approval(ALICE.id, clock.t), 1, final(clock.t, ALICE.id));
      expect(result).toMatchObject({ outcome: "applied", record: { status: "answered", approvals: [approval(ALICE.id, clock.t)] } });
      expect(await claimedKeys(store, "posting", clock.t + FAR, LEASE_MS, 10)).toStrictEqual([]);
    });

    it("a deny through transition while approvals are counted ends the request, keeps them, and later approvals are already_ended", async () => {
      const { store, created, clock } = await open();
      const request = await created();
      const first = approval(ALICE.id, clock.t);
      await store.approve(request.id, first, 2, final(clock.t, ALICE.id));
      const veto: Transition = { status: "answered", decision: { reply: "n" }, answeredBy: { id: CAROL.id }, at: clock.t + 2 };
      const denied = await store.transition(request.id, veto);
      const ended = { ...request, approvals: [first], status: "answered", decision: { reply: "n" }, answeredBy: { id: CAROL.id }, endedAt: clock.t + 2 };
      expect(denied).toStrictEqual({ outcome: "applied", record: ended });
      expect(await store.approve(request.id, approval(BOB.id, clock.t + 3), 2, final(clock.t + 3))).toStrictEqual({ outcome: "already_ended", record: ended });
      expect(await store.approve(request.id, first, 2, final(clock.t + 3, ALICE.id))).toStrictEqual({ outcome: "already_ended", record: ended });
      expect(await store.get(request.id)).toStrictEqual(ended);
    });

    it("an approval of a request that ended otherwise is already_ended and changes nothing", async () => {
      const { store, created, clock } = await open();
      const request = await created();
      const cancelled = await store.transition(request.id, { status: "cancelled", at: clock.t, by: "agent" });
      if (cancelled.outcome !== "applied") throw new Error(`cancel was ${cancelled.outcome}`);
      expect(await store.approve(request.id, approval(ALICE.id, clock.t), 1, final(clock.t))).toStrictEqual({
        outcome: "already_ended",
        record: cancelled.record,
      });
      expect(await store.get(request.id)).toStrictEqual(cancelled.record);
    });

    it("an approval of an unknown id is not_found and creates nothing", async () => {
      const { store, clock } = await open();
      const id = randomUUID();
      expect(await store.approve(id, approval(ALICE.id, clock.t), 2, final(clock.t))).toStrictEqual({ outcome: "not_found" });
      expect(await store.get(id)).toBeUndefined();
    });

    it("when five people approve at once with a quorum of 3, two are counted, one answers and two find it ended", async () => {
      const { store, created, clock } = await open();
      const request = await created();
      const people = [ALICE.id, BOB.id, CAROL.id, DAVE.id, MALLORY.id];
      const results = await Promise.all(people.map((id) => store.approve(request.id, approval(id, clock.t), 3, final(clock.t, id))));
      expect(results.map((result) => result.outcome).sort()).toStrictEqual(["already_ended", "already_ended", "applied", "counted", "counted"]);
      const stored = await store.get(request.id);
      expect(stored?.approvals).toHaveLength(3);
      expect(stored?.answeredBy?.id).toBe(stored?.approvals?.[2]?.person.id);
    });
  });

  describe("pending message updates", () => {
    it("an update shown while the request is as it was is forgotten", async () => {
      const { store, created, clock } = await open();
      const request = await created({ slack: slack(3) });
      await store.approve(request.id, approval(ALICE.id, clock.t), 2, final(clock.t));
      expect(await store.completePendingUpdate(request.id, 1, clock.t + LEASE_MS)).toBe(true);
      expect(await store.claim("updates", clock.t + FAR, LEASE_MS, 10)).toStrictEqual([]);
    });

    it("when the request ended after it was shown pending, the update is queued again, due at the given time, even after it was completed", async () => {
      const { store, created, clock } = await open();
      const request = await created({ slack: slack(4) });
      await store.approve(request.id, approval(ALICE.id, clock.t), 2, final(clock.t));
      await store.approve(request.id, approval(BOB.id, clock.t), 2, final(clock.t));
      expect(await store.complete("updates", request.id)).toBe(true);
      expect(await store.completePendingUpdate(request.id, 1, clock.t + 7)).toBe(false);
      expect(await store.claim("updates", clock.t + 6, LEASE_MS, 10)).toStrictEqual([]);
      expect(await store.claim("updates", clock.t + 7, LEASE_MS, 10)).toStrictEqual([{ key: request.id, id: request.id, attempts: 0 }]);
    });

    it("when another approval was counted after it was shown, the update stays queued", async () => {
      const { store, created, clock } = await open();
      const request = await created({ slack: slack(5) });
      await store.approve(request.id, approval(ALICE.id, clock.t), 3, final(clock.t));
      await store.approve(request.id, approval(BOB.id, clock.t), 3, final(clock.t));
      expect(await store.completePendingUpdate(request.id, 1, clock.t + 7)).toBe(false);
      expect(await store.claim("updates", clock.t + 7, LEASE_MS, 10)).toStrictEqual([{ key: request.id, id: request.id, attempts: 0 }]);
      expect(await store.completePendingUpdate(request.id, 2, clock.t + 7)).toBe(true);
      expect(await store.claim("updates", clock.t + FAR, LEASE_MS, 10)).toStrictEqual([]);
    });

    it("the update of a request that is gone is forgotten", async () => {
      const { store, clock } = await open();
      expect(await store.completePendingUpdate(randomUUID(), 0, clock.t)).toBe(true);
      expect(await store.claim("updates", clock.t + FAR, LEASE_MS, 10)).toStrictEqual([]);
    });
  });

  describe("reminder queue", () => {
    const twoReminders = (t: number) => ({
      postedAt: t + 5,
      reminders: [
        { index: 0, dueAt: t + 300 },
        { index: 1, dueAt: t + 100 },
      ],
    });

    it("recording the message of a pending request records postedAt and queues its reminders, each handed out once due, earliest first", async () => {
      const { store, created, clock } = await open();
      const request = await created();
      const posted = await store.setSlackMessage(request.id, slack(1), twoReminders(clock.t));
      expect(posted).toStrictEqual({ ...request, slack: slack(1), postedAt: clock.t + 5 });
      expect(await store.get(request.id)).toStrictEqual(posted);
      expect(await store.claim("reminders", clock.t + 99, LEASE_MS, 10)).toStrictEqual([]);
      expect(await store.claim("reminders", clock.t + 100, LEASE_MS, 10)).toStrictEqual([{ key: entryKey(request.id, 1), id: request.id, attempts: 0 }]);
      expect(await store.claim("reminders", clock.t + 300, LEASE_MS, 10)).toStrictEqual([{ key: entryKey(request.id, 0), id: request.id, attempts: 0 }]);
    });

    it("claims at most `limit`, earliest due first, and nothing for a limit of 0", async () => {
      const { store, created, clock } = await open();
      const [a, b] = [await created(), await created()];
      await store.setSlackMessage(a.id, slack(1), { reminders: [{ index: 0, dueAt: clock.t + 3 }] });
      await store.setSlackMessage(b.id, slack(2), {
        reminders: [
          { index: 0, dueAt: clock.t + 1 },
          { index: 1, dueAt: clock.t + 2 },
        ],
      });
      expect(await store.claim("reminders", clock.t + 5, LEASE_MS, 0)).toStrictEqual([]);
      expect(await store.claim("reminders", clock.t + 5, LEASE_MS, 2)).toStrictEqual([
        { key: entryKey(b.id, 0), id: b.id, attempts: 0 },
        { key: entryKey(b.id, 1), id: b.id, attempts: 0 },
      ]);
      expect(await store.claim("reminders", clock.t + 5, LEASE_MS, 2)).toStrictEqual([{ key: entryKey(a.id, 0), id: a.id, attempts: 0 }]);
    });

    it("queues nothing and records no postedAt for a request that already ended", async () => {
      const { store, created, clock } = await open();
      const request = await created();
      await store.transition(request.id, { status: "cancelled", at: clock.t });
      const posted = await store.setSlackMessage(request.id, slack(1), twoReminders(clock.t));
      expect(posted?.postedAt).toBeUndefined();
      expect(await store.claim("reminders", clock.t + FAR, LEASE_MS, 10)).toStrictEqual([]);
    });

    it("recording the message again keeps the first postedAt and queues nothing again, so a sent reminder never comes back", async () => {
      const { store, created, clock } = await open();
      const request = await created();
      await store.setSlackMessage(request.id, slack(1), twoReminders(clock.t));
      expect(await store.claim("reminders", clock.t + 100, LEASE_MS, 10)).toHaveLength(1);
      expect(await store.complete("reminders", entryKey(request.id, 1))).toBe(true);
      const again = await store.setSlackMessage(request.id, slack(2), {
        postedAt: clock.t + 50,
        reminders: [...twoReminders(clock.t).reminders, { index: 2, dueAt: clock.t }],
      });
      expect(again).toMatchObject({ slack: slack(2), postedAt: clock.t + 5 });
      expect(await store.claim("reminders", clock.t + FAR, LEASE_MS, 10)).toStrictEqual([{ key: entryKey(request.id, 0), id: request.id, attempts: 0 }]);
    });

    it("a claimed reminder comes back only when its lease runs out; a retry sets when and the attempts; a completed one never comes back", async () => {
      const { store, created, clock } = await open();
      const request = await created();
      await store.setSlackMessage(request.id, slack(1), { reminders: [{ index: 4, dueAt: clock.t }] });
      expect(await store.claim("reminders", clock.t, LEASE_MS, 10)).toHaveLength(1);
      expect(await store.claim("reminders", clock.t + LEASE_MS - 1, LEASE_MS, 10)).toStrictEqual([]);
      expect(await store.claim("reminders", clock.t + LEASE_MS, LEASE_MS, 10)).toStrictEqual([{ key: entryKey(request.id, 4), id: request.id, attempts: 0 }]);
      expect(await store.retry("reminders", entryKey(request.id, 4), clock.t + 5, 2)).toBe(true);
      expect(await store.claim("reminders", clock.t + 5, LEASE_MS, 10)).toStrictEqual([{ key: entryKey(request.id, 4), id: request.id, attempts: 2 }]);
      expect(await store.complete("reminders", entryKey(request.id, 4))).toBe(true);
      expect(await store.complete("reminders", entryKey(request.id, 4))).toBe(false);
      expect(await store.retry("reminders", entryKey(request.id, 4), clock.t, 3)).toBe(false);
      expect(await store.retry("reminders", entryKey(request.id, 0), clock.t, 1)).toBe(false);
      expect(await store.claim("reminders", clock.t + FAR, LEASE_MS, 10)).toStrictEqual([]);
    });

    it("each step that ends a request drops its queued reminders; a counted approval keeps them, and other requests keep theirs", async () => {
      const { store, created, clock } = await open();
      const kept = await created();
      const [a, b, c, d, e] = [await created(), await created({ expiresAt: clock.t }), await created(), await created(), await created()];
      for (const request of [kept, a, b, c, d, e]) await store.setSlackMessage(request.id, slack(1), twoReminders(clock.t));
      await store.transition(a.id, { status: "answered", decision: { reply: "y" }, answeredBy: { id: ALICE.id }, at: clock.t });
      await store.transition(b.id, { status: "expired", at: clock.t });
      await store.transition(c.id, { status: "cancelled", at: clock.t });
      await store.transition(d.id, { status: "failed", at: clock.t, error: "channel_not_found" });
      expect((await store.approve(e.id, approval(ALICE.id, clock.t), 2, final(clock.t))).outcome).toBe("counted");
      expect((await store.approve(kept.id, approval(ALICE.id, clock.t), 2, final(clock.t))).outcome).toBe("counted");
      expect((await store.approve(e.id, approval(BOB.id, clock.t), 2, final(clock.t))).outcome).toBe("applied");
      const claimed = await store.claim("reminders", clock.t + FAR, LEASE_MS, 100);
      expect(claimed).toStrictEqual([
        { key: entryKey(kept.id, 1), id: kept.id, attempts: 0 },
        { key: entryKey(kept.id, 0), id: kept.id, attempts: 0 },
      ]);
      for (const ended of [a, b, c, d, e]) {
        expect(await store.retry("reminders", entryKey(ended.id, 0), clock.t, 1)).toBe(false);
        expect(await store.complete("reminders", entryKey(ended.id, 1))).toBe(false);
      }
    });

    it("when 10 claims race, each queued reminder is handed out once", async () => {
      const { store, created, clock } = await open();
      const requests = await Promise.all(Array.from({ length: 3 }, () => created()));
      for (const request of requests) await store.setSlackMessage(request.id, slack(1), twoReminders(clock.t));
      const claims = await Promise.all(Array.from({ length: 10 }, () => store.claim("reminders", clock.t + 300, LEASE_MS, 1)));
      const claimed = claims.flat().map(({ key }) => key);
      expect(claimed.sort()).toStrictEqual(requests.flatMap(({ id }) => [entryKey(id, 0), entryKey(id, 1)]).sort());
    });
  });

  describe("listing", () => {
    /** Requests created 1 s apart, oldest first: two pending (ci), one answered (ci), one cancelled (deploy), one pending (deploy). */
    async function history(openStore: Awaited<ReturnType<OpenStore>>) {
      const { store, created, clock } = openStore;
      const at = (n: number) => clock.t - 10_000 + n * 1000;
      const made = [
        await created({ createdAt: at(0) }),
        await created({ createdAt: at(1) }),
        await created({ createdAt: at(2) }),
        await created({ createdAt: at(3), tokenName: "deploy" }),
        await created({ createdAt: at(4), tokenName: "deploy" }),
      ];
      await store.transition(made[2]!.id, { status: "answered", decision: { reply: "y" }, answeredBy: { id: ALICE.id }, at: clock.t });
      await store.transition(made[3]!.id, { status: "cancelled", at: clock.t });
      return Promise.all(made.map(async ({ id }) => (await store.get(id))!));
    }

    it("lists every request newest first, up to the limit, as get returns them", async () => {
      const opened = await open();
      const made = await history(opened);
      expect(await opened.store.listRequests({ limit: 10 })).toStrictEqual([...made].reverse());
      expect(await opened.store.listRequests({ limit: 3 })).toStrictEqual([made[4], made[3], made[2]]);
      expect(await opened.store.listRequests({ limit: 0 })).toStrictEqual([]);
    });

    it("filters by status", async () => {
      const opened = await open();
      const made = await history(opened);
      expect(await opened.store.listRequests({ status: "pending", limit: 10 })).toStrictEqual([made[4], made[1], made[0]]);
      expect(await opened.store.listRequests({ status: "pending", limit: 2 })).toStrictEqual([made[4], made[1]]);
      expect(await opened.store.listRequests({ status: "answered", limit: 10 })).toStrictEqual([made[2]]);
      expect(await opened.store.listRequests({ status: "expired", limit: 10 })).toStrictEqual([]);
    });

    it("filters by the token that created the request", async () => {
      const opened = await open();
      const made = await history(opened);
      expect(await opened.store.listRequests({ tokenName: "deploy", limit: 10 })).toStrictEqual([made[4], made[3]]);
      expect(await opened.store.listRequests({ tokenName: "ci", status: "pending", limit: 10 })).toStrictEqual([made[1], made[0]]);
      expect(await opened.store.listRequests({ tokenName: "deploy", status: "cancelled", limit: 10 })).toStrictEqual([made[3]]);
      expect(await opened.store.listRequests({ tokenName: "nobody", limit: 10 })).toStrictEqual([]);
    });

    it("skips requests forgotten after the retention", async () => {
      const retentionMs = 300;
      const opened = await open(retentionMs);
      const { store, created, clock, advance } = opened;
      const [old, kept] = [await created({ createdAt: clock.t - 2 }), await created({ createdAt: clock.t - 1 })];
      await store.transition(old.id, { status: "cancelled", at: clock.t });
      await advance(retentionMs + retentionMs / 2);
      expect(await store.listRequests({ limit: 10 })).toStrictEqual([kept]);
      expect(await store.listRequests({ status: "cancelled", limit: 10 })).toStrictEqual([]);
    });
  });
}
