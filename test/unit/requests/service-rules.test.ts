/**
 * "Allow for a while" through RequestService (docs/architecture.md §7), on the memory
 * stores with the fake messenger and a fake clock: a rule click answers like
 * Allow and then creates the rule; a new request in the rule's scope is
 * answered at once in the creator's name, posted nowhere, audited and
 * counted in the thread; and every case where a rule must not apply.
 */
import { describe, expect, it, vi } from "vitest";
import { Route } from "../../../src/requests/route-schema.js";
import type { AuditEntry } from "../../../src/requests/audit.js";
import type { RuleStore } from "../../../src/requests/rules.js";
import { createMemoryRuleStore } from "../../../src/store/memory-rules.js";
import { ALICE, BOB } from "../../fixtures/people.js";
import { bodyOf, createHarness, DEFAULT_CHANNEL, deferred, flush, T0, useHarness } from "../../helpers/service-harness.js";

const SESSION = { name: "claude-code", sessionId: "sess-1" };
const MINUTE = 60_000;
const ROUTES = [
  { match: { labels: { env: "prod" } }, allowRules: false },
  { match: { labels: { team: "pair" } }, approvers: { users: [ALICE.id, BOB.id] }, quorum: 2 },
  { match: { labels: { team: "bob" } }, approvers: { users: [BOB.id] } },
  { match: { labels: { team: "long" } }, ruleMinutes: 90 },
].map((route) => Route.parse(route));

let rules: RuleStore;
let audited: AuditEntry[];
const h = useHarness(() => {
  audited = [];
  rules = createMemoryRuleStore();
  return { rules, routes: ROUTES, audit: { record: (entry) => audited.push(entry) } };
});

const at = (ms: number) => vi.setSystemTime(T0 + ms);

async function create(fields: Record<string, unknown> = {}, tokenName = "ci-bot") {
  const { record } = await h.service.create({ tokenName, body: bodyOf({ agent: SESSION, ...fields }) });
  await h.service.idle();
  return record;
}

/** Alice clicks "Allow for 15 min" on a new Bash request; resolves once the rule is stored. */
async function aliceAllowsForAWhile(fields: Record<string, unknown> = {}) {
  const origin = await create(fields);
  const grant = await h.service.allowForAWhile(origin.id, ALICE);
  const rule = await grant.rule;
  await h.service.idle();
  return { origin, grant, rule };
}

const types = () => audited.map((entry) => entry.type);

