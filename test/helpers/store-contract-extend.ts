/**
 * The store contract for more time (issue 9), run from store-contract.ts
 * against every store: `extend` moves only a pending request's deadline, the
 * expiry sweep and the expire transition follow it, the message update is
 * queued in the same step, queued reminders stay as they were, and a pending
 * render that showed the old deadline is not taken as done.
 */
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { entryKey, UPDATE_GRACE_MS } from "../../src/requests/store.js";
import type { OpenStore } from "./store-contract.js";
import { ALICE } from "../fixtures/people.js";

const LEASE_MS = 30_000;
const FAR = 10 * 60_000;
const HALF_HOUR = 30 * 60_000;
const slack = (n: number) => ({ channel: "C0123456789", ts: `1800000000.00030${n}` });

export function runExtendContract(open: OpenStore): void {
  describe("more time", () => {
    it("a pending request's deadline moves: the record, the expiry sweep and the expire transition all follow it", async () => {
      const { store, created } = await open();
      const request = await created();
      const later = request.expiresAt + HALF_HOUR;
      expect(await store.extend(request.id, later)).toStrictEqual({ outcome: "applied", record: { ...request, expiresAt: later } });
      expect(await store.get(request.id)).toStrictEqual({ ...request, expiresAt: later });
      expect(await store.dueForExpiry(request.expiresAt, 10)).toStrictEqual([]);
      expect(await store.dueForExpiry(later - 1, 10)).toStrictEqual([]);
      expect(await store.dueForExpiry(later, 10)).toStrictEqual([request.id]);
      const early = await store.transition(request.id, { status: "expired", at: request.expiresAt });
      expect(early).toStrictEqual({ outcome: "not_due", record: { ...request, expiresAt: later } });
      const due = await store.transition(request.id, { status: "expired", at: later });
      expect(due).toMatchObject({ outcome: "applied", record: { status: "expired", expiresAt: later, endedAt: later } });
    });

    it("moving a posted request's deadline queues its message update, due as a counted approval's is", async () => {
      const { store, created, clock } = await open();
      const request = await created({ slack: slack(1) });
      await store.extend(request.id, request.expiresAt + HALF_HOUR);
      expect(await store.claim("updates", clock.t + UPDATE_GRACE_MS - 1, LEASE_MS, 10)).toStrictEqual([]);
      expect(await store.claim("updates", clock.t + UPDATE_GRACE_MS, LEASE_MS, 10)).toStrictEqual([{ key: request.id, id: request.id, attempts: 0 }]);
    });

    it("moving the deadline of a request without a Slack message queues no update", async () => {
      const { store, created, clock } = await open();
      const request = await created();
      await store.extend(request.id, request.expiresAt + HALF_HOUR);
      expect(await store.claim("updates", clock.t + FAR, LEASE_MS, 10)).toStrictEqual([]);
    });

    it("a deadline no later than the stored one leaves the request as it is", async () => {
      const { store, created } = await open();
      const request = await created();
      expect(await store.extend(request.id, request.expiresAt - 1000)).toStrictEqual({ outcome: "applied", record: request });
      expect(await store.get(request.id)).toStrictEqual(request);
      expect(await store.dueForExpiry(request.expiresAt, 10)).toStrictEqual([request.id]);
    });

    it("twice moves it twice, keeping the approvals counted so far", async () => {
      const { store, created, clock } = await open();
      const request = await created();
      const approval = { person: ALICE, at: clock.t };
      await store.approve(request.id, approval, 2, { status: "answered", decision: { reply: "y" }, answeredBy: { id: ALICE.id }, at: clock.t });
      await store.extend(request.id, request.expiresAt + HALF_HOUR);
      const second = await store.extend(request.id, request.expiresAt + 2 * HALF_HOUR);
      expect(second).toStrictEqual({ outcome: "applied", record: { ...request, approvals: [approval], expiresAt: request.expiresAt + 2 * HALF_HOUR } });
    });

    it("an ended request is already_ended and keeps its deadline; it stays out of the expiry sweep", async () => {
      const { store, created, clock } = await open();
      const request = await created({ slack: slack(2) });
      const answered = await store.transition(request.id, { status: "answered", decision: { reply: "n" }, answeredBy: { id: ALICE.id }, at: clock.t });
      if (answered.outcome !== "applied") throw new Error(`answer was ${answered.outcome}`);
      await store.complete("updates", request.id);
      expect(await store.extend(request.id, request.expiresAt + HALF_HOUR)).toStrictEqual({ outcome: "already_ended", record: answered.record });
      expect(await store.get(request.id)).toStrictEqual(answered.record);
      expect(await store.dueForExpiry(request.expiresAt + FAR, 10)).toStrictEqual([]);
      expect(await store.claim("updates", clock.t + FAR, LEASE_MS, 10)).toStrictEqual([]);
    });

    it("an unknown id is not_found and creates nothing", async () => {
      const { store, clock } = await open();
      const id = randomUUID();
      expect(await store.extend(id, clock.t + FAR)).toStrictEqual({ outcome: "not_found" });
      expect(await store.get(id)).toBeUndefined();
      expect(await store.dueForExpiry(clock.t + 2 * FAR, 10)).toStrictEqual([]);
    });

    it("reminders already queued stay due when they were", async () => {
      const { store, created, clock } = await open();
      const request = await created();
      await store.setSlackMessage(request.id, slack(3), { reminders: [{ index: 0, dueAt: clock.t + 1000 }] });
      await store.extend(request.id, request.expiresAt + HALF_HOUR);
      expect(await store.claim("reminders", clock.t + 999, LEASE_MS, 10)).toStrictEqual([]);
      expect(await store.claim("reminders", clock.t + 1000, LEASE_MS, 10)).toStrictEqual([{ key: entryKey(request.id, 0), id: request.id, attempts: 0 }]);
    });

    it("a pending render that showed the old deadline is not done: the update stays queued; one that showed the new deadline is", async () => {
      const { store, created, clock } = await open();
      const request = await created({ slack: slack(4) });
      const later = request.expiresAt + HALF_HOUR;
      await store.extend(request.id, later);
      expect(await store.completePendingUpdate(request.id, 0, clock.t + 7, request.expiresAt)).toBe(false);
      expect(await store.claim("updates", clock.t + 7, LEASE_MS, 10)).toStrictEqual([{ key: request.id, id: request.id, attempts: 0 }]);
      expect(await store.completePendingUpdate(request.id, 0, clock.t + 7, later)).toBe(true);
      expect(await store.claim("updates", clock.t + FAR, LEASE_MS, 10)).toStrictEqual([]);
    });
  });
}
