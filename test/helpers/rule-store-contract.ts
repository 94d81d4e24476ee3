/**
 * The RuleStore contract ("Allow for a while" rules, src/requests/rules.ts),
 * run against the memory store and the Redis store so they stay
 * interchangeable: create, find by scope (never across tokens, sessions or
 * tools), expiry by the caller's clock, replacement within a scope, revoke,
 * atomic use counting, listing, and the tally's ts (the first recorded wins;
 * who posts it is the `tallies` queue's lease, in the store contract).
 */
import { afterEach, describe, expect, it } from "vitest";
import type { Rule, RuleStore } from "../../src/requests/rules.js";
import { ALICE, BOB } from "../fixtures/people.js";

/** Builds a fresh, empty rule store; the suite closes it. */
export type MakeRuleStore = () => Promise<RuleStore>;

export const T0 = 1_800_000_000_000;
const MINUTE = 60_000;

let next = 0;
/** A rule of ci-bot's session s-1 for Bash, created by Alice at T0 for 15 minutes, with `overrides`. */
export function ruleOf(overrides: Partial<Rule> = {}): Rule {
  next += 1;
  return {
    id: `rule-${next}`,
    token: "ci-bot",
    sessionId: "s-1",
    toolName: "Bash",
    createdBy: { id: ALICE.id, name: ALICE.name!, teamId: "T0TEAM" },
    createdAt: T0,
    expiresAt: T0 + 15 * MINUTE,
    uses: 0,
    requestId: "req-1",
    message: { channel: "C0APPROVALS", ts: "1700000000.000100" },
    ...overrides,
  };
}

