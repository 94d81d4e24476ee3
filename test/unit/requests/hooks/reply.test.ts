import { describe, expect, it } from "vitest";
import { hookOutput } from "../../../../src/requests/hooks/reply.js";
import { answered, cancelled, CREATED_AT, expired, failed, permissionRecord, stepGateRecord } from "../../../fixtures/records.js";
import { ALICE } from "../../../fixtures/people.js";

const input = { command: "npm run deploy -- --env production", description: "Deploy" };
const suggestions = [{ type: "addRules", rules: [{ toolName: "Bash", ruleContent: "npm run deploy:*" }], behavior: "allow", destination: "localSettings" }];
const permission = permissionRecord({ input, suggestions, timeoutSeconds: 595 }, { expiresAt: CREATED_AT + 595_000 });
const gate = stepGateRecord({ input }, { expiresAt: CREATED_AT + 595_000 });

const permissionDecision = (decision: unknown) => ({ hookSpecificOutput: { hookEventName: "PermissionRequest", decision } });
const preToolUse = (permissionDecision: "allow" | "deny", permissionDecisionReason?: string) => ({
  hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision, ...(permissionDecisionReason ? { permissionDecisionReason } : {}) },
});

describe("PermissionRequest replies", () => {
  it("when the approver clicks Allow, Claude Code gets allow without updatedInput, so the original input runs", () => {
    expect(hookOutput("PermissionRequest", answered(permission, { behavior: "allow", updatedInput: { ...input } }))).toEqual(
      permissionDecision({ behavior: "allow" }),
    );
  });

  it("when the approver edits the input, Claude Code gets allow with the edited input", () => {
    const edited = { command: "npm run deploy -- --env staging", description: "Deploy" };
    expect(hookOutput("PermissionRequest", answered(permission, { behavior: "allow", updatedInput: edited }))).toEqual(
      permissionDecision({ behavior: "allow", updatedInput: edited }),
    );
  });

  it("when the approver clicks Always allow, Claude Code gets allow with the chosen permission updates", () => {
    const decision = { behavior: "allow" as const, updatedInput: input, updatedPermissions: suggestions };
    expect(hookOutput("PermissionRequest", answered(permission, decision))).toEqual(permissionDecision({ behavior: "allow", updatedPermissions: suggestions }));
  });

  it("when the approver denies with a reason, Claude Code gets deny with that message and no interrupt", () => {
    const out = hookOutput("PermissionRequest", answered(permission, { behavior: "deny", message: "Not on a Friday." }));
    expect(out).toEqual(permissionDecision({ behavior: "deny", message: "Not on a Friday." }));
  });

  it("when the approver denies and stops, Claude Code gets deny with interrupt true", () => {
    const out = hookOutput("PermissionRequest", answered(permission, { behavior: "deny", message: "Denied by alice in Slack.", interrupt: true }));
    expect(out).toEqual(permissionDecision({ behavior: "deny", message: "Denied by alice in Slack.", interrupt: true }));
  });

  it("an expired request is a deny that says no one answered within the request's time", () => {
    expect(hookOutput("PermissionRequest", expired(permission))).toEqual(
      permissionDecision({ behavior: "deny", message: "No one answered in Slack within 9 minutes 55 seconds, so the tool call was denied." }),
    );
  });

  it("a request still pending when the relay stops waiting is the same deny", () => {
    expect(hookOutput("PermissionRequest", permission)).toEqual(hookOutput("PermissionRequest", expired(permission)));
  });

  it("a cancelled request is a deny that gives the reason", () => {
    const out = hookOutput("PermissionRequest", cancelled(permission, "Claude Code closed the connection", "claude-code"));
    expect(out).toEqual(
      permissionDecision({ behavior: "deny", message: "The request was cancelled (Claude Code closed the connection), so the tool call was denied." }),
    );
    expect(hookOutput("PermissionRequest", cancelled(permission, undefined, "agent:ci-bot"))).toMatchObject(
      permissionDecision({ behavior: "deny", message: "The request was cancelled (by agent:ci-bot), so the tool call was denied." }),
    );
  });

  it("a request Slack refused is a deny that gives Slack's error", () => {
    expect(hookOutput("PermissionRequest", failed(permission, "channel_not_found"))).toEqual(
      permissionDecision({ behavior: "deny", message: "The request could not be posted to Slack (channel_not_found), so the tool call was denied." }),
    );
  });

  it("a decision of another kind never allows", () => {
    expect(hookOutput("PermissionRequest", answered(permission, { reply: "y" }))).toMatchObject(
      permissionDecision({ behavior: "deny", message: expect.stringMatching(/cannot apply/) }),
    );
  });
});

