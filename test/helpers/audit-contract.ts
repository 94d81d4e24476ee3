/**
 * The AuditLog contract, run against every implementation (memory and the
 * Redis Stream) so they stay interchangeable: round trips, ids in append
 * order, retention by age, a cap no token can flush the record with, a share
 * of it per agent token that no token can take another's room with, and reads by limit, `after` cursor, `since` time and
 * request id, alone and together. Time is real (the Redis log's ids come
 * from Redis's clock): `since` is taken from the ids the log assigned.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { AuditEntry, AuditEvent, AuditLog } from "../../src/requests/audit.js";
import { sleep } from "./until.js";
import { ALICE } from "../fixtures/people.js";

/** Builds a fresh, empty log capped at `maxEvents` (with each token's `tokenShare` and keeping events `retentionMs`, when given); the suite closes it. */
export type MakeAuditLog = (options: { maxEvents: number; tokenShare?: number; retentionMs?: number }) => Promise<AuditLog>;

const T0 = 1_800_000_000_000;
const UNICODE = 'héllo — 日本語 🚀 \u202Eright-to-left\u202C "quotes" \\ back\\slash \u0000 nul\nnew line';

export function entry(overrides: Partial<AuditEntry> = {}): AuditEntry {
  return { at: T0, type: "created", requestId: "req-1", token: "ci-bot", kind: "permission", channel: "C0123456789", ...overrides };
}

/** The ms part of an event id. */
const msOf = (event: AuditEvent) => Number(event.id.split("-")[0]);