describe("a click on Allow for 15 min", () => {
  it("allows the request with its input unchanged, then creates a rule of its token, session and tool for 15 minutes", async () => {
    const { origin, grant, rule } = await aliceAllowsForAWhile();
    expect(grant.answer.outcome).toBe("applied");
    const answered = await h.service.get(origin.id);
    expect(answered).toMatchObject({ status: "answered", decision: { behavior: "allow", updatedInput: { command: "npm test" } }, answeredBy: ALICE });
    expect(rule).toStrictEqual({
      id: expect.any(String),
      token: "ci-bot",
      sessionId: "sess-1",
      toolName: "Bash",
      createdBy: ALICE,
      createdAt: T0,
      expiresAt: T0 + 15 * MINUTE,
      uses: 0,
      requestId: origin.id,
      message: h.messenger.refs[0],
    });
    expect(await rules.get(rule!.id, T0)).toStrictEqual(rule);
    expect(types()).toStrictEqual(["created", "posted", "answered", "rule_created"]);
    expect(audited[3]).toStrictEqual({
      at: T0,
      type: "rule_created",
      requestId: origin.id,
      token: "ci-bot",
      kind: "permission",
      channel: DEFAULT_CHANNEL,
      route: "default",
      person: ALICE,
      reason: `rule ${rule!.id}: Bash calls of agent session sess-1 with token ci-bot, for 15 min (until ${new Date(T0 + 15 * MINUTE).toISOString()})`,
    });
  });

  it("lasts the route's ruleMinutes", async () => {
    const { rule } = await aliceAllowsForAWhile({ labels: { team: "long" } });
    expect(rule!.expiresAt).toBe(T0 + 90 * MINUTE);
  });

  it("answers a step gate y", async () => {
    const origin = await create({ kind: "step_gate", toolName: "Bash", input: { command: "ls" }, agent: SESSION });
    const grant = await h.service.allowForAWhile(origin.id, ALICE);
    expect(grant.answer).toMatchObject({ outcome: "applied", record: { decision: { reply: "y" } } });
    expect((await grant.rule)?.toolName).toBe("Bash");
  });

  it("from someone who may not answer is refused like any answer: audited, nothing answered, no rule", async () => {
    const origin = await create({ labels: { team: "bob" } });
    const grant = await h.service.allowForAWhile(origin.id, ALICE);
    expect(grant.answer.outcome).toBe("refused");
    expect(grant.rule).toBeUndefined();
    expect((await h.service.get(origin.id))?.status).toBe("pending");
    expect(await rules.list({ now: T0, limit: 10 })).toStrictEqual([]);
    expect(types()).toStrictEqual(["created", "posted", "refused"]);
  });

  it("on an ended request changes nothing and creates no rule", async () => {
    const origin = await create();
    await h.service.answer(origin.id, { behavior: "deny", message: "no" }, BOB);
    const grant = await h.service.allowForAWhile(origin.id, ALICE);
    expect(grant.answer).toMatchObject({ outcome: "already_ended", record: { answeredBy: BOB } });
    expect(grant.rule).toBeUndefined();
    expect(await rules.list({ now: T0, limit: 10 })).toStrictEqual([]);
  });

  it("that loses to another answer at the same moment creates no rule", async () => {
    const origin = await create();
    const [denied, grant] = await Promise.all([
      h.service.answer(origin.id, { behavior: "deny", message: "no" }, BOB),
      h.service.allowForAWhile(origin.id, ALICE),
    ]);
    expect(denied.outcome).toBe("applied");
    expect(grant.answer.outcome).toBe("already_ended");
    expect(await rules.list({ now: T0, limit: 10 })).toStrictEqual([]);
  });

  it("is refused as invalid where no rule is offered (a quorum, allowRules: false, no session, a question)", async () => {
    for (const fields of [
      { labels: { team: "pair" } },
      { labels: { env: "prod" } },
      { agent: { name: "ci" } },
      { kind: "interactive_questions", questions: [{ id: "q", question: "Go?", type: "confirm" }], agent: SESSION },
    ]) {
      const origin = await create(fields);
      await expect(h.service.allowForAWhile(origin.id, ALICE), JSON.stringify(fields)).rejects.toMatchObject({ code: "relay_invalid_request" });
      expect((await h.service.get(origin.id))?.status).toBe("pending");
    }
  });

  it("without a rule store answers like Allow and resolves no rule", async () => {
    const plain = createHarness();
    const { record } = await plain.service.create({ tokenName: "ci-bot", body: bodyOf({ agent: SESSION }) });
    const grant = await plain.service.allowForAWhile(record.id, ALICE);
    expect(grant.answer.outcome).toBe("applied");
    expect(await grant.rule).toBeUndefined();
    plain.service.close();
  });

  it("replaces a live rule of the same scope, audited as revoked by the newer rule", async () => {
    // Another tool call of the same scope (the same one would join Alice's request).
    const waiting = await create({ input: { command: "npm run build" } });
    const first = await aliceAllowsForAWhile();
    at(MINUTE);
    const second = await (await h.service.allowForAWhile(waiting.id, BOB)).rule;
    expect(await rules.get(first.rule!.id, T0 + MINUTE)).toBeUndefined();
    expect((await rules.find(second!, T0 + MINUTE))?.createdBy).toStrictEqual(BOB);
    expect(audited.at(-1)).toMatchObject({
      type: "rule_revoked",
      requestId: first.origin.id,
      person: BOB,
      reason: `rule ${first.rule!.id}: replaced by rule ${second!.id} in the same scope`,
    });
  });
});

