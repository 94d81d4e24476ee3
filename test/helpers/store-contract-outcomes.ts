/**
 * The store contract for how people hear of an outcome, run from
 * store-contract.ts against every store: the outcome notice queue (a thread
 * part for every ended request with a Slack message, a dm part when it has a
 * requestedBy, queued by the very step that ends it, leased like the other
 * queues), an expiry that carries a decision (a route's onTimeout: halt),
 * and the queue its caller fills (`enqueue`: rule tallies), leased like the
 * others so one instance at a time shows a rule's tally.
 */
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { RequestPolicy, RequestRecord } from "../../src/requests/model.js";
import { entryKey, type ClaimedEntry, type RequestStore, type Transition } from "../../src/requests/store.js";
import type { OpenStore } from "./store-contract.js";
import { ALICE, BOB, DAVE } from "../fixtures/people.js";

const LEASE_MS = 30_000;
const FAR = 10 * 60_000;
const slack = { channel: "C0123456789", ts: "1800000000.000300" };
const forDave: RequestPolicy = { alwaysAllow: "tool", requestedBy: { id: DAVE.id } };
const HALT_DENY = { behavior: "deny", message: "No one answered in Slack within 1 minute, so the agent was stopped.", interrupt: true } as const;

/** Claimed parts, as `<id>/<part>/<attempts>`, sorted: the stores hand out equal due times by member. */
async function claimedParts(store: RequestStore, at: number): Promise<string[]> {
  const claimed: ClaimedEntry[] = await store.claim("notices", at, LEASE_MS, 100);
  return claimed.map(({ key, attempts }) => `${key.replace(/:(?=[a-z]+$)/, "/")}/${attempts}`).sort();
}

