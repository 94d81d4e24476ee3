/**
 * Several relay instances sharing one Redis: each store has its own
 * connections, all use the same prefix. A waiter on one instance must wake
 * when a request ends on another, racing sweeps expire each request once,
 * racing claims hand each unposted request and each reminder to one
 * instance, racing approvals count each person once and answer once, and
 * more time given on one instance holds on every other.
 */
import { randomUUID } from "node:crypto";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { RequestRecord } from "../../../src/requests/model.js";
import { connectRedisStore } from "../../../src/store/redis-store.js";
import { entryKey, type AnsweredTransition, type ApproveResult, type RequestStore, type TransitionResult } from "../../../src/requests/store.js";
import { connectTestRedis, deleteKeysUnder, REDIS_TEST_URL, uniquePrefix } from "../../helpers/redis.js";
import { claimedKeys } from "../../helpers/queue-entries.js";
import { ALICE, BOB } from "../../fixtures/people.js";
import { until } from "../../helpers/until.js";

const T0 = 1_800_000_000_000;

describe("relay instances sharing one Redis", () => {
  let prefix: string;
  const opened: RequestStore[] = [];
  beforeEach(() => {
    prefix = uniquePrefix();
  });
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((store) => store.close()));
    const admin = connectTestRedis();
    await deleteKeysUnder(admin, prefix);
    await admin.quit();
  });

  /** A store with its own two connections, as one relay process has. */
  async function instance(): Promise<RequestStore> {
    const store = connectRedisStore(REDIS_TEST_URL, { prefix, now: () => T0 });
    opened.push(store);
    await store.ready();
    return store;
  }

  const pending = (expiresAt = T0 + 60_000): RequestRecord => ({
    id: randomUUID(),
    status: "pending",
    tokenName: "ci",
    channel: "C0123456789",
    body: { kind: "permission", toolName: "Bash", input: { command: "deploy" } },
    createdAt: T0,
    expiresAt,
  });

  it("when the click lands on instance B, the listener on instance A wakes with the id", async () => {
    const [a, b] = [await instance(), await instance()];
    const request = pending();
    await a.create(request);
    const woken: string[] = [];
    a.onEnded((id) => woken.push(id));
    const result = await b.transition(request.id, {
      status: "answered",
      decision: { behavior: "allow", updatedInput: { command: "deploy" } },
      answeredBy: { id: ALICE.id },
      at: T0,
    });
    expect(result.outcome).toBe("applied");
    await until(() => woken.includes(request.id), 2000, "instance A to hear of the answer");
    expect((await a.get(request.id))?.status).toBe("answered");
  });

  it("when instance A gives a request more time, instance B's sweep finds it due only at the new deadline and cannot expire it before", async () => {
    const [a, b] = [await instance(), await instance()];
    const request = pending(T0 + 1000);
    await a.create(request);
    const later = request.expiresAt + 1_800_000;
    expect(await a.extend(request.id, later)).toMatchObject({ outcome: "applied", record: { expiresAt: later } });
    expect(await b.dueForExpiry(request.expiresAt, 10)).toStrictEqual([]);
    expect((await b.transition(request.id, { status: "expired", at: request.expiresAt })).outcome).toBe("not_due");
    expect(await b.dueForExpiry(later, 10)).toStrictEqual([request.id]);
    expect((await b.get(request.id))?.expiresAt).toBe(later);
  });

  it("when more time and an answer race on two instances, the request ends answered and is never left pending or moved after it ended", async () => {
    const [a, b] = [await instance(), await instance()];
    const requests = Array.from({ length: 20 }, () => pending());
    await Promise.all(requests.map((request) => a.create(request)));
    const answer: AnsweredTransition = { status: "answered", decision: { behavior: "deny", message: "no" }, answeredBy: { id: ALICE.id }, at: T0 };
    const raced = await Promise.all(
      requests.map(async (request) => {
        const [moved] = await Promise.all([a.extend(request.id, request.expiresAt + 1_800_000), b.transition(request.id, answer)]);
        return { moved, stored: (await a.get(request.id))! };
      }),
    );
    for (const { moved, stored } of raced) {
      expect(stored.status).toBe("answered");
      expect(["applied", "already_ended"]).toContain(moved.outcome);
      expect(stored.expiresAt).toBe(moved.outcome === "applied" ? T0 + 60_000 + 1_800_000 : T0 + 60_000);
    }
    expect(await a.dueForExpiry(T0 + 10 * 3_600_000, 100)).toStrictEqual([]);
  });

  it("when two instances sweep the same due requests, each request is expired exactly once", async () => {
    const [a, b] = [await instance(), await instance()];
    const requests = Array.from({ length: 50 }, () => pending(T0 - 1));
    await Promise.all(requests.map((request) => a.create(request)));
    const sweep = async (store: RequestStore) => {
      const results: TransitionResult[] = [];
      for (const id of await store.dueForExpiry(T0, 100)) results.push(await store.transition(id, { status: "expired", at: T0 }));
      return results;
    };
    const [fromA, fromB] = await Promise.all([sweep(a), sweep(b)]);
    const applied = [...fromA, ...fromB].filter((r) => r.outcome === "applied").map((r) => ("record" in r ? r.record.id : ""));
    expect(applied.sort()).toStrictEqual(requests.map((r) => r.id).sort());
    expect([...fromA, ...fromB].every((r) => r.outcome === "applied" || r.outcome === "already_ended")).toBe(true);
    expect(await a.dueForExpiry(T0, 100)).toStrictEqual([]);
  });

  it("when two instances claim unposted requests at once, each request goes to one of them only", async () => {
    const [a, b] = [await instance(), await instance()];
    const requests = Array.from({ length: 40 }, () => pending());
    await Promise.all(requests.map((request) => a.create(request, { postLeaseUntil: T0 })));
    const claim = async (store: RequestStore) => {
      const ids: string[] = [];
      for (let round = 0; round < 10; round += 1) ids.push(...(await claimedKeys(store, "posting", T0, 30_000, 3)));
      return ids;
    };
    const [fromA, fromB] = await Promise.all([claim(a), claim(b)]);
    expect([...fromA, ...fromB].sort()).toStrictEqual(requests.map((r) => r.id).sort());
    expect(fromA.length).toBeGreaterThan(0);
    expect(fromB.length).toBeGreaterThan(0);
  });

  it("a request created on one instance is read and answered on another, and the first answer wins across them", async () => {
    const [a, b, c] = [await instance(), await instance(), await instance()];
    const request = pending();
    await a.create(request, { idempotencyKey: "ci:deploy" });
    expect(await b.get(request.id)).toStrictEqual(request);
    expect(await c.create(pending(), { idempotencyKey: "ci:deploy" })).toStrictEqual({ record: request, created: false });
    const results = await Promise.all(
      [b, c, b, c].map((store, i) =>
        store.transition(request.id, { status: "answered", decision: { behavior: "deny", message: `no ${i}` }, answeredBy: { id: `U${i}` }, at: T0 }),
      ),
    );
    expect(results.filter((r) => r.outcome === "applied")).toHaveLength(1);
    const decisions = new Set(results.map((r) => ("record" in r ? JSON.stringify(r.record.decision) : "")));
    expect(decisions.size).toBe(1);
  });

  it("after a restart, a new instance still finds the pending request, its Slack message and answers it", async () => {
    const before = await instance();
    const request = pending();
    await before.create(request);
    const slack = { channel: "C0123456789", ts: "1712345678.000200" };
    await before.setSlackMessage(request.id, slack);
    await before.close();

    const after = await instance();
    expect(await after.findBySlackMessage(slack)).toBe(request.id);
    expect(await after.get(request.id)).toStrictEqual({ ...request, slack, postedAt: T0 });
    const result = await after.transition(request.id, {
      status: "answered",
      decision: { behavior: "deny", message: "not today" },
      answeredBy: { id: ALICE.id },
      at: T0,
    });
    expect(result).toMatchObject({ outcome: "applied", record: { status: "answered", decision: { behavior: "deny", message: "not today" } } });
  });

  describe("approvals racing on two instances, quorum 2", () => {
    const final = (person: string): AnsweredTransition => ({
      status: "answered",
      decision: { behavior: "allow", updatedInput: { command: "deploy" } },
      answeredBy: { id: person },
      at: T0,
    });
    /** Each of `requests` approved at the same moment by `first` on instance A and `second` on instance B. */
    async function race(first: string, second: string): Promise<Array<[ApproveResult, ApproveResult]>> {
      const [a, b] = [await instance(), await instance()];
      const requests = Array.from({ length: 20 }, () => pending());
      await Promise.all(requests.map((request) => a.create(request)));
      return Promise.all(
        requests.map((request) =>
          Promise.all([
            a.approve(request.id, { person: { id: first }, at: T0 }, 2, final(first)),
            b.approve(request.id, { person: { id: second }, at: T0 }, 2, final(second)),
          ]),
        ),
      );
    }

    it("when two people approve at once, exactly one approval answers the request and it holds both", async () => {
      for (const pair of await race(ALICE.id, BOB.id)) {
        expect(pair.map((result) => result.outcome).sort()).toStrictEqual(["applied", "counted"]);
        const applied = pair.find((result) => result.outcome === "applied")!;
        expect("record" in applied && applied.record.approvals?.map((approval) => approval.person.id).sort()).toStrictEqual([ALICE.id, BOB.id]);
      }
    });

    it("when the same person approves twice at once, one approval is counted, the other is a duplicate, and the request stays pending", async () => {
      for (const pair of await race(ALICE.id, ALICE.id)) {
        expect(pair.map((result) => result.outcome).sort()).toStrictEqual(["counted", "duplicate"]);
        expect("record" in pair[0] && pair[0].record).toMatchObject({ status: "pending", approvals: [{ person: { id: ALICE.id } }] });
      }
    });
  });

  it("when two instances claim reminders at once, each goes to one of them only, and none of an ended request", async () => {
    const [a, b] = [await instance(), await instance()];
    const requests = Array.from({ length: 20 }, () => pending());
    await Promise.all(requests.map((request) => a.create(request)));
    const slack = (i: number) => ({ channel: "C0123456789", ts: `1712345678.${String(i).padStart(6, "0")}` });
    const reminders = [
      { index: 0, dueAt: T0 },
      { index: 1, dueAt: T0 },
    ];
    await Promise.all(requests.map((request, i) => a.setSlackMessage(request.id, slack(i), { reminders })));
    const [ended, ...live] = requests;
    await b.transition(ended!.id, { status: "cancelled", at: T0 });
    const claim = async (store: RequestStore) => {
      const claimed: string[] = [];
      for (let round = 0; round < 10; round += 1) claimed.push(...(await store.claim("reminders", T0, 30_000, 3)).map(({ key }) => key));
      return claimed;
    };
    const [fromA, fromB] = await Promise.all([claim(a), claim(b)]);
    expect([...fromA, ...fromB].sort()).toStrictEqual(live.flatMap(({ id }) => [entryKey(id, 0), entryKey(id, 1)]).sort());
  });

  it("after a restart, a new instance claims the reminders the old one queued", async () => {
    const before = await instance();
    const request = pending();
    await before.create(request);
    await before.setSlackMessage(request.id, { channel: "C0123456789", ts: "1712345678.000300" }, { reminders: [{ index: 0, dueAt: T0 + 300_000 }] });
    await before.close();

    const after = await instance();
    expect(await after.claim("reminders", T0 + 300_000, 30_000, 10)).toStrictEqual([{ key: entryKey(request.id, 0), id: request.id, attempts: 0 }]);
  });
});