describe("a new request under a live rule", () => {
  it("is answered at once in the creator's name with the input unchanged, never posted, and audited as the rule's use", async () => {
    const { rule } = await aliceAllowsForAWhile();
    audited.length = 0;
    at(5 * MINUTE);
    const posts = h.messenger.posts.length;
    const next = await create({ input: { command: "git status" } });
    expect(next).toMatchObject({
      status: "answered",
      decision: { behavior: "allow", updatedInput: { command: "git status" } },
      answeredBy: ALICE,
      endedAt: T0 + 5 * MINUTE,
    });
    expect(h.messenger.posts).toHaveLength(posts);
    expect(types()).toStrictEqual(["created", "answered", "rule_used"]);
    expect(audited[2]).toStrictEqual({
      at: T0 + 5 * MINUTE,
      type: "rule_used",
      requestId: next.id,
      token: "ci-bot",
      kind: "permission",
      channel: DEFAULT_CHANNEL,
      route: "default",
      person: ALICE,
      reason: `rule ${rule!.id}`,
    });
    expect((await rules.get(rule!.id, T0 + 5 * MINUTE))?.uses).toBe(1);
  });

  it("a step gate of the session and tool gets y", async () => {
    await aliceAllowsForAWhile();
    const next = await create({ kind: "step_gate", toolName: "Bash", input: { command: "ls" }, agent: SESSION });
    expect(next).toMatchObject({ status: "answered", decision: { reply: "y" }, answeredBy: ALICE });
  });

  it("of another session, another token or another tool is posted and waits for a person", async () => {
    await aliceAllowsForAWhile();
    const posts = h.messenger.posts.length;
    const others = [
      await create({ agent: { ...SESSION, sessionId: "sess-2" } }),
      await create({}, "laptop"),
      await create({ toolName: "Read", input: { file_path: "/etc/hosts" } }),
      await create({ agent: { name: "claude-code" } }),
    ];
    expect(others.map((record) => record.status)).toStrictEqual(["pending", "pending", "pending", "pending"]);
    expect(h.messenger.posts).toHaveLength(posts + 4);
  });

  it("is posted once the rule's time is up", async () => {
    await aliceAllowsForAWhile();
    at(15 * MINUTE - 1);
    expect((await create()).status).toBe("answered");
    at(15 * MINUTE);
    expect((await create()).status).toBe("pending");
  });

  it("is posted after the rule was revoked, and the revoke is audited", async () => {
    const { origin, rule } = await aliceAllowsForAWhile();
    expect((await h.service.rules!.revoke(rule!.id, { token: "ops" }))?.id).toBe(rule!.id);
    expect(audited.at(-1)).toStrictEqual({
      at: T0,
      type: "rule_revoked",
      requestId: origin.id,
      token: "ci-bot",
      reason: `rule ${rule!.id}: Bash calls of agent session sess-1 with token ci-bot, revoked with token ops`,
    });
    expect((await create()).status).toBe("pending");
  });

  it("is posted where its own policy takes no rule: allowRules: false, or a quorum", async () => {
    await aliceAllowsForAWhile();
    expect((await create({ labels: { env: "prod" } })).status).toBe("pending");
    expect((await create({ labels: { team: "pair" } })).status).toBe("pending");
  });

  it("is posted when the rule's creator may not answer it: a rule never widens who decides", async () => {
    await aliceAllowsForAWhile();
    expect((await create({ labels: { team: "bob" } })).status).toBe("pending");
  });

  it("is posted when the rule store cannot answer", async () => {
    await aliceAllowsForAWhile();
    rules.find = async () => {
      throw new Error("down");
    };
    expect((await create()).status).toBe("pending");
  });

  it("retried under the same idempotency key is answered once and counted once", async () => {
    const { rule } = await aliceAllowsForAWhile();
    const body = bodyOf({ agent: SESSION });
    const first = await h.service.create({ tokenName: "ci-bot", body, idempotencyKey: "call-1", joinOnKey: true });
    const again = await h.service.create({ tokenName: "ci-bot", body, idempotencyKey: "call-1", joinOnKey: true });
    await h.service.idle();
    expect([first.created, again.created, again.record.id]).toStrictEqual([true, false, first.record.id]);
    expect((await rules.get(rule!.id, T0))?.uses).toBe(1);
    expect(types().filter((type) => type === "rule_used")).toHaveLength(1);
  });
});

describe("the thread tally", () => {
  it("is posted at the first use and rewritten with the count after each later one", async () => {
    const { rule } = await aliceAllowsForAWhile();
    expect(h.messenger.tallies).toStrictEqual([]);
    await create();
    await create();
    await create();
    expect(h.messenger.tallies.map(({ action, rule: shown }) => [action, shown.uses])).toStrictEqual([
      ["post", 1],
      ["update", 2],
      ["update", 3],
    ]);
    expect(h.messenger.tallies[1]!.rule.tallyTs).toBe("1700000900.000001");
    expect((await rules.get(rule!.id, T0))?.tallyTs).toBe("1700000900.000001");
  });

  it("comes after the agent's answer, and a failing tally changes nothing for the agent", async () => {
    await aliceAllowsForAWhile();
    h.messenger.tallyWith = async () => {
      throw new Error("Slack is down");
    };
    const next = await create();
    expect(next.status).toBe("answered");
    expect(h.messenger.tallies).toStrictEqual([]);
  });

  it("uses that arrive while the reply is being posted are shown by one rewrite after it", async () => {
    await aliceAllowsForAWhile();
    const posting = deferred<void>();
    h.messenger.tallyWith = () => posting.promise;
    const agentCall = (input: Record<string, unknown>) => h.service.create({ tokenName: "ci-bot", body: bodyOf({ agent: SESSION, input }) });
    expect((await agentCall({ command: "a" })).record.status).toBe("answered");
    while (h.messenger.tallies.length === 0 && !(await rules.list({ now: T0, limit: 1 }))[0]?.uses) await flush();
    await flush();
    h.messenger.tallyWith = async () => {};
    await agentCall({ command: "b" });
    await agentCall({ command: "c" });
    await flush();
    posting.resolve();
    await h.service.idle();
    expect(h.messenger.tallies.map(({ action, rule }) => [action, rule.uses])).toStrictEqual([
      ["post", 1],
      ["update", 3],
    ]);
  });
});
