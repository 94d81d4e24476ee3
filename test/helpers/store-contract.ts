/**
 * The RequestStore contract, run against every implementation (memory and
 * Redis) so they stay interchangeable: round trips, idempotency, every
 * transition, first answer wins, expiry, Slack message index, notifications,
 * the callback queue, the posting set, the counts and retention; approvals,
 * reminders and listing are in store-contract-policy.ts, more time in
 * store-contract-extend.ts, outcome notices and expiry decisions in
 * store-contract-outcomes.ts, a token's pending cap and joining in
 * store-contract-limits.ts, all run from here.
 */
import { randomUUID } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import type { Decision } from "../../src/protocol/decisions.js";
import { RequestRecord } from "../../src/requests/model.js";
import { type Person } from "../../src/protocol/request-view.js";
import { UPDATE_GRACE_MS, type RequestStore, type Transition } from "../../src/requests/store.js";
import { runExtendContract } from "./store-contract-extend.js";
import { runLimitsContract } from "./store-contract-limits.js";
import { runOutcomeContract } from "./store-contract-outcomes.js";
import { runPolicyContract } from "./store-contract-policy.js";
import { claimedKeys } from "./queue-entries.js";
import { ALICE, BOB } from "../fixtures/people.js";
import { until } from "./until.js";

export interface ContractStoreOptions {
  /** The store's clock (Unix ms); the suite moves it. */
  now: () => number;
  /** How long ended requests stay readable (ms). */
  retentionMs: number;
}

export interface ContractStore {
  store: RequestStore;
  /** Lets `ms` pass for the store beyond its clock (e.g. real time for Redis TTLs). */
  elapse(ms: number): Promise<void>;
}

/** Builds a fresh, empty store (`ready()` already resolved); the suite closes it. */
export type MakeStore = (options: ContractStoreOptions) => Promise<ContractStore>;

const T0 = 1_800_000_000_000;
const LONG_RETENTION_MS = 60_000;

const UNICODE = 'héllo — 日本語 🚀 \u202Eright-to-left\u202C "quotes" \\ back\\slash \u0000 nul\nnew line';
const EXACT_NUMBERS = { sum: 0.1 + 0.2, maxSafe: 2 ** 53 - 1, tiny: 5e-324, negative: -1.5e300, zero: 0 };

/** A fresh store for one test, with the clock it runs on and record builders. */
export interface OpenedStore {
  store: RequestStore;
  clock: { t: number };
  /** Moves the clock (and lets the time pass for the store, e.g. for Redis TTLs). */
  advance(ms: number): Promise<void>;
  /** A pending step_gate request created now, with `overrides`. */
  record(overrides?: Partial<RequestRecord>): RequestRecord;
  /** `record(overrides)`, stored. */
  created(overrides?: Partial<RequestRecord>): Promise<RequestRecord>;
}

export type OpenStore = (retentionMs?: number) => Promise<OpenedStore>;