export function runOutcomeContract(open: OpenStore): void {
  describe("outcome notices", () => {
    const ends: Array<[string, (at: number) => Transition]> = [
      ["an answer", (at) => ({ status: "answered", decision: { reply: "y" }, answeredBy: { id: ALICE.id }, at })],
      ["an expiry", (at) => ({ status: "expired", at })],
      ["a cancel", (at) => ({ status: "cancelled", at, by: "agent" })],
      ["a failure", (at) => ({ status: "failed", at, error: "msg_too_long" })],
    ];

    for (const [name, end] of ends) {
      it(`${name} of a request with a message queues its thread part, due when it ended, and nothing more without a requestedBy`, async () => {
        const { store, created, clock } = await open();
        const request = await created({ slack, expiresAt: clock.t });
        expect((await store.transition(request.id, end(clock.t + 5))).outcome).toBe("applied");
        expect(await claimedParts(store, clock.t + 4)).toStrictEqual([]);
        expect(await claimedParts(store, clock.t + 5)).toStrictEqual([`${request.id}/thread/0`]);
      });

      it(`${name} of a request with a message and a requestedBy queues the thread part and the dm part`, async () => {
        const { store, created, clock } = await open();
        const request = await created({ slack, expiresAt: clock.t, policy: forDave });
        expect((await store.transition(request.id, end(clock.t))).outcome).toBe("applied");
        expect(await claimedParts(store, clock.t)).toStrictEqual([`${request.id}/dm/0`, `${request.id}/thread/0`]);
      });

      it(`${name} of a request without a message queues no notice, requestedBy or not`, async () => {
        const { store, created, clock } = await open();
        const request = await created({ expiresAt: clock.t, policy: forDave });
        expect((await store.transition(request.id, end(clock.t))).outcome).toBe("applied");
        expect(await claimedParts(store, clock.t + FAR)).toStrictEqual([]);
      });
    }

    it("the approval that completes a quorum queues the notices; an approval short of it queues none", async () => {
      const { store, created, clock } = await open();
      const request = await created({ slack, policy: forDave });
      const final: Transition & { status: "answered" } = { status: "answered", decision: { reply: "y" }, answeredBy: { id: BOB.id }, at: clock.t + 3 };
      expect((await store.approve(request.id, { person: { id: ALICE.id }, at: clock.t }, 2, { ...final, answeredBy: { id: ALICE.id } })).outcome).toBe(
        "counted",
      );
      expect(await claimedParts(store, clock.t + FAR)).toStrictEqual([]);
      expect((await store.approve(request.id, { person: { id: BOB.id }, at: clock.t + 3 }, 2, final)).outcome).toBe("applied");
      expect(await claimedParts(store, clock.t + 3)).toStrictEqual([`${request.id}/dm/0`, `${request.id}/thread/0`]);
    });

    it("nothing is queued for a pending request, posted or not, nor by a transition that lost", async () => {
      const { store, created, clock } = await open();
      const pending = await created({ policy: forDave });
      await store.setSlackMessage(pending.id, slack, { postedAt: clock.t });
      const notDue = await created({ slack, policy: forDave });
      expect((await store.transition(notDue.id, { status: "expired", at: clock.t })).outcome).toBe("not_due");
      expect(await claimedParts(store, clock.t + FAR)).toStrictEqual([]);
      const ended = await created({ slack });
      await store.transition(ended.id, { status: "cancelled", at: clock.t });
      expect(await store.complete("notices", entryKey(ended.id, "thread"))).toBe(true);
      expect((await store.transition(ended.id, { status: "cancelled", at: clock.t + 1 })).outcome).toBe("already_ended");
      expect(await claimedParts(store, clock.t + FAR)).toStrictEqual([]);
    });

    it("recording the message of a request that ended before it queues the notices once, due at once, and never again", async () => {
      const { store, created, clock } = await open();
      const request = await created({ policy: forDave });
      await store.transition(request.id, { status: "cancelled", at: clock.t - 10 });
      await store.setSlackMessage(request.id, slack);
      expect(await claimedParts(store, clock.t)).toStrictEqual([`${request.id}/dm/0`, `${request.id}/thread/0`]);
      expect(await store.complete("notices", entryKey(request.id, "thread"))).toBe(true);
      expect(await store.complete("notices", entryKey(request.id, "dm"))).toBe(true);
      await store.setSlackMessage(request.id, { ...slack, ts: "1800000000.000301" });
      expect(await claimedParts(store, clock.t + FAR)).toStrictEqual([]);
    });

    it("recording the message again after the request ended with one queues no second notice", async () => {
      const { store, created, clock } = await open();
      const request = await created({ slack });
      await store.transition(request.id, { status: "cancelled", at: clock.t });
      expect(await store.complete("notices", entryKey(request.id, "thread"))).toBe(true);
      await store.setSlackMessage(request.id, slack);
      expect(await claimedParts(store, clock.t + FAR)).toStrictEqual([]);
    });

    it("a claimed part comes back only when its lease runs out; a retry of one part sets its time and attempts and leaves the other alone", async () => {
      const { store, created, clock } = await open();
      const request = await created({ slack, policy: forDave });
      await store.transition(request.id, { status: "cancelled", at: clock.t });
      expect(await claimedParts(store, clock.t)).toHaveLength(2);
      expect(await claimedParts(store, clock.t + LEASE_MS - 1)).toStrictEqual([]);
      expect(await store.complete("notices", entryKey(request.id, "thread"))).toBe(true);
      expect(await store.retry("notices", entryKey(request.id, "dm"), clock.t + LEASE_MS + 9, 2)).toBe(true);
      expect(await claimedParts(store, clock.t + LEASE_MS + 8)).toStrictEqual([]);
      expect(await claimedParts(store, clock.t + LEASE_MS + 9)).toStrictEqual([`${request.id}/dm/2`]);
      expect(await store.complete("notices", entryKey(request.id, "dm"))).toBe(true);
      expect(await store.complete("notices", entryKey(request.id, "dm"))).toBe(false);
      expect(await store.retry("notices", entryKey(request.id, "thread"), clock.t, 1)).toBe(false);
      expect(await store.retry("notices", entryKey(randomUUID(), "dm"), clock.t, 1)).toBe(false);
      expect(await claimedParts(store, clock.t + FAR)).toStrictEqual([]);
    });

    it("claims at most `limit` parts, earliest due first, and nothing for a limit of 0", async () => {
      const { store, created, clock } = await open();
      const [late, early] = [await created({ slack }), await created({ slack })];
      await store.transition(late.id, { status: "cancelled", at: clock.t + 2 });
      await store.transition(early.id, { status: "cancelled", at: clock.t + 1 });
      expect(await store.claim("notices", clock.t + 5, LEASE_MS, 0)).toStrictEqual([]);
      expect(await store.claim("notices", clock.t + 5, LEASE_MS, 1)).toStrictEqual([{ key: entryKey(early.id, "thread"), id: early.id, attempts: 0 }]);
      expect(await store.claim("notices", clock.t + 5, LEASE_MS, 1)).toStrictEqual([{ key: entryKey(late.id, "thread"), id: late.id, attempts: 0 }]);
    });

    it("a queued part outlives its request: it is still handed out once the request is forgotten", async () => {
      const retentionMs = 300;
      const { store, created, clock, advance } = await open(retentionMs);
      const request = await created({ slack });
      await store.transition(request.id, { status: "cancelled", at: clock.t });
      await advance(retentionMs + retentionMs / 2);
      expect(await store.get(request.id)).toBeUndefined();
      expect(await claimedParts(store, clock.t)).toStrictEqual([`${request.id}/thread/0`]);
    });

    it("when 10 claims race, each queued part is handed out once", async () => {
      const { store, created, clock } = await open();
      const requests = await Promise.all(Array.from({ length: 3 }, () => created({ slack, policy: forDave })));
      for (const request of requests) await store.transition(request.id, { status: "cancelled", at: clock.t });
      const claims = await Promise.all(Array.from({ length: 10 }, () => store.claim("notices", clock.t, LEASE_MS, 1)));
      const claimed = claims.flat().map(({ key }) => key);
      expect(claimed.sort()).toStrictEqual(requests.flatMap(({ id }) => [entryKey(id, "dm"), entryKey(id, "thread")]).sort());
    });
  });

  describe("expiry with a decision", () => {
    it("an expiry that carries a decision stores it with the expired status in the same step, as get reads it back", async () => {
      const { store, created, clock } = await open();
      const request = await created({ slack, expiresAt: clock.t });
      const result = await store.transition(request.id, { status: "expired", at: clock.t, decision: { reply: "q" } });
      const expired: RequestRecord = { ...request, status: "expired", endedAt: clock.t, decision: { reply: "q" } };
      expect(result).toStrictEqual({ outcome: "applied", record: expired });
      expect(await store.get(request.id)).toStrictEqual(expired);
    });

    it("a permission request expires with a deny that interrupts, and an unposted one keeps its error beside it", async () => {
      const { store, created, clock } = await open();
      const request = await created({ expiresAt: clock.t, body: { kind: "permission", toolName: "Bash", input: { command: "make deploy" } } });
      const change: Transition = { status: "expired", at: clock.t, unpostedError: "Slack was rate limiting", decision: HALT_DENY };
      const expired = { ...request, status: "expired", endedAt: clock.t, error: "Slack was rate limiting", decision: HALT_DENY };
      expect(await store.transition(request.id, change)).toStrictEqual({ outcome: "applied", record: expired });
      expect(await store.get(request.id)).toStrictEqual(expired);
    });

    it("an expiry that is not due yet stores no decision, and one after the request ended leaves the first outcome", async () => {
      const { store, created, clock } = await open();
      const early = await created({ expiresAt: clock.t + 1 });
      expect(await store.transition(early.id, { status: "expired", at: clock.t, decision: { reply: "q" } })).toStrictEqual({
        outcome: "not_due",
        record: early,
      });
      expect(await store.get(early.id)).toStrictEqual(early);
      const answered = await created({ expiresAt: clock.t });
      await store.transition(answered.id, { status: "answered", decision: { reply: "y" }, answeredBy: { id: ALICE.id }, at: clock.t });
      const late = await store.transition(answered.id, { status: "expired", at: clock.t, decision: { reply: "q" } });
      expect(late).toMatchObject({ outcome: "already_ended", record: { status: "answered", decision: { reply: "y" } } });
    });
  });

  describe("a queue its caller fills (rule tallies)", () => {
    it("hands an entry queued by its caller to one claim until the lease ends, then again with the attempts made", async () => {
      const { store, clock } = await open();
      const rule = randomUUID();
      expect(await store.enqueue("tallies", rule, clock.t + 5)).toBe(true);
      expect(await store.claim("tallies", clock.t + 4, LEASE_MS, 10)).toStrictEqual([]);
      expect(await store.claim("tallies", clock.t + 5, LEASE_MS, 10)).toStrictEqual([{ key: rule, id: rule, attempts: 0 }]);
      expect(await store.claim("tallies", clock.t + 6, LEASE_MS, 10)).toStrictEqual([]);
      expect(await store.retry("tallies", rule, clock.t + 100, 1)).toBe(true);
      expect(await store.claim("tallies", clock.t + 100, LEASE_MS, 10)).toStrictEqual([{ key: rule, id: rule, attempts: 1 }]);
    });

    it("an entry queued again while claimed keeps its lease and attempts; once completed it is queued anew", async () => {
      const { store, clock } = await open();
      const rule = randomUUID();
      await store.enqueue("tallies", rule, clock.t);
      await store.claim("tallies", clock.t, LEASE_MS, 10);
      await store.retry("tallies", rule, clock.t + LEASE_MS, 2);
      expect(await store.enqueue("tallies", rule, clock.t + 1)).toBe(false);
      expect(await store.claim("tallies", clock.t + LEASE_MS - 1, LEASE_MS, 10)).toStrictEqual([]);
      expect(await store.claim("tallies", clock.t + LEASE_MS, LEASE_MS, 10)).toStrictEqual([{ key: rule, id: rule, attempts: 2 }]);
      expect(await store.complete("tallies", rule)).toBe(true);
      expect(await store.enqueue("tallies", rule, clock.t + 2)).toBe(true);
      expect(await store.claim("tallies", clock.t + 2, LEASE_MS, 10)).toStrictEqual([{ key: rule, id: rule, attempts: 0 }]);
    });

    it("each of many rules queued is handed out once when 10 claims race", async () => {
      const { store, clock } = await open();
      const rules = Array.from({ length: 6 }, () => randomUUID());
      await Promise.all(rules.map((rule) => store.enqueue("tallies", rule, clock.t)));
      const claims = await Promise.all(Array.from({ length: 10 }, () => store.claim("tallies", clock.t, LEASE_MS, 1)));
      expect(
        claims
          .flat()
          .map(({ id }) => id)
          .sort(),
      ).toStrictEqual([...rules].sort());
    });
  });
}