describe("PreToolUse replies", () => {
  it("y allows the tool call", () => {
    expect(hookOutput("PreToolUse", answered(gate, { reply: "y" }, ALICE))).toEqual(preToolUse("allow"));
  });

  it("n denies with the step-by-step rejection text and lets the turn go on", () => {
    expect(hookOutput("PreToolUse", answered(gate, { reply: "n" }))).toEqual(preToolUse("deny", "Action rejected by the user in step-by-step mode."));
  });

  it("q denies with the stop text and stops the turn", () => {
    expect(hookOutput("PreToolUse", answered(gate, { reply: "q" }))).toEqual({
      continue: false,
      stopReason: "Execution stopped manually by the user.",
      ...preToolUse("deny", "Execution stopped manually by the user."),
    });
  });

  it("expired, cancelled and failed requests deny with the reason and never stop the turn", () => {
    expect(hookOutput("PreToolUse", expired(gate))).toEqual(
      preToolUse("deny", "No one answered in Slack within 9 minutes 55 seconds, so the tool call was denied."),
    );
    expect(hookOutput("PreToolUse", cancelled(gate, "Claude Code closed the connection"))).toEqual(
      preToolUse("deny", "The request was cancelled (Claude Code closed the connection), so the tool call was denied."),
    );
    expect(hookOutput("PreToolUse", failed(gate, "not_in_channel"))).toEqual(
      preToolUse("deny", "The request could not be posted to Slack (not_in_channel), so the tool call was denied."),
    );
  });

  it("a permission decision on a step gate never allows", () => {
    expect(hookOutput("PreToolUse", answered(gate, { behavior: "allow", updatedInput: input }))).toMatchObject(
      preToolUse("deny", expect.stringMatching(/cannot apply/)),
    );
  });
});

describe("replies to requests that expired under onTimeout: halt", () => {
  const halted = "No one answered in Slack within 9 minutes 55 seconds, so the tool call was denied and the agent was stopped.";

  it("a step gate that expired with q stops the turn: deny, continue false and a stop reason that says no one answered", () => {
    expect(hookOutput("PreToolUse", { ...expired(gate), decision: { reply: "q" } })).toEqual({
      continue: false,
      stopReason: halted,
      ...preToolUse("deny", halted),
    });
  });

  it("a permission request that expired with a deny and interrupt gets exactly that deny", () => {
    const decision = { behavior: "deny", message: halted, interrupt: true } as const;
    expect(hookOutput("PermissionRequest", { ...expired(permission), decision })).toEqual(permissionDecision(decision));
  });

  it("an expired request never allows, whatever decision it carries: it is the plain no-answer deny", () => {
    const noAnswer = "No one answered in Slack within 9 minutes 55 seconds, so the tool call was denied.";
    expect(hookOutput("PermissionRequest", { ...expired(permission), decision: { behavior: "allow", updatedInput: input } })).toEqual(
      permissionDecision({ behavior: "deny", message: noAnswer }),
    );
    expect(hookOutput("PreToolUse", { ...expired(gate), decision: { reply: "y" } })).toEqual(preToolUse("deny", noAnswer));
  });
});
