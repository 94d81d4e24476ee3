/**
 * Decision shapes (docs/architecture.md §2): each kind takes only its own decision, the
 * default deny message, and the short summary shown after the answer.
 */
import { describe, expect, it } from "vitest";
import { decisionMatchesKind, defaultDenyMessage, describeDecision } from "../../../src/requests/decisions.js";
import type { RequestKind } from "../../../src/protocol/request-body.js";

const allow = { behavior: "allow", updatedInput: { command: "ls" } };
const alwaysAllow = { ...allow, updatedPermissions: [{ type: "addRules", rules: [{ toolName: "Bash" }], destination: "session" }] };
const deny = { behavior: "deny", message: "Not on Fridays." };
const denyStop = { ...deny, interrupt: true };
const askAnswer = { answers: { "Which database?": "PostgreSQL" } };
const askFreeText = { answers: {}, response: "Neither, use DynamoDB" };
const interactiveAnswer = { answers: { go: true, regions: ["eu"], env: "staging" } };

describe("decisionMatchesKind", () => {
  it.each<[RequestKind, unknown]>([
    ["permission", allow],
    ["permission", alwaysAllow],
    ["permission", deny],
    ["permission", denyStop],
    ["step_gate", { reply: "y" }],
    ["step_gate", { reply: "n" }],
    ["step_gate", { reply: "q" }],
    ["ask_user_question", askAnswer],
    ["ask_user_question", askFreeText],
    ["interactive_questions", interactiveAnswer],
    ["interactive_questions", { answers: {} }],
  ])("a %s request takes %j", (kind, decision) => {
    expect(decisionMatchesKind(kind, decision)).toBe(true);
  });

  it.each<[RequestKind, unknown]>([
    ["permission", { behavior: "allow" }],
    ["permission", { behavior: "allow", updatedInput: "ls" }],
    ["permission", { behavior: "deny", message: "" }],
    ["permission", { behavior: "deny" }],
    ["permission", { behavior: "ask" }],
    ["permission", { reply: "y" }],
    ["step_gate", { reply: "yes" }],
    ["step_gate", { reply: "Y" }],
    ["step_gate", allow],
    ["ask_user_question", interactiveAnswer],
    ["ask_user_question", { answers: ["PostgreSQL"] }],
    ["ask_user_question", { reply: "y" }],
    ["interactive_questions", { answers: { go: 1 } }],
    ["interactive_questions", { answers: { go: null } }],
    ["interactive_questions", deny],
    ["interactive_questions", null],
  ])("a %s request refuses %j", (kind, decision) => {
    expect(decisionMatchesKind(kind, decision)).toBe(false);
  });
});

describe("defaultDenyMessage", () => {
  it("names who denied, in Slack, and is never empty", () => {
    expect(defaultDenyMessage("alice")).toBe("Denied by alice in Slack.");
  });
});

describe("describeDecision", () => {
  it.each([
    ["allow", allow, "✅", "Allowed"],
    ["always allow", alwaysAllow, "✅", "Always allowed"],
    ["deny", deny, "❌", "Denied"],
    ["deny and stop", denyStop, "❌", "Denied and stopped"],
    ["step gate y", { reply: "y" }, "✅", "Approved"],
    ["step gate n", { reply: "n" }, "❌", "Rejected"],
    ["step gate q", { reply: "q" }, "🛑", "Stopped"],
    ["question answers", askAnswer, "✅", "Answered"],
    ["interactive answers", interactiveAnswer, "✅", "Answered"],
  ] as const)("summarises %s", (_, decision, emoji, verb) => {
    expect(describeDecision(decision as Parameters<typeof describeDecision>[0])).toEqual({ emoji, verb });
  });

  it("does not call a deny with interrupt: false a stop", () => {
    expect(describeDecision({ behavior: "deny", message: "no", interrupt: false })).toEqual({ emoji: "❌", verb: "Denied" });
  });
});