export function runStoreContract(name: string, makeStore: MakeStore): void {
  describe(`${name} store contract`, () => {
    const opened: RequestStore[] = [];
    afterEach(async () => {
      await Promise.all(opened.splice(0).map((store) => store.close()));
    });

    async function open(retentionMs = LONG_RETENTION_MS): Promise<OpenedStore> {
      const clock = { t: T0 };
      const { store, elapse } = await makeStore({ now: () => clock.t, retentionMs });
      opened.push(store);
      const advance = async (ms: number) => {
        clock.t += ms;
        await elapse(ms);
      };
      const record = (overrides: Partial<RequestRecord> = {}): RequestRecord =>
        RequestRecord.parse({
          id: randomUUID(),
          status: "pending",
          tokenName: "ci",
          channel: "C0123456789",
          body: { kind: "step_gate", toolName: "Bash", input: { command: "ls" } },
          createdAt: clock.t,
          expiresAt: clock.t + 60_000,
          ...overrides,
        });
      const created = async (overrides: Partial<RequestRecord> = {}) => (await store.create(record(overrides))).record;
      return { store, clock, advance, record, created };
    }

    const answer = (at: number, decision: Decision = { reply: "y" }, person: Person = ALICE): Transition => ({
      status: "answered",
      decision,
      answeredBy: person,
      at,
    });

    describe("create and get", () => {
      it("reads back a request with empty arrays, empty objects, unicode and exact numbers unchanged", async () => {
        const { store, record } = await open();
        const request = record({
          body: {
            kind: "permission",
            toolName: UNICODE,
            input: { list: [], object: {}, nested: { deeper: [[], {}] }, text: UNICODE, ...EXACT_NUMBERS },
            suggestions: [],
            title: UNICODE,
          },
        });
        const result = await store.create(request);
        expect(result).toStrictEqual({ record: request, created: true });
        expect(await store.get(request.id)).toStrictEqual(request);
      });

      it("hands out objects of the caller's own: changing the one created from, or one read back, changes nothing stored", async () => {
        const { store, record, clock } = await open();
        const request = record({ body: { kind: "step_gate", toolName: "Bash", input: { command: "ls" } } });
        const stored = structuredClone(request);
        const spoil = (copy: RequestRecord) => {
          (copy.body as { input: Record<string, unknown> }).input.command = "rm -rf /";
          copy.expiresAt = 0;
          copy.status = "failed";
        };
        const created = (await store.create(request)).record;
        const read = (await store.get(request.id))!;
        [request, created, read].forEach(spoil);
        expect(await store.get(request.id)).toStrictEqual(stored);
        const slackRef = { channel: "C0123456789", ts: "1.5" };
        spoil((await store.setSlackMessage(request.id, slackRef))!);
        slackRef.ts = "9.9";
        expect(await store.get(request.id)).toStrictEqual({ ...stored, slack: { channel: "C0123456789", ts: "1.5" }, postedAt: clock.t });
        const ended = await store.transition(request.id, answer(clock.t));
        if (ended.outcome !== "applied") throw new Error(ended.outcome);
        ended.record.status = "pending";
        (ended.record.body as { toolName: string }).toolName = "Write";
        expect(await store.get(request.id)).toMatchObject({ status: "answered", body: { toolName: "Bash", input: { command: "ls" } } });
      });

      it("reads back every kind of request body", async () => {
        const { store, record } = await open();
        const bodies = [
          { kind: "permission", toolName: "Write", input: { file_path: "/tmp/a", content: "x" }, defaultToNo: true },
          { kind: "step_gate", toolName: "Bash", input: { command: "rm -rf build" }, toolUseId: "toolu_1" },
          {
            kind: "ask_user_question",
            questions: [{ question: "Which?", header: "Pick", options: [{ label: "A" }, { label: "B", preview: "p" }], multiSelect: true }],
          },
          {
            kind: "interactive_questions",
            autonomous: true,
            questions: [{ id: "ok", question: "Go?", type: "confirm", default: false, required: false }],
          },
        ];
        for (const body of bodies) {
          const request = record({ body } as Partial<RequestRecord>);
          await store.create(request);
          expect(await store.get(request.id)).toStrictEqual(request);
        }
      });

      it("keeps the policy a request was created under (its route too), and reads a request stored without one", async () => {
        const { store, record } = await open();
        const withPolicy = record({ policy: { alwaysAllow: "all", route: "routes.3" } });
        await store.create(withPolicy);
        expect(await store.get(withPolicy.id)).toStrictEqual(withPolicy);
        const without = record();
        delete without.policy;
        await store.create(without);
        expect((await store.get(without.id))?.policy).toBeUndefined();
      });

      it("keeps a request's labels as they were sent", async () => {
        const { store, record } = await open();
        const base = record();
        const labeled = { ...base, body: { ...base.body, labels: { env: "prod", "team/owner": "pay=ments ✓", empty: "" } } };
        await store.create(labeled);
        expect(await store.get(labeled.id)).toStrictEqual(labeled);
      });

      it("stores a body of about 1 MB without loss", async () => {
        const { store, record } = await open();
        const content = `${"x".repeat(500_000)}${"é🚀".repeat(100_000)}`;
        const request = record({ body: { kind: "permission", toolName: "Write", input: { file_path: "/big", content } } });
        await store.create(request);
        expect(await store.get(request.id)).toStrictEqual(request);
      });

      it("returns undefined for an unknown id", async () => {
        const { store } = await open();
        expect(await store.get(randomUUID())).toBeUndefined();
      });

      it("refuses a second request with the same id and keeps the first", async () => {
        const { store, record } = await open();
        const first = record();
        await store.create(first);
        await expect(store.create(record({ id: first.id, tokenName: "other" }))).rejects.toThrow();
        expect(await store.get(first.id)).toStrictEqual(first);
      });
    });

    describe("idempotency", () => {
      it("when the same key is used twice, the second create returns the first request and stores nothing", async () => {
        const { store, record } = await open();
        const first = record({ id: store.newId("ci") });
        const second = record({ body: { kind: "step_gate", toolName: "Other", input: {} } });
        expect(await store.create(first, { idempotencyKey: "ci:deploy-1" })).toStrictEqual({ record: first, created: true });
        expect(await store.create(second, { idempotencyKey: "ci:deploy-1" })).toStrictEqual({ record: first, created: false });
        expect(await store.get(second.id)).toBeUndefined();
      });

      it("returns the first request as it is now, even after it ended", async () => {
        const { store, record, clock } = await open();
        const first = record({ id: store.newId("ci") });
        await store.create(first, { idempotencyKey: "ci:deploy-2" });
        await store.transition(first.id, answer(clock.t, { reply: "n" }));
        const again = await store.create(record(), { idempotencyKey: "ci:deploy-2" });
        expect(again.created).toBe(false);
        expect(again.record).toMatchObject({ id: first.id, status: "answered", decision: { reply: "n" } });
      });

      it("different keys create different requests", async () => {
        const { store, record } = await open();
        const a = await store.create(record(), { idempotencyKey: "ci:a" });
        const b = await store.create(record(), { idempotencyKey: "ci:b" });
        expect(a.created && b.created).toBe(true);
        expect(a.record.id).not.toBe(b.record.id);
      });

      it("a create with a key stores the record under the id it returns, and a later create with the key finds it there", async () => {
        const { store, record } = await open();
        for (const key of ["ci:any-1", "ci:any-2", "ci:any-3", "ci:any-4"]) {
          const given = record();
          const { record: stored, created } = await store.create(given, { idempotencyKey: key });
          expect(created).toBe(true);
          expect(stored).toStrictEqual({ ...given, id: stored.id });
          expect(await store.get(stored.id)).toStrictEqual(stored);
          expect(await store.create(record(), { idempotencyKey: key })).toStrictEqual({ record: stored, created: false });
        }
      });

      it("newId gives a fresh UUID each time, with or without a token, which a create by that token keeps", async () => {
        const { store, record } = await open();
        const ids = [store.newId(), store.newId(), store.newId("ci"), store.newId("ci")];
        expect(new Set(ids).size).toBe(4);
        for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
        expect((await store.create(record({ id: ids[2] }), { idempotencyKey: "ci:n" })).record.id).toBe(ids[2]);
      });

      it("when 10 creates race with one key, exactly one request is created and all return it", async () => {
        const { store, record } = await open();
        const results = await Promise.all(Array.from({ length: 10 }, () => store.create(record(), { idempotencyKey: "ci:race" })));
        expect(results.filter((r) => r.created)).toHaveLength(1);
        expect(new Set(results.map((r) => r.record.id)).size).toBe(1);
      });
    });

    describe("transitions", () => {
      it("an answer stores the decision, who answered and when", async () => {
        const { store, created, clock } = await open();
        const request = await created();
        const decision: Decision = { behavior: "allow", updatedInput: { list: [], object: {}, text: UNICODE, ...EXACT_NUMBERS }, updatedPermissions: [] };
        const result = await store.transition(request.id, answer(clock.t + 5, decision, { id: ALICE.id, name: UNICODE }));
        const expected = { ...request, status: "answered", decision, answeredBy: { id: ALICE.id, name: UNICODE }, endedAt: clock.t + 5 };
        expect(result).toStrictEqual({ outcome: "applied", record: expected });
        expect(await store.get(request.id)).toStrictEqual(expected);
      });

      it("keeps false, empty strings and empty lists in interactive answers", async () => {
        const { store, created, clock } = await open();
        const request = await created();
        const decision: Decision = { answers: { confirm: false, text: "", many: [], pick: UNICODE } };
        await store.transition(request.id, answer(clock.t, decision));
        expect((await store.get(request.id))?.decision).toStrictEqual(decision);
      });

      it("a cancel records who cancelled and why, when given", async () => {
        const { store, created, clock } = await open();
        const withReason = await created();
        const bare = await created();
        const result = await store.transition(withReason.id, { status: "cancelled", at: clock.t, by: "hook disconnected", reason: "client went away" });
        expect(result).toStrictEqual({
          outcome: "applied",
          record: { ...withReason, status: "cancelled", endedAt: clock.t, cancelledBy: "hook disconnected", error: "client went away" },
        });
        const plain = await store.transition(bare.id, { status: "cancelled", at: clock.t });
        expect(plain).toStrictEqual({ outcome: "applied", record: { ...bare, status: "cancelled", endedAt: clock.t } });
      });

      it("a failure records Slack's error", async () => {
        const { store, created, clock } = await open();
        const request = await created();
        const result = await store.transition(request.id, { status: "failed", at: clock.t, error: "channel_not_found" });
        expect(result).toStrictEqual({ outcome: "applied", record: { ...request, status: "failed", endedAt: clock.t, error: "channel_not_found" } });
      });

      it("expiry applies at the deadline and is refused as not_due before it", async () => {
        const { store, created, clock } = await open();
        const request = await created({ expiresAt: clock.t + 1000 });
        const early = await store.transition(request.id, { status: "expired", at: clock.t + 999 });
        expect(early).toStrictEqual({ outcome: "not_due", record: request });
        expect(await store.get(request.id)).toStrictEqual(request);
        const due = await store.transition(request.id, { status: "expired", at: clock.t + 1000 });
        expect(due).toStrictEqual({ outcome: "applied", record: { ...request, status: "expired", endedAt: clock.t + 1000 } });
      });

      it("an expiry records why a request was never posted, and nothing for one that was posted", async () => {
        const { store, created, clock } = await open();
        const unposted = await created({ expiresAt: clock.t });
        const posted = await created({ expiresAt: clock.t });
        await store.setSlackMessage(posted.id, { channel: "C0123456789", ts: "1800000000.000100" });
        const why = "Slack was rate limiting: the message could not be posted to Slack before the request's deadline.";
        expect(await store.transition(unposted.id, { status: "expired", at: clock.t, unpostedError: why })).toMatchObject({
          outcome: "applied",
          record: { status: "expired", error: why },
        });
        const result = await store.transition(posted.id, { status: "expired", at: clock.t, unpostedError: why });
        expect(result.outcome).toBe("applied");
        expect("record" in result && result.record.error).toBeUndefined();
      });

      it("when 20 answers race, the first wins and every other one gets the winner's decision back", async () => {
        const { store, created, clock } = await open();
        const request = await created();
        const results = await Promise.all(
          Array.from({ length: 20 }, (_, i) => store.transition(request.id, answer(clock.t, { behavior: "deny", message: `no ${i}` }, { id: `U${i}` }))),
        );
        const winners = results.filter((r) => r.outcome === "applied");
        expect(winners).toHaveLength(1);
        const winner = winners[0]!;
        if (winner.outcome !== "applied") throw new Error("unreachable");
        for (const result of results.filter((r) => r.outcome !== "applied")) {
          expect(result).toStrictEqual({ outcome: "already_ended", record: winner.record });
        }
        expect(await store.get(request.id)).toStrictEqual(winner.record);
      });

      it("after an answer, every later transition gets the stored answer back and changes nothing", async () => {
        const { store, created, clock } = await open();
        const request = await created({ expiresAt: clock.t + 10 });
        const first = await store.transition(request.id, answer(clock.t, { reply: "q" }));
        if (first.outcome !== "applied") throw new Error(`answer was ${first.outcome}`);
        const later: Transition[] = [
          answer(clock.t + 20, { reply: "y" }, { id: BOB.id }),
          { status: "expired", at: clock.t + 20 },
          { status: "cancelled", at: clock.t + 20, by: "agent" },
          { status: "failed", at: clock.t + 20, error: "late" },
        ];
        for (const change of later) {
          expect(await store.transition(request.id, change)).toStrictEqual({ outcome: "already_ended", record: first.record });
        }
        expect(await store.get(request.id)).toStrictEqual(first.record);
      });

      it("every transition of an unknown id is not_found and creates nothing", async () => {
        const { store, clock } = await open();
        const id = randomUUID();
        const changes: Transition[] = [
          answer(clock.t),
          { status: "expired", at: clock.t },
          { status: "cancelled", at: clock.t },
          { status: "failed", at: clock.t, error: "x" },
        ];
        for (const change of changes) expect(await store.transition(id, change)).toStrictEqual({ outcome: "not_found" });
        expect(await store.get(id)).toBeUndefined();
      });
    });

    describe("expiry sweep", () => {
      it("lists pending requests at or past their deadline, up to the limit, and no others", async () => {
        const { store, created, clock } = await open();
        const past = await created({ expiresAt: clock.t - 1 });
        const now = await created({ expiresAt: clock.t });
        const later = await created({ expiresAt: clock.t + 1 });
        const answered = await created({ expiresAt: clock.t - 5 });
        await store.transition(answered.id, answer(clock.t));
        expect((await store.dueForExpiry(clock.t, 10)).sort()).toStrictEqual([past.id, now.id].sort());
        expect(await store.dueForExpiry(clock.t, 1)).toHaveLength(1);
        expect(await store.dueForExpiry(clock.t - 10, 10)).toStrictEqual([]);
        await store.transition(past.id, { status: "expired", at: clock.t });
        expect(await store.dueForExpiry(clock.t, 10)).toStrictEqual([now.id]);
        expect((await store.dueForExpiry(clock.t + 1, 10)).sort()).toStrictEqual([now.id, later.id].sort());
      });

      it("never lists a request created already answered", async () => {
        const { store, record, clock } = await open();
        const done = record({ status: "answered", decision: { answers: {} }, answeredBy: { id: "relay" }, endedAt: clock.t, expiresAt: clock.t });
        await store.create(done);
        expect(await store.dueForExpiry(clock.t + 1000, 10)).toStrictEqual([]);
      });
    });

    describe("Slack message", () => {
      it("records where the message lives, when it was posted (the store's now by default), and finds the request from it", async () => {
        const { store, created, clock } = await open();
        const request = await created();
        const slack = { channel: "C0123456789", ts: "1712345678.000100" };
        expect(await store.setSlackMessage(request.id, slack)).toStrictEqual({ ...request, slack, postedAt: clock.t });
        expect(await store.get(request.id)).toStrictEqual({ ...request, slack, postedAt: clock.t });
        expect(await store.findBySlackMessage(slack)).toBe(request.id);
        expect(await store.findBySlackMessage({ ...slack, ts: "1712345678.000101" })).toBeUndefined();
      });

      it("records the message of a request that already ended and returns it as it is", async () => {
        const { store, created, clock } = await open();
        const request = await created();
        await store.transition(request.id, { status: "cancelled", at: clock.t, by: "agent" });
        const slack = { channel: "D0123456789", ts: "1.2" };
        expect(await store.setSlackMessage(request.id, slack)).toMatchObject({ status: "cancelled", cancelledBy: "agent", slack });
        expect(await store.findBySlackMessage(slack)).toBe(request.id);
      });

      it("ignores an unknown id and creates no request", async () => {
        const { store } = await open();
        const id = randomUUID();
        const slack = { channel: "C0123456789", ts: "9.9" };
        expect(await store.setSlackMessage(id, slack)).toBeUndefined();
        expect(await store.get(id)).toBeUndefined();
        expect(await store.findBySlackMessage(slack)).toBeUndefined();
      });
    });

    describe("ended notifications", () => {
      it("fires once for each applied transition and never for a refused one", async () => {
        const { store, record, created, clock } = await open();
        const seen: string[] = [];
        store.onEnded((id) => seen.push(id));
        const done = record({ status: "answered", decision: { answers: {} }, answeredBy: { id: "relay" }, endedAt: clock.t });
        await store.create(done);
        const [a, b, c] = [await created(), await created({ expiresAt: clock.t + 1000 }), await created()];
        await store.transition(a.id, answer(clock.t));
        await store.transition(a.id, answer(clock.t));
        await store.transition(a.id, { status: "cancelled", at: clock.t });
        await store.transition(b.id, { status: "expired", at: clock.t });
        await store.transition(randomUUID(), { status: "failed", at: clock.t, error: "x" });
        await store.transition(b.id, { status: "failed", at: clock.t, error: "x" });
        await store.transition(c.id, { status: "expired", at: clock.t + 60_000 });
        // A cluster's shards publish on their own nodes, so notifications may arrive in any order: wait for all four.
        await until(() => [done.id, a.id, b.id, c.id].every((id) => seen.includes(id)), 2000, "every notification");
        await new Promise((resolve) => setTimeout(resolve, 50));
        expect(seen.sort()).toStrictEqual([done.id, a.id, b.id, c.id].sort());
      });

      it("stops calling a listener once it is removed", async () => {
        const { store, created, clock } = await open();
        const removed: string[] = [];
        const kept: string[] = [];
        const remove = store.onEnded((id) => removed.push(id));
        store.onEnded((id) => kept.push(id));
        const [a, b] = [await created(), await created()];
        await store.transition(a.id, answer(clock.t));
        await until(() => removed.includes(a.id), 2000, "the first notification");
        remove();
        await store.transition(b.id, answer(clock.t));
        await until(() => kept.includes(b.id), 2000, "the second notification");
        expect(removed).toStrictEqual([a.id]);
      });
    });

    describe("onChanged", () => {
      // Not in order: on Redis Cluster each PUBLISH goes to whichever node ioredis picks, so two may cross (listeners re-read anyway).
      it("hears every announced change, and nothing once its listener is removed; an end is not announced", async () => {
        const { store, created, clock } = await open();
        const heard: string[] = [];
        const stop = store.onChanged((id) => heard.push(id));
        const [a, b] = [await created(), await created()];
        store.announce(a.id);
        store.announce(b.id);
        await store.transition(a.id, answer(clock.t));
        await until(() => heard.length === 2, 2000, "both announcements");
        stop();
        store.announce(a.id);
        await new Promise((resolve) => setTimeout(resolve, 50));
        expect([...heard].sort()).toStrictEqual([a.id, b.id].sort());
      });
    });

    describe("onCancelledCall", () => {
      // Not in order: on Redis Cluster each PUBLISH goes to whichever node ioredis picks, so two may cross.
      it("hears every call announced cancelled, and nothing once its listener is removed", async () => {
        const { store } = await open();
        const heard: string[] = [];
        const stop = store.onCancelledCall((key) => heard.push(key));
        await store.announceCancelledCall('["sdk-agent","s1",7]');
        await store.announceCancelledCall('["sdk-agent","s1","call-8"]');
        await until(() => heard.length === 2, 2000, "both cancelled calls");
        stop();
        await store.announceCancelledCall('["sdk-agent","s1",9]');
        await new Promise((resolve) => setTimeout(resolve, 50));
        expect([...heard].sort()).toStrictEqual(['["sdk-agent","s1",7]', '["sdk-agent","s1","call-8"]'].sort());
      });

      it("remembers a call announced with rememberMs for that long, once announced; not one announced without it, nor another key", async () => {
        const { store, advance } = await open();
        const heard: string[] = [];
        const stop = store.onCancelledCall((key) => heard.push(key));
        await store.announceCancelledCall('["sdk-agent","s1",7]', 300);
        await store.announceCancelledCall('["sdk-agent","s1",8]');
        expect(await store.wasCallCancelled('["sdk-agent","s1",7]')).toBe(true);
        expect(await store.wasCallCancelled('["sdk-agent","s1",8]')).toBe(false);
        expect(await store.wasCallCancelled('["other-agent","s1",7]')).toBe(false);
        expect(await store.wasCallCancelled('["sdk-agent","s2",7]')).toBe(false);
        await until(() => heard.length === 2, 2000, "both announced");
        stop();
        await advance(400);
        expect(await store.wasCallCancelled('["sdk-agent","s1",7]')).toBe(false);
      });
    });

    describe("message-update outbox", () => {
      const LEASE_MS = 30_000;
      const slack = (n: number) => ({ channel: "C0123456789", ts: `1800000000.00010${n}` });

      it("each final transition of a request with a message queues its update, due a grace period after it ended", async () => {
        const { store, created, clock } = await open();
        const [a, b, c, d] = [await created(), await created({ expiresAt: clock.t }), await created(), await created()];
        for (const [i, request] of [a, b, c, d].entries()) await store.setSlackMessage(request.id, slack(i));
        await store.transition(a.id, answer(clock.t + 1));
        await store.transition(b.id, { status: "expired", at: clock.t + 4 });
        await store.transition(c.id, { status: "cancelled", at: clock.t + 3 });
        await store.transition(d.id, { status: "failed", at: clock.t + 2, error: "x" });
        expect(await store.claim("updates", clock.t + UPDATE_GRACE_MS, LEASE_MS, 10)).toStrictEqual([]);
        expect(await store.claim("updates", clock.t + UPDATE_GRACE_MS + 4, LEASE_MS, 10)).toStrictEqual([
          { key: a.id, id: a.id, attempts: 0 },
          { key: d.id, id: d.id, attempts: 0 },
          { key: c.id, id: c.id, attempts: 0 },
          { key: b.id, id: b.id, attempts: 0 },
        ]);
      });

      it("queues nothing for a request that ended without a message and out of the posting queue, or for a refused transition", async () => {
        const { store, created, clock } = await open();
        const [unposted, posted] = [await created(), await created()];
        await store.complete("posting", unposted.id);
        await store.setSlackMessage(posted.id, slack(1));
        await store.transition(unposted.id, answer(clock.t));
        await store.transition(posted.id, answer(clock.t));
        await store.complete("updates", posted.id);
        await store.transition(posted.id, { status: "cancelled", at: clock.t });
        expect(await store.claim("updates", clock.t + 10 * UPDATE_GRACE_MS, LEASE_MS, 10)).toStrictEqual([]);
      });

      it("a request that ended while still being posted (its post may be in Slack unrecorded) gets its update queued, once", async () => {
        const { store, created, clock } = await open();
        const [expired, answered] = [await created({ expiresAt: clock.t }), await created()];
        await store.transition(expired.id, { status: "expired", at: clock.t + 1 });
        await store.transition(answered.id, answer(clock.t + 2));
        await store.transition(answered.id, { status: "cancelled", at: clock.t + 3 });
        expect(await store.claim("updates", clock.t + UPDATE_GRACE_MS, LEASE_MS, 10)).toStrictEqual([]);
        expect(await store.claim("updates", clock.t + UPDATE_GRACE_MS + 2, LEASE_MS, 10)).toStrictEqual([
          { key: expired.id, id: expired.id, attempts: 0 },
          { key: answered.id, id: answered.id, attempts: 0 },
        ]);
        expect(await store.claim("posting", clock.t + 10 * UPDATE_GRACE_MS, LEASE_MS, 10)).toStrictEqual([]);
      });

      it("another message of a request is found from its channel and ts, read back, and gets the update once the request ended", async () => {
        const { store, created, clock } = await open();
        const request = await created();
        await store.setSlackMessage(request.id, slack(2));
        const added = await store.addOtherMessage(request.id, slack(1));
        expect(added?.otherMessages).toStrictEqual([slack(1)]);
        expect(await store.findBySlackMessage(slack(1))).toBe(request.id);
        expect(await store.claim("updates", clock.t + 10 * UPDATE_GRACE_MS, LEASE_MS, 10)).toStrictEqual([]);
        await store.transition(request.id, answer(clock.t));
        await store.complete("updates", request.id);
        const late = await store.addOtherMessage(request.id, slack(3));
        expect(late?.otherMessages).toStrictEqual([slack(1), slack(3)]);
        expect((await store.get(request.id))?.otherMessages).toStrictEqual([slack(1), slack(3)]);
        expect(await store.claim("updates", clock.t + UPDATE_GRACE_MS, LEASE_MS, 10)).toStrictEqual([{ key: request.id, id: request.id, attempts: 0 }]);
        expect(await store.addOtherMessage("no-such-request", slack(4))).toBeUndefined();
      });

      it("recording the message of a request that already ended queues its update", async () => {
        const { store, created, clock } = await open();
        const request = await created();
        await store.transition(request.id, answer(clock.t));
        await store.setSlackMessage(request.id, slack(1));
        expect(await store.claim("updates", clock.t + UPDATE_GRACE_MS, LEASE_MS, 10)).toStrictEqual([{ key: request.id, id: request.id, attempts: 0 }]);
      });

      it("a claimed update comes back after its lease, a retry sets when and the attempts, a completed one never comes back", async () => {
        const { store, created, clock } = await open();
        const request = await created();
        await store.setSlackMessage(request.id, slack(1));
        await store.transition(request.id, answer(clock.t));
        const due = clock.t + UPDATE_GRACE_MS;
        expect(await store.claim("updates", due, LEASE_MS, 10)).toHaveLength(1);
        expect(await store.claim("updates", due + LEASE_MS - 1, LEASE_MS, 10)).toStrictEqual([]);
        expect(await store.retry("updates", request.id, due + 5, 3)).toBe(true);
        expect(await store.claim("updates", due + 5, LEASE_MS, 10)).toStrictEqual([{ key: request.id, id: request.id, attempts: 3 }]);
        expect(await store.complete("updates", request.id)).toBe(true);
        expect(await store.retry("updates", request.id, due, 4)).toBe(false);
        expect(await store.complete("updates", request.id)).toBe(false);
        expect(await store.claim("updates", due + 100 * LEASE_MS, LEASE_MS, 10)).toStrictEqual([]);
      });
    });

    describe("callback queue", () => {
      const LEASE_MS = 30_000;
      const CALLBACK_URL = "https://hooks.example.com/relay";
      const withCallback = (body: Partial<RequestRecord["body"]> = {}) =>
        ({ body: { kind: "step_gate", toolName: "Bash", input: { command: "ls" }, callbackUrl: CALLBACK_URL, ...body } }) as Partial<RequestRecord>;

      it("each final transition of a request with a callback URL queues its callback, due when it ended", async () => {
        const { store, created, clock } = await open();
        const [a, c, d] = [await created(withCallback()), await created(withCallback()), await created(withCallback())];
        const b = await created({ ...withCallback(), expiresAt: clock.t + 5 });
        await store.transition(a.id, answer(clock.t + 1));
        await store.transition(b.id, { status: "expired", at: clock.t + 5 });
        await store.transition(c.id, { status: "cancelled", at: clock.t + 3, by: "agent" });
        await store.transition(d.id, { status: "failed", at: clock.t + 2, error: "channel_not_found" });
        expect(await store.claim("callbacks", clock.t, LEASE_MS, 10)).toStrictEqual([]);
        expect(await store.claim("callbacks", clock.t + 3, LEASE_MS, 10)).toStrictEqual([
          { key: a.id, id: a.id, attempts: 0 },
          { key: d.id, id: d.id, attempts: 0 },
          { key: c.id, id: c.id, attempts: 0 },
        ]);
        expect(await store.claim("callbacks", clock.t + 5, LEASE_MS, 10)).toStrictEqual([{ key: b.id, id: b.id, attempts: 0 }]);
      });

      it("a request created already answered with a callback URL has its callback queued at once", async () => {
        const { store, record, clock } = await open();
        const done = record({ ...withCallback(), status: "answered", decision: { reply: "y" }, answeredBy: { id: "relay" }, endedAt: clock.t });
        await store.create(done);
        expect(await store.claim("callbacks", clock.t, LEASE_MS, 10)).toStrictEqual([{ key: done.id, id: done.id, attempts: 0 }]);
      });

      it("queues nothing for a pending request, a request without a callback URL or a refused transition", async () => {
        const { store, created, clock } = await open();
        await created(withCallback());
        const plain = await created();
        await store.transition(plain.id, answer(clock.t));
        const done = await created(withCallback());
        await store.transition(done.id, answer(clock.t));
        expect(await store.claim("callbacks", clock.t, LEASE_MS, 10)).toStrictEqual([{ key: done.id, id: done.id, attempts: 0 }]);
        await store.transition(done.id, { status: "cancelled", at: clock.t });
        await store.transition(randomUUID(), { status: "failed", at: clock.t, error: "x" });
        expect(await store.claim("callbacks", clock.t + LEASE_MS * 10, LEASE_MS, 10)).toStrictEqual([{ key: done.id, id: done.id, attempts: 0 }]);
      });

      it("a claimed callback is handed out again only when its lease runs out", async () => {
        const { store, created, clock } = await open();
        const request = await created(withCallback());
        await store.transition(request.id, answer(clock.t));
        expect(await store.claim("callbacks", clock.t, LEASE_MS, 10)).toHaveLength(1);
        expect(await store.claim("callbacks", clock.t, LEASE_MS, 10)).toStrictEqual([]);
        expect(await store.claim("callbacks", clock.t + LEASE_MS - 1, LEASE_MS, 10)).toStrictEqual([]);
        expect(await store.claim("callbacks", clock.t + LEASE_MS, LEASE_MS, 10)).toStrictEqual([{ key: request.id, id: request.id, attempts: 0 }]);
      });

      it("claims at most `limit`, earliest due first, and nothing for a limit of 0", async () => {
        const { store, created, clock } = await open();
        const ids: string[] = [];
        for (const offset of [3, 1, 2]) {
          const request = await created(withCallback());
          await store.transition(request.id, answer(clock.t + offset));
          ids[offset] = request.id;
        }
        expect(await store.claim("callbacks", clock.t + 5, LEASE_MS, 0)).toStrictEqual([]);
        expect(await store.claim("callbacks", clock.t + 5, LEASE_MS, 2)).toStrictEqual([
          { key: ids[1], id: ids[1], attempts: 0 },
          { key: ids[2], id: ids[2], attempts: 0 },
        ]);
        expect(await store.claim("callbacks", clock.t + 5, LEASE_MS, 2)).toStrictEqual([{ key: ids[3], id: ids[3], attempts: 0 }]);
      });

      it("when 10 claims race, each queued callback is handed out once", async () => {
        const { store, created, clock } = await open();
        const requests = await Promise.all(Array.from({ length: 6 }, () => created(withCallback())));
        await Promise.all(requests.map((request) => store.transition(request.id, answer(clock.t))));
        const claims = await Promise.all(Array.from({ length: 10 }, () => store.claim("callbacks", clock.t, LEASE_MS, 1)));
        const ids = claims.flat().map((claim) => claim.id);
        expect(ids.sort()).toStrictEqual(requests.map((r) => r.id).sort());
      });

      it("a retry makes the callback due at the given time with the attempts made", async () => {
        const { store, created, clock } = await open();
        const request = await created(withCallback());
        await store.transition(request.id, answer(clock.t));
        await store.claim("callbacks", clock.t, LEASE_MS, 10);
        expect(await store.retry("callbacks", request.id, clock.t + 2000, 1)).toBe(true);
        expect(await store.claim("callbacks", clock.t + 1999, LEASE_MS, 10)).toStrictEqual([]);
        expect(await store.claim("callbacks", clock.t + 2000, LEASE_MS, 10)).toStrictEqual([{ key: request.id, id: request.id, attempts: 1 }]);
        expect(await store.retry("callbacks", request.id, clock.t, 2)).toBe(true);
        expect(await store.claim("callbacks", clock.t, LEASE_MS, 10)).toStrictEqual([{ key: request.id, id: request.id, attempts: 2 }]);
      });

      it("a completed callback is never handed out again, and a late retry does not bring it back", async () => {
        const { store, created, clock } = await open();
        const request = await created(withCallback());
        await store.transition(request.id, answer(clock.t));
        await store.claim("callbacks", clock.t, LEASE_MS, 10);
        expect(await store.complete("callbacks", request.id)).toBe(true);
        expect(await store.complete("callbacks", request.id)).toBe(false);
        expect(await store.retry("callbacks", request.id, clock.t, 1)).toBe(false);
        expect(await store.claim("callbacks", clock.t + LEASE_MS * 10, LEASE_MS, 10)).toStrictEqual([]);
      });

      it("retry and complete of an id with no queued callback change nothing", async () => {
        const { store, created, clock } = await open();
        const request = await created(withCallback());
        expect(await store.retry("callbacks", request.id, clock.t, 1)).toBe(false);
        expect(await store.complete("callbacks", randomUUID())).toBe(false);
        expect(await store.claim("callbacks", clock.t + LEASE_MS * 10, LEASE_MS, 10)).toStrictEqual([]);
        expect(await store.get(request.id)).toStrictEqual(request);
      });
    });

    describe("posting set", () => {
      const LEASE_MS = 30_000;
      const FAR = 10 * 60_000;
      const slack = { channel: "C0123456789", ts: "1712345678.000100" };

      it("a pending request created with a lease is handed out only when the lease has run out", async () => {
        const { store, record, clock } = await open();
        const request = record();
        await store.create(request, { postLeaseUntil: clock.t + 1000 });
        expect(await claimedKeys(store, "posting", clock.t + 999, LEASE_MS, 10)).toStrictEqual([]);
        expect(await claimedKeys(store, "posting", clock.t + 1000, LEASE_MS, 10)).toStrictEqual([request.id]);
      });

      it("a pending request created without a lease can be claimed at once", async () => {
        const { store, created, clock } = await open();
        const request = await created();
        expect(await claimedKeys(store, "posting", clock.t, LEASE_MS, 10)).toStrictEqual([request.id]);
      });

      it("recording the Slack message takes the request out of the set", async () => {
        const { store, created, clock } = await open();
        const posted = await created();
        const unposted = await created();
        await store.setSlackMessage(posted.id, slack);
        expect(await claimedKeys(store, "posting", clock.t + FAR, LEASE_MS, 10)).toStrictEqual([unposted.id]);
        expect(await store.retry("posting", posted.id, clock.t + FAR, 0)).toBe(false);
      });

      it("each final transition takes the request out of the set, and a refused one changes nothing", async () => {
        const { store, created, clock } = await open();
        const [a, c, d, kept] = [await created(), await created(), await created(), await created({ expiresAt: clock.t + 1000 })];
        const b = await created({ expiresAt: clock.t });
        await store.transition(a.id, answer(clock.t));
        await store.transition(b.id, { status: "expired", at: clock.t });
        await store.transition(c.id, { status: "cancelled", at: clock.t, by: "agent" });
        await store.transition(d.id, { status: "failed", at: clock.t, error: "channel_not_found" });
        expect(await store.transition(kept.id, { status: "expired", at: clock.t })).toMatchObject({ outcome: "not_due" });
        expect(await claimedKeys(store, "posting", clock.t + FAR, LEASE_MS, 10)).toStrictEqual([kept.id]);
      });

      it("never holds a request created already answered (autonomous mode) or created with its message", async () => {
        const { store, record, clock } = await open();
        await store.create(record({ status: "answered", decision: { answers: {} }, answeredBy: { id: "relay" }, endedAt: clock.t }));
        await store.create(record({ slack }));
        expect(await claimedKeys(store, "posting", clock.t + FAR, LEASE_MS, 10)).toStrictEqual([]);
      });

      it("a repeated idempotency key adds nothing: the first request is handed out once", async () => {
        const { store, record, clock } = await open();
        const first = record({ id: store.newId("ci") });
        await store.create(first, { idempotencyKey: "ci:post-once" });
        await store.create(record(), { idempotencyKey: "ci:post-once" });
        expect(await claimedKeys(store, "posting", clock.t, LEASE_MS, 10)).toStrictEqual([first.id]);
      });

      it("a renewed lease keeps claims off until its new end; renewing an id that is not in the set returns false", async () => {
        const { store, record, created, clock } = await open();
        const request = record();
        await store.create(request, { postLeaseUntil: clock.t + 1000 });
        expect(await store.retry("posting", request.id, clock.t + 5000, 0)).toBe(true);
        expect(await claimedKeys(store, "posting", clock.t + 4999, LEASE_MS, 10)).toStrictEqual([]);
        expect(await claimedKeys(store, "posting", clock.t + 5000, LEASE_MS, 10)).toStrictEqual([request.id]);
        const ended = await created();
        await store.transition(ended.id, { status: "cancelled", at: clock.t });
        expect(await store.retry("posting", ended.id, clock.t + FAR, 0)).toBe(false);
        const unknown = randomUUID();
        expect(await store.retry("posting", unknown, clock.t + FAR, 0)).toBe(false);
        expect(await claimedKeys(store, "posting", clock.t + FAR * 2, LEASE_MS, 10)).toStrictEqual([request.id]);
      });

      it("a claimed id is handed out again only when the claim's lease runs out", async () => {
        const { store, created, clock } = await open();
        const request = await created();
        expect(await claimedKeys(store, "posting", clock.t, LEASE_MS, 10)).toStrictEqual([request.id]);
        expect(await claimedKeys(store, "posting", clock.t + LEASE_MS - 1, LEASE_MS, 10)).toStrictEqual([]);
        expect(await claimedKeys(store, "posting", clock.t + LEASE_MS, LEASE_MS, 10)).toStrictEqual([request.id]);
      });

      it("claims at most `limit`, earliest lease end first, and nothing for a limit of 0", async () => {
        const { store, record, clock } = await open();
        const ids: string[] = [];
        for (const offset of [3, 1, 2]) {
          const request = record();
          await store.create(request, { postLeaseUntil: clock.t + offset });
          ids[offset] = request.id;
        }
        expect(await claimedKeys(store, "posting", clock.t + 5, LEASE_MS, 0)).toStrictEqual([]);
        expect(await claimedKeys(store, "posting", clock.t + 5, LEASE_MS, 2)).toStrictEqual([ids[1], ids[2]]);
        expect(await claimedKeys(store, "posting", clock.t + 5, LEASE_MS, 2)).toStrictEqual([ids[3]]);
      });

      it("when 10 claims race, each unposted request is handed out once", async () => {
        const { store, created, clock } = await open();
        const requests = await Promise.all(Array.from({ length: 6 }, () => created()));
        const claims = await Promise.all(Array.from({ length: 10 }, () => claimedKeys(store, "posting", clock.t, LEASE_MS, 1)));
        expect(claims.flat().sort()).toStrictEqual(requests.map((r) => r.id).sort());
      });

      it("a forgotten id is never handed out again; forgetting it twice returns false", async () => {
        const { store, created, clock } = await open();
        const request = await created();
        expect(await store.complete("posting", request.id)).toBe(true);
        expect(await store.complete("posting", request.id)).toBe(false);
        expect(await store.retry("posting", request.id, clock.t, 0)).toBe(false);
        expect(await claimedKeys(store, "posting", clock.t + FAR, LEASE_MS, 10)).toStrictEqual([]);
        expect(await store.get(request.id)).toStrictEqual(request);
      });
    });

    describe("counts", () => {
      const withCallback = {
        body: { kind: "step_gate", toolName: "Bash", input: { command: "ls" }, callbackUrl: "https://hooks.example.com/relay" },
      } as Partial<RequestRecord>;

      it("an empty store counts nothing", async () => {
        const { store } = await open();
        expect(await store.counts()).toStrictEqual({ pending: 0, callbacks: 0 });
      });

      it("counts every pending request and every queued callback, leased or not, until it is completed", async () => {
        const { store, record, created, clock } = await open();
        const [first, second] = [await created(withCallback), await created(withCallback)];
        await created();
        await store.create(record({ ...withCallback, status: "answered", decision: { reply: "y" }, answeredBy: { id: "relay" }, endedAt: clock.t }));
        expect(await store.counts()).toStrictEqual({ pending: 3, callbacks: 1 });
        await store.transition(first.id, answer(clock.t));
        await store.transition(second.id, { status: "cancelled", at: clock.t });
        expect(await store.counts()).toStrictEqual({ pending: 1, callbacks: 3 });
        expect(await store.claim("callbacks", clock.t, 30_000, 1)).toHaveLength(1);
        expect((await store.counts()).callbacks).toBe(3);
        await store.complete("callbacks", first.id);
        expect(await store.counts()).toStrictEqual({ pending: 1, callbacks: 2 });
      });

      it("a request past its deadline is pending until it is expired", async () => {
        const { store, created, clock, advance } = await open();
        const due = await created({ expiresAt: clock.t + 10 });
        await advance(20);
        expect((await store.counts()).pending).toBe(1);
        await store.transition(due.id, { status: "expired", at: clock.t });
        expect((await store.counts()).pending).toBe(0);
      });
    });

    describe("retention", () => {
      const RETENTION_MS = 300;

      it("forgets an ended request, its idempotency key and its message after the retention", async () => {
        const { store, record, created, clock, advance } = await open(RETENTION_MS);
        const request = record({ id: store.newId("ci") });
        await store.create(request, { idempotencyKey: "ci:retained" });
        const slack = { channel: "C0123456789", ts: "5.5" };
        await store.setSlackMessage(request.id, slack);
        await store.transition(request.id, answer(clock.t));
        const pending = await created();
        await advance(RETENTION_MS / 2);
        expect((await store.get(request.id))?.status).toBe("answered");
        await advance(RETENTION_MS);
        expect(await store.get(request.id)).toBeUndefined();
        expect(await store.findBySlackMessage(slack)).toBeUndefined();
        expect((await store.create(record(), { idempotencyKey: "ci:retained" })).created).toBe(true);
        expect(await store.get(pending.id)).toStrictEqual(pending);
      });

      it("forgets a request created already answered after the retention", async () => {
        const { store, record, clock, advance } = await open(RETENTION_MS);
        const done = record({ status: "answered", decision: { reply: "y" }, answeredBy: { id: "relay" }, endedAt: clock.t });
        await store.create(done);
        expect(await store.get(done.id)).toStrictEqual(done);
        await advance(RETENTION_MS + RETENTION_MS / 2);
        expect(await store.get(done.id)).toBeUndefined();
      });
    });

    runPolicyContract(open);
    runExtendContract(open);
    runOutcomeContract(open);
    runLimitsContract(open);
  });
}
