import { describe, expect, it } from "vitest";
import { interpretButton } from "../../../../src/slack/listeners/buttons.js";
import { endedNotice } from "../../../../src/slack/listeners/notices.js";
import { Action } from "../../../../src/slack/ids.js";
import { recordOf } from "../../../helpers/slack.js";

const input = { command: "ls" };
const suggestions = [{ type: "addRules", rules: [{ toolName: "Bash", ruleContent: "ls:*" }], behavior: "allow", destination: "session" }];
const permission = recordOf({ kind: "permission", toolName: "Bash", input, suggestions });
const stepGate = recordOf({ kind: "step_gate", toolName: "Bash", input });
const colour = { question: "Colour?", header: "Colour", options: [{ label: "Red" }, { label: "Blue" }] };
const askOne = recordOf({ kind: "ask_user_question", questions: [colour] });
const askTwo = recordOf({ kind: "ask_user_question", questions: [colour, { ...colour, question: "Again?" }] });
const confirm = recordOf({ kind: "interactive_questions", questions: [{ id: "go", question: "Go?", type: "confirm" }] });
const choice = recordOf({ kind: "interactive_questions", questions: [{ id: "env", question: "Env?", type: "choice", options: ["a", "b"] }] });

const press = (record: typeof permission, actionId: string, value: Record<string, number> = {}) =>
  interpretButton(record, actionId, { r: record.id, ...value }, "alice");

describe("the Allow for a while button", () => {
  const session = { agent: { sessionId: "sess-1" } };
  const ruled = recordOf({ kind: "permission", toolName: "Bash", input, ...session });

  it("asks the service for a rule on a permission or step_gate request of a session, pending or ended (an ended one is told so)", () => {
    expect(press(ruled, Action.allowForAWhile)).toStrictEqual({ type: "rule" });
    expect(press(recordOf({ kind: "step_gate", toolName: "Bash", input, ...session }), Action.allowForAWhile)).toStrictEqual({ type: "rule" });
    expect(press({ ...ruled, status: "expired" }, Action.allowForAWhile)).toStrictEqual({ type: "rule" });
  });

  it("is ignored where no rule is offered: no session, allowRules: false, a quorum, a question", () => {
    for (const record of [
      permission,
      { ...ruled, policy: { alwaysAllow: "tool" as const, allowRules: false as const } },
      { ...ruled, policy: { alwaysAllow: "tool" as const, quorum: 2 } },
      recordOf({ kind: "interactive_questions", questions: [{ id: "go", question: "Go?", type: "confirm" }], ...session }),
    ]) {
      expect(press(record, Action.allowForAWhile).type).toBe("ignore");
    }
  });
});

describe("buttons on a permission request", () => {
  it.each([
    [Action.allow, { behavior: "allow", updatedInput: input }],
    [Action.alwaysAllow, { behavior: "allow", updatedInput: input, updatedPermissions: suggestions }],
    [Action.deny, { behavior: "deny", message: "Denied by alice in Slack." }],
    [Action.denyAndStop, { behavior: "deny", message: "Denied by alice in Slack.", interrupt: true }],
  ])("%s decides %j", (actionId, decision) => {
    expect(press(permission, actionId)).toStrictEqual({ type: "decision", decision });
  });

  it.each([
    [Action.edit, "edit"],
    [Action.denyWithReason, "denyReason"],
    [Action.viewInput, "input"],
  ])("%s opens the %s modal", (actionId, modal) => {
    expect(press(permission, actionId)).toEqual({ type: "modal", modal });
  });

  it("Always allow is ignored when the rule is suppressed", () => {
    const suppressed = recordOf({ kind: "permission", toolName: "Bash", input, suggestions, suppressAlwaysAllowRule: true });
    expect(press(suppressed, Action.alwaysAllow).type).toBe("ignore");
  });

  it.each([[Action.stepYes], [Action.option], [Action.confirmYes], [Action.answer], ["relay_unknown"]])("%s does not apply", (actionId) => {
    expect(press(permission, actionId).type).toBe("ignore");
  });
});