export function runAuditLogContract(name: string, makeLog: MakeAuditLog): void {
  describe(`${name} audit log contract`, () => {
    const opened: AuditLog[] = [];
    afterEach(async () => {
      await Promise.all(opened.splice(0).map((log) => log.close()));
    });

    async function open(maxEvents = 10_000, retentionMs?: number, tokenShare?: number): Promise<AuditLog> {
      const log = await makeLog({ maxEvents, ...(retentionMs === undefined ? {} : { retentionMs }), ...(tokenShare === undefined ? {} : { tokenShare }) });
      opened.push(log);
      return log;
    }
    async function appendAll(log: AuditLog, entries: AuditEntry[]): Promise<AuditEvent[]> {
      for (const e of entries) await log.append(e);
      return log.read({ limit: entries.length + 10 });
    }
    const types = (events: AuditEvent[]) => events.map((e) => `${e.requestId}:${e.type}`);

    it("reads back every field of an event exactly, with an id the log assigned", async () => {
      const log = await open();
      const full = entry({
        type: "answered",
        route: "routes.0",
        person: { id: "U0ALICE", name: UNICODE },
        reason: UNICODE,
        status: "answered",
        approvals: { count: 2, quorum: 2 },
      });
      await log.append(full);
      const [event] = await log.read({ limit: 10 });
      const { id, ...rest } = event!;
      expect(rest).toStrictEqual(full);
      expect(id).toMatch(/^\d+-\d+$/);
    });

    it("keeps the events in append order with increasing, unique ids, many in one millisecond", async () => {
      const log = await open();
      const events = await appendAll(
        log,
        Array.from({ length: 50 }, (_, i) => entry({ requestId: `req-${i}` })),
      );
      expect(events.map((e) => e.requestId)).toStrictEqual(Array.from({ length: 50 }, (_, i) => `req-${i}`));
      expect(new Set(events.map((e) => e.id)).size).toBe(50);
      for (let i = 1; i < events.length; i += 1) {
        const [a, b] = [events[i - 1]!.id.split("-").map(BigInt), events[i]!.id.split("-").map(BigInt)];
        expect(a[0]! < b[0]! || (a[0] === b[0] && a[1]! < b[1]!)).toBe(true);
      }
    });

    it("at its cap keeps every old event, counts the events that are no decision instead of writing them, and still writes decisions", async () => {
      const log = await open(3);
      expect(await log.drops()).toBeUndefined();
      for (const type of ["created", "posted", "reminded", "created", "answered"] as const) await log.append(entry({ type }));
      await log.append(entry({ type: "cancelled", person: { id: ALICE.id } }));
      await log.append(entry({ type: "cancelled" }));
      const kept = await log.read({ limit: 10 });
      expect(kept.map((e) => e.type)).toStrictEqual(["created", "posted", "reminded", "answered", "cancelled"]);
      expect(kept[4]!.person).toStrictEqual({ id: ALICE.id });
      const drops = await log.drops();
      expect(drops).toMatchObject({ events: 2, causes: [{ reason: "cap", events: 2 }] });
      expect(drops!.firstAt).toBeLessThanOrEqual(drops!.lastAt);
    });

    it("an agent token cannot flush a person's decision: 60 creates and cancels after it leave it in the log", async () => {
      const log = await open(100);
      await log.append(entry({ type: "created", requestId: "deploy" }));
      await log.append(entry({ type: "answered", requestId: "deploy", person: { id: ALICE.id } }));
      for (let i = 0; i < 60; i += 1) {
        await log.append(entry({ type: "created", requestId: `noise-${i}`, token: "other-bot" }));
        await log.append(entry({ type: "cancelled", requestId: `noise-${i}`, token: "other-bot" }));
      }
      expect((await log.read({ limit: 10, requestId: "deploy" })).map((e) => e.type)).toStrictEqual(["created", "answered"]);
      expect(await log.drops()).toMatchObject({ events: 22 });
    });

    it("a read by request finds that request's events only, not one whose id begins the same or whose reason quotes it", async () => {
      const log = await open(100);
      const id = 'dé"ploy\\1';
      await log.append(entry({ type: "created", requestId: id }));
      await log.append(entry({ type: "created", requestId: `${id}-2` }));
      await log.append(entry({ type: "cancelled", requestId: "other", reason: `"requestId":${JSON.stringify(id)} ${id}` }));
      await log.append(entry({ type: "answered", requestId: id, person: { id: ALICE.id }, reason: "yes" }));
      const found = await log.read({ limit: 10, requestId: id });
      expect(found.map((e) => `${e.requestId} ${e.type}`)).toStrictEqual([`${id} created`, `${id} answered`]);
      found[0]!.requestId = "changed";
      expect((await log.read({ limit: 10, requestId: id })).map((e) => e.type)).toStrictEqual(["created", "answered"]);
    });

    it("one token past its share cannot keep another token's events out: its own are counted under token_share", async () => {
      const log = await open(100, undefined, 50);
      for (let i = 0; i < 60; i += 1) {
        await log.append(entry({ type: "created", requestId: `noise-${i}`, token: "other-bot" }));
        await log.append(entry({ type: "cancelled", requestId: `noise-${i}`, token: "other-bot" }));
      }
      for (const type of ["created", "posted", "reminded", "answered"] as const) await log.append(entry({ type, requestId: "deploy" }));
      expect((await log.read({ limit: 10, requestId: "deploy" })).map((e) => e.type)).toStrictEqual(["created", "posted", "reminded", "answered"]);
      expect((await log.read({ limit: 200 })).filter((e) => e.token === "other-bot")).toHaveLength(50);
      const drops = await log.drops();
      expect(drops).toMatchObject({ events: 70, causes: [{ reason: "token_share", token: "other-bot", events: 70 }] });
      expect(drops!.causes[0]!.firstAt).toBeLessThanOrEqual(drops!.causes[0]!.lastAt);
    });

    it("writes a token's decisions past its share, and does not count them in it", async () => {
      const log = await open(100, undefined, 1);
      await log.append(entry({ type: "answered", person: { id: ALICE.id } }));
      await log.append(entry({ type: "created" }));
      await log.append(entry({ type: "posted" }));
      for (const type of ["approval", "refused", "rule_created", "rule_used", "rule_revoked", "extended"] as const) await log.append(entry({ type }));
      await log.append(entry({ type: "cancelled", person: { id: ALICE.id } }));
      await log.append(entry({ type: "cancelled" }));
      expect((await log.read({ limit: 20 })).map((e) => e.type)).toStrictEqual([
        "answered",
        "created",
        "approval",
        "refused",
        "rule_created",
        "rule_used",
        "rule_revoked",
        "extended",
        "cancelled",
      ]);
      expect(await log.drops()).toMatchObject({ events: 2, causes: [{ reason: "token_share", token: "ci-bot", events: 2 }] });
    });

    it("gives a token its share back as its events age out of the retention", async () => {
      const log = await open(100, 300, 2);
      await log.append(entry({ requestId: "old-1" }));
      await log.append(entry({ requestId: "old-2" }));
      await log.append(entry({ requestId: "kept-out" }));
      await sleep(400);
      await log.append(entry({ requestId: "new-1" }));
      await log.append(entry({ requestId: "new-2" }));
      await log.append(entry({ requestId: "new-3" }));
      expect((await log.read({ limit: 10 })).map((e) => e.requestId)).toStrictEqual(["new-1", "new-2"]);
      expect(await log.drops()).toMatchObject({ events: 2, causes: [{ reason: "token_share", token: "ci-bot", events: 2 }] });
    });

    it("says why each event was kept out: the cap's first, then each token past its share, by name", async () => {
      const log = await open(5, undefined, 2);
      for (const token of ["zeta", "zeta", "zeta", "alpha", "alpha", "alpha"]) await log.append(entry({ token }));
      const { token: _none, ...tokenless } = entry({ requestId: "no-token" });
      await log.append(tokenless);
      await log.append(tokenless);
      const drops = await log.drops();
      expect(drops).toMatchObject({ events: 3 });
      expect(drops!.causes.map(({ reason, token, events }) => ({ reason, token, events }))).toStrictEqual([
        { reason: "cap", token: undefined, events: 1 },
        { reason: "token_share", token: "alpha", events: 1 },
        { reason: "token_share", token: "zeta", events: 1 },
      ]);
      expect((await log.read({ limit: 10 })).map((e) => e.token)).toStrictEqual(["zeta", "zeta", "alpha", "alpha", undefined]);
    });

    it("lets events older than its retention go, and keeps the rest", async () => {
      const log = await open(10_000, 300);
      await log.append(entry({ type: "answered", requestId: "old" }));
      await sleep(400);
      await log.append(entry({ type: "created", requestId: "new" }));
      expect((await log.read({ limit: 10 })).map((e) => e.requestId)).toStrictEqual(["new"]);
      expect(await log.drops()).toBeUndefined();
    });

    it("returns at most `limit` events, the oldest first, and none for a limit of 0", async () => {
      const log = await open();
      await appendAll(log, [entry({ type: "created" }), entry({ type: "posted" }), entry({ type: "answered" })]);
      expect((await log.read({ limit: 2 })).map((e) => e.type)).toStrictEqual(["created", "posted"]);
      expect(await log.read({ limit: 0 })).toStrictEqual([]);
    });

    it("reads on after a cursor: paging with `after` yields every event once", async () => {
      const log = await open();
      const all = await appendAll(
        log,
        Array.from({ length: 7 }, (_, i) => entry({ requestId: `req-${i}` })),
      );
      const seen: AuditEvent[] = [];
      let after: string | undefined;
      for (;;) {
        const page = await log.read({ limit: 3, ...(after === undefined ? {} : { after }) });
        if (page.length === 0) break;
        seen.push(...page);
        after = page[page.length - 1]!.id;
      }
      expect(seen).toStrictEqual(all);
      expect(await log.read({ limit: 10, after: all[6]!.id })).toStrictEqual([]);
      expect(await log.read({ limit: 10, after: "99999999999999-0" })).toStrictEqual([]);
    });

    it("reads the events appended at or after `since`", async () => {
      const log = await open();
      await log.append(entry({ type: "created" }));
      await sleep(5);
      await log.append(entry({ type: "posted" }));
      await log.append(entry({ type: "answered" }));
      const [created, posted] = await log.read({ limit: 10 });
      expect(msOf(posted!)).toBeGreaterThan(msOf(created!));
      expect((await log.read({ limit: 10, since: msOf(posted!) })).map((e) => e.type)).toStrictEqual(["posted", "answered"]);
      expect((await log.read({ limit: 10, since: 0 })).map((e) => e.type)).toStrictEqual(["created", "posted", "answered"]);
      expect(await log.read({ limit: 10, since: Date.now() + 60_000 })).toStrictEqual([]);
    });

    it("with both `since` and `after`, starts from the later of the two", async () => {
      const log = await open();
      await log.append(entry({ type: "created" }));
      await sleep(5);
      await log.append(entry({ type: "posted" }));
      await sleep(5);
      await log.append(entry({ type: "reminded" }));
      await log.append(entry({ type: "answered" }));
      const [created, posted, reminded] = await log.read({ limit: 10 });
      const read = async (since: number, after: string) => (await log.read({ limit: 10, since, after })).map((e) => e.type);
      expect(await read(msOf(posted!), reminded!.id)).toStrictEqual(["answered"]);
      expect(await read(msOf(reminded!), created!.id)).toStrictEqual(["reminded", "answered"]);
    });

    it("reads one request's events, oldest first, up to `limit`, and on after a cursor", async () => {
      const log = await open();
      await appendAll(log, [
        entry({ requestId: "a", type: "created" }),
        entry({ requestId: "b", type: "created" }),
        entry({ requestId: "a", type: "posted" }),
        entry({ requestId: "b", type: "cancelled" }),
        entry({ requestId: "a", type: "answered" }),
      ]);
      const first = await log.read({ limit: 2, requestId: "a" });
      expect(types(first)).toStrictEqual(["a:created", "a:posted"]);
      expect(types(await log.read({ limit: 2, requestId: "a", after: first[1]!.id }))).toStrictEqual(["a:answered"]);
      expect(types(await log.read({ limit: 10, requestId: "b" }))).toStrictEqual(["b:created", "b:cancelled"]);
      expect(await log.read({ limit: 10, requestId: "nobody" })).toStrictEqual([]);
    });

    it("finds one request's events however many other events lie between them", async () => {
      const log = await open();
      const entries = Array.from({ length: 1300 }, (_, i) => entry({ requestId: `other-${i}` }));
      entries[0] = entry({ requestId: "needle", type: "created" });
      entries[700] = entry({ requestId: "needle", type: "posted" });
      entries[1299] = entry({ requestId: "needle", type: "expired" });
      for (const e of entries) await log.append(e);
      const first = await log.read({ limit: 2, requestId: "needle" });
      expect(types(first)).toStrictEqual(["needle:created", "needle:posted"]);
      expect(types(await log.read({ limit: 2, requestId: "needle", after: first[1]!.id }))).toStrictEqual(["needle:expired"]);
    });

    it.each([
      ["an unknown type", { type: "deployed" }],
      ["an empty request id", { requestId: "" }],
      ["a reason over 2000 characters", { reason: "x".repeat(2001) }],
      ["a time that is not a number", { at: "yesterday" }],
    ])("refuses to append an entry with %s, and stores nothing", async (_what, bad) => {
      const log = await open();
      await expect(log.append({ ...entry(), ...bad } as AuditEntry)).rejects.toThrow();
      expect(await log.read({ limit: 10 })).toStrictEqual([]);
    });

    it("hands out copies: changing a read event changes nothing stored", async () => {
      const log = await open();
      await log.append(entry({ person: { id: ALICE.id } }));
      const [event] = await log.read({ limit: 1 });
      event!.person!.id = "U0MALLORY";
      expect((await log.read({ limit: 1 }))[0]!.person).toStrictEqual({ id: ALICE.id });
    });
  });
}
