/**
 * Which requests "Allow for a while" rules concern (src/requests/rule-matching.ts):
 * the scope a request gives, where the button is offered and a rule may
 * answer, how long a rule lasts, and what it answers.
 */
import { describe, expect, it } from "vitest";
import { DEFAULT_RULE_MINUTES } from "../../../src/requests/vocabulary.js";
import { answeredByRule, ruleDecision, ruleLives, ruleMinutesOf, ruleScopeOf, takesRules } from "../../../src/requests/rule-matching.js";
import { ALICE } from "../../fixtures/people.js";
import { deployPolicy } from "../../fixtures/policies.js";
import { answered, askRecord, interactiveRecord, permissionRecord, stepGateRecord } from "../../fixtures/records.js";
import { ruleOf } from "../../helpers/rule-store-contract.js";

const session = { agent: { name: "claude", sessionId: "sess-1" } };

describe("the scope of a request", () => {
  it("is the record's token, the body's agent session and its tool, for permission and step_gate", () => {
    expect(ruleScopeOf(permissionRecord())).toStrictEqual({ token: "ci-bot", sessionId: "sess-1", toolName: "Bash" });
    expect(ruleScopeOf(stepGateRecord({ toolName: "Write", ...session }, { tokenName: "laptop" }))).toStrictEqual({
      token: "laptop",
      sessionId: "sess-1",
      toolName: "Write",
    });
  });

  it("is none without an agent session, or for a question kind", () => {
    expect(ruleScopeOf(permissionRecord({ agent: { name: "claude" } }))).toBeUndefined();
    expect(ruleScopeOf(permissionRecord({ agent: { name: "claude", sessionId: "" } }))).toBeUndefined();
    expect(ruleScopeOf(stepGateRecord())).toBeUndefined();
    expect(ruleScopeOf(askRecord({ agent: { sessionId: "sess-1" } }))).toBeUndefined();
    expect(ruleScopeOf(interactiveRecord({ agent: { sessionId: "sess-1" } }))).toBeUndefined();
  });
});

describe("where rules apply", () => {
  it("on a permission or step_gate request with a session, whose policy says nothing against them", () => {
    expect(takesRules(permissionRecord())).toBe(true);
    expect(takesRules(stepGateRecord(session))).toBe(true);
    expect(takesRules(permissionRecord({}, { policy: { alwaysAllow: "tool", ruleMinutes: 30 } }))).toBe(true);
  });

  it("not where the policy says allowRules: false", () => {
    expect(takesRules(permissionRecord({}, { policy: { alwaysAllow: "tool", allowRules: false } }))).toBe(false);
  });

  it("never under a quorum", () => {
    expect(takesRules(permissionRecord({}, { policy: deployPolicy({ quorum: 2 }) }))).toBe(false);
    expect(takesRules(stepGateRecord(session, { policy: deployPolicy({ quorum: 3 }) }))).toBe(false);
    expect(takesRules(permissionRecord({}, { policy: deployPolicy({ quorum: 1 }) }))).toBe(true);
  });

  it("not without a session, nor on a question kind", () => {
    expect(takesRules(stepGateRecord())).toBe(false);
    expect(takesRules(askRecord({ agent: { sessionId: "sess-1" } }))).toBe(false);
  });

  it("whatever the request's status", () => {
    const pending = permissionRecord();
    expect(takesRules(answered(pending, { behavior: "allow", updatedInput: pending.body.input }))).toBe(true);
  });
});

describe("a rule's length and answer", () => {
  it("lasts the policy's ruleMinutes, else the default", () => {
    expect(ruleMinutesOf(permissionRecord())).toBe(DEFAULT_RULE_MINUTES);
    expect(ruleMinutesOf(permissionRecord({}, { policy: { alwaysAllow: "tool", ruleMinutes: 90 } }))).toBe(90);
  });

  it("allows a permission request with its input unchanged, and answers y to a step gate", () => {
    const input = { command: "ls -la", nested: { a: [1, 2] } };
    expect(ruleDecision(permissionRecord({ input }))).toStrictEqual({ behavior: "allow", updatedInput: input });
    expect(ruleDecision(stepGateRecord(session))).toStrictEqual({ reply: "y" });
    expect(() => ruleDecision(askRecord())).toThrow(/takes no rule/);
  });

  it("answers a new request in the rule creator's name (id and name only), ended when it was created", () => {
    const record = permissionRecord();
    const rule = ruleOf({ createdBy: { id: ALICE.id, name: ALICE.name, teamId: "T0TEAM" } });
    expect(answeredByRule(record, rule, record.createdAt)).toStrictEqual({
      ...record,
      status: "answered",
      decision: { behavior: "allow", updatedInput: record.body.input },
      answeredBy: { id: ALICE.id, name: ALICE.name },
      endedAt: record.createdAt,
    });
  });

  it("lives until, not at, its expiresAt", () => {
    expect(ruleLives({ expiresAt: 1000 }, 999)).toBe(true);
    expect(ruleLives({ expiresAt: 1000 }, 1000)).toBe(false);
  });
});