describe("Always allow grants nothing that was not shown", () => {
  const toolRule = suggestions[0]!;
  const hidden = [
    { type: "setMode", mode: "bypassPermissions", destination: "session" },
    { type: "addRules", rules: [{ toolName: "Bash", ruleContent: "*" }], behavior: "allow", destination: "userSettings" },
    { type: "addRules", rules: [{ toolName: "Bash" }], behavior: "allow", destination: "userSettings" },
    { type: "addRules", rules: [{ toolName: "Write", ruleContent: "/etc/**" }], behavior: "allow", destination: "localSettings" },
    { type: "addDirectories", directories: ["/"], destination: "session" },
    { type: "replaceRules", rules: [{ toolName: "Bash", ruleContent: "ls:*" }], behavior: "allow", destination: "session" },
  ];
  const mixed = (policy?: "tool" | "all") =>
    recordOf({ kind: "permission", toolName: "Bash", input, suggestions: [toolRule, ...hidden] }, policy ? { policy: { alwaysAllow: policy } } : {});

  it("by default passes back only plain allow rules for the tool being asked about", () => {
    expect(press(mixed(), Action.alwaysAllow)).toStrictEqual({
      type: "decision",
      decision: { behavior: "allow", updatedInput: input, updatedPermissions: [toolRule] },
    });
    expect(press(mixed("tool"), Action.alwaysAllow)).toStrictEqual(press(mixed(), Action.alwaysAllow));
  });

  it("is not offered when every suggestion is a mode change, a wildcard or another tool's rule", () => {
    expect(press(recordOf({ kind: "permission", toolName: "Bash", input, suggestions: hidden }), Action.alwaysAllow).type).toBe("ignore");
  });

  it("passes back every suggestion where the policy says alwaysAllow: all", () => {
    expect(press(mixed("all"), Action.alwaysAllow)).toStrictEqual({
      type: "decision",
      decision: { behavior: "allow", updatedInput: input, updatedPermissions: [toolRule, ...hidden] },
    });
  });

  it("opens the confirm modal listing every rule when the message cannot hold them", () => {
    const long = Array.from({ length: 5 }, (_, i) => ({ ...toolRule, rules: [{ toolName: "Bash", ruleContent: `${"x".repeat(900)}${i}:*` }] }));
    expect(press(recordOf({ kind: "permission", toolName: "Bash", input, suggestions: long }), Action.alwaysAllow)).toEqual({
      type: "modal",
      modal: "alwaysAllow",
    });
  });
});

describe("buttons on other kinds", () => {
  it.each([
    [Action.stepYes, "y"],
    [Action.stepNo, "n"],
    [Action.stepStop, "q"],
  ])("step gate %s replies %s", (actionId, reply) => {
    expect(press(stepGate, actionId)).toStrictEqual({ type: "decision", decision: { reply } });
  });

  it("a step gate ignores permission buttons", () => {
    expect(press(stepGate, Action.allow).type).toBe("ignore");
  });

  it("a one-tap AskUserQuestion option answers with its label; Other opens the Other modal for that question", () => {
    expect(press(askOne, Action.option, { q: 0, o: 1 })).toStrictEqual({ type: "decision", decision: { answers: { "Colour?": "Blue" } } });
    expect(press(askOne, Action.other, { q: 0 })).toEqual({ type: "modal", modal: "other", questionIndex: 0 });
  });

  it("an option that does not exist, or an option on a request that is not one-tap, is ignored", () => {
    expect(press(askOne, Action.option, { q: 0, o: 5 }).type).toBe("ignore");
    expect(press(askOne, Action.option, { q: 0 }).type).toBe("ignore");
    expect(press(askTwo, Action.option, { q: 0, o: 0 }).type).toBe("ignore");
    expect(press(askTwo, Action.answer)).toEqual({ type: "modal", modal: "answer" });
  });

  it("a one-tap confirm answers true or false; a one-tap choice answers the option", () => {
    expect(press(confirm, Action.confirmYes, { q: 0 })).toStrictEqual({ type: "decision", decision: { answers: { go: true } } });
    expect(press(confirm, Action.confirmNo, { q: 0 })).toStrictEqual({ type: "decision", decision: { answers: { go: false } } });
    expect(press(choice, Action.option, { q: 0, o: 1 })).toStrictEqual({ type: "decision", decision: { answers: { env: "b" } } });
  });

  it("a confirm button on a choice question, or a question index that does not exist, is ignored", () => {
    expect(press(choice, Action.confirmYes, { q: 0 }).type).toBe("ignore");
    expect(press(confirm, Action.confirmYes, { q: 3 }).type).toBe("ignore");
    expect(press(choice, Action.option, { q: 0, o: 9 }).type).toBe("ignore");
  });

  it("View full input opens on every kind", () => {
    for (const record of [stepGate, askOne, confirm]) expect(press(record, Action.viewInput)).toEqual({ type: "modal", modal: "input" });
  });
});

describe("what a late clicker is told", () => {
  it.each([
    [{ status: "expired" as const }, "This request expired."],
    [{ status: "cancelled" as const }, "This request was cancelled."],
    [{ status: "failed" as const, error: "channel_not_found" }, "This request failed."],
    [
      { status: "answered" as const, decision: { reply: "q" as const }, answeredBy: { id: "U0BOB" } },
      "This request was already answered: 🛑 Stopped by <@U0BOB>",
    ],
    [
      { status: "answered" as const, decision: { answers: { go: true } }, answeredBy: { id: "relay", name: "autonomous mode" } },
      "This request was already answered: ✅ Answered by autonomous mode",
    ],
  ])("%j → %s", (overrides, text) => {
    expect(endedNotice({ ...stepGate, ...overrides })).toBe(text);
  });
});