export function runRuleStoreContract(name: string, makeStore: MakeRuleStore): void {
  describe(`${name} rule store contract`, () => {
    const opened: RuleStore[] = [];
    afterEach(async () => {
      await Promise.all(opened.splice(0).map((store) => store.close()));
    });
    async function open(): Promise<RuleStore> {
      const store = await makeStore();
      opened.push(store);
      return store;
    }

    it("gives back every field of a rule exactly, by id, by its scope and in the listing", async () => {
      const store = await open();
      const rule = ruleOf({ sessionId: 'sess:ü:🚀 "x"', toolName: "mcp__k8s__apply", createdBy: { id: ALICE.id, name: "Ålice — 日本" } });
      expect(await store.create(rule, T0)).toStrictEqual({ rule });
      expect(await store.get(rule.id, T0 + 1)).toStrictEqual(rule);
      expect(await store.find({ token: rule.token, sessionId: rule.sessionId, toolName: rule.toolName }, T0 + 1)).toStrictEqual(rule);
      expect(await store.list({ now: T0 + 1, limit: 10 })).toStrictEqual([rule]);
    });

    it("never finds a rule for another token, session or tool, nor for a scope that only joins to the same text", async () => {
      const store = await open();
      const rule = ruleOf({ sessionId: "a:b", toolName: "c" });
      await store.create(rule, T0);
      for (const scope of [
        { token: "other-bot", sessionId: "a:b", toolName: "c" },
        { token: "ci-bot", sessionId: "a:b2", toolName: "c" },
        { token: "ci-bot", sessionId: "a:b", toolName: "C" },
        { token: "ci-bot", sessionId: "a", toolName: "b:c" },
        { token: "ci-bot:a", sessionId: "b", toolName: "c" },
      ]) {
        expect(await store.find(scope, T0 + 1), JSON.stringify(scope)).toBeUndefined();
      }
      expect((await store.find({ token: "ci-bot", sessionId: "a:b", toolName: "c" }, T0 + 1))?.id).toBe(rule.id);
    });

    it("treats a rule past its time as gone everywhere: find, get, use, list, revoke and the tally", async () => {
      const store = await open();
      const rule = ruleOf();
      await store.create(rule, T0);
      const end = rule.expiresAt;
      expect((await store.get(rule.id, end - 1))?.id).toBe(rule.id);
      expect(await store.find(rule, end)).toBeUndefined();
      expect(await store.get(rule.id, end)).toBeUndefined();
      expect(await store.use(rule.id, end)).toBeUndefined();
      expect(await store.list({ now: end, limit: 10 })).toStrictEqual([]);
      expect(await store.revoke(rule.id, end)).toBeUndefined();
      expect(await store.setTally(rule.id, "1.2", end)).toBeUndefined();
    });

    it("keeps one live rule per scope: a newer rule replaces the older, which is returned and gone", async () => {
      const store = await open();
      const older = ruleOf();
      const other = ruleOf({ toolName: "Read" });
      await store.create(older, T0);
      await store.create(other, T0);
      const newer = ruleOf({ createdBy: { id: BOB.id, name: BOB.name! }, createdAt: T0 + MINUTE, expiresAt: T0 + 16 * MINUTE });
      expect(await store.create(newer, T0 + MINUTE)).toStrictEqual({ rule: newer, replaced: older });
      expect((await store.find(older, T0 + MINUTE))?.id).toBe(newer.id);
      expect(await store.get(older.id, T0 + MINUTE)).toBeUndefined();
      expect((await store.list({ now: T0 + MINUTE, limit: 10 })).map((r) => r.id)).toStrictEqual([newer.id, other.id]);
    });

    it("does not report a rule past its time as replaced", async () => {
      const store = await open();
      const older = ruleOf({ expiresAt: T0 + MINUTE });
      await store.create(older, T0);
      const newer = ruleOf({ createdAt: T0 + MINUTE, expiresAt: T0 + 2 * MINUTE });
      expect(await store.create(newer, T0 + MINUTE)).toStrictEqual({ rule: newer });
    });

    it("revokes a rule once: gone from its scope, its id and the listing; a second revoke finds nothing", async () => {
      const store = await open();
      const rule = ruleOf();
      await store.create(rule, T0);
      expect(await store.revoke(rule.id, T0 + 1)).toStrictEqual(rule);
      expect(await store.find(rule, T0 + 2)).toBeUndefined();
      expect(await store.get(rule.id, T0 + 2)).toBeUndefined();
      expect(await store.list({ now: T0 + 2, limit: 10 })).toStrictEqual([]);
      expect(await store.revoke(rule.id, T0 + 2)).toBeUndefined();
      expect(await store.revoke("no-such-rule", T0 + 2)).toBeUndefined();
      expect(await store.use(rule.id, T0 + 2)).toBeUndefined();
    });

    it("revoking a replaced rule leaves the scope to the rule that replaced it", async () => {
      const store = await open();
      const older = ruleOf();
      await store.create(older, T0);
      const newer = ruleOf({ createdAt: T0 + 1 });
      await store.create(newer, T0 + 1);
      expect(await store.revoke(older.id, T0 + 2)).toBeUndefined();
      expect((await store.find(newer, T0 + 2))?.id).toBe(newer.id);
    });

    it("counts every use once, however many come at the same moment", async () => {
      const store = await open();
      const rule = ruleOf();
      await store.create(rule, T0);
      const counts = await Promise.all(Array.from({ length: 25 }, () => store.use(rule.id, T0 + 1)));
      expect(counts.map((counted) => counted!.uses).sort((a, b) => a - b)).toStrictEqual(Array.from({ length: 25 }, (_, i) => i + 1));
      expect((await store.get(rule.id, T0 + 2))!.uses).toBe(25);
      expect(await store.use("no-such-rule", T0 + 2)).toBeUndefined();
    });

    it("lists live rules newest first, of one token or one person, up to the limit", async () => {
      const store = await open();
      const first = ruleOf({ createdAt: T0 });
      const second = ruleOf({ createdAt: T0 + 1, token: "laptop", toolName: "Read" });
      const third = ruleOf({ createdAt: T0 + 2, toolName: "Edit", createdBy: { id: BOB.id } });
      const expired = ruleOf({ createdAt: T0 + 3, toolName: "Write", expiresAt: T0 + 5 });
      for (const rule of [first, second, third, expired]) await store.create(rule, T0);
      const ids = async (query: { token?: string; createdBy?: string; limit?: number }) =>
        (await store.list({ now: T0 + 10, limit: 10, ...query })).map((rule) => rule.id);
      expect(await ids({})).toStrictEqual([third.id, second.id, first.id]);
      expect(await ids({ token: "ci-bot" })).toStrictEqual([third.id, first.id]);
      expect(await ids({ createdBy: ALICE.id })).toStrictEqual([second.id, first.id]);
      expect(await ids({ token: "laptop", createdBy: BOB.id })).toStrictEqual([]);
      expect(await ids({ limit: 2 })).toStrictEqual([third.id, second.id]);
      expect(await ids({ limit: 0 })).toStrictEqual([]);
    });

    it("records the tally's ts once: the first recorded wins, and an unknown rule records nothing", async () => {
      const store = await open();
      const rule = ruleOf();
      await store.create(rule, T0);
      expect((await store.setTally(rule.id, "1700000001.000200", T0 + 1001))?.tallyTs).toBe("1700000001.000200");
      expect((await store.setTally(rule.id, "1700000009.000900", T0 + 1002))?.tallyTs).toBe("1700000001.000200");
      expect((await store.get(rule.id, T0 + 5000))?.tallyTs).toBe("1700000001.000200");
      expect(await store.setTally("no-such-rule", "1.2", T0)).toBeUndefined();
    });

    it("keeps the count and the tally when both change", async () => {
      const store = await open();
      const rule = ruleOf();
      await store.create(rule, T0);
      await store.use(rule.id, T0 + 1);
      await store.setTally(rule.id, "1700000001.000200", T0 + 2);
      expect(await store.use(rule.id, T0 + 3)).toStrictEqual({ ...rule, uses: 2, tallyTs: "1700000001.000200" });
    });
  });
}
