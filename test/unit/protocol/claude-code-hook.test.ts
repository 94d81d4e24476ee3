import type { PreToolUseHookSpecificOutput, SyncHookJSONOutput } from "@anthropic-ai/claude-agent-sdk";
import { describe, expect, it } from "vitest";
import { denyOutput, HookOutputOf, permissionRequestOutput, stepGateOutput } from "../../../src/protocol/claude-code-hook.js";

describe("the hook JSON has the shape of Claude Code's own types", () => {
  it("every PreToolUse reply is a SyncHookJSONOutput", () => {
    const outputs: SyncHookJSONOutput[] = [stepGateOutput("y"), stepGateOutput("n"), stepGateOutput("q"), denyOutput("PreToolUse", "No.")];
    const specific: PreToolUseHookSpecificOutput[] = outputs.map((o) => o.hookSpecificOutput as PreToolUseHookSpecificOutput);
    expect(specific.map((s) => s.permissionDecision)).toEqual(["allow", "deny", "deny", "deny"]);
  });
});

describe("the hook output schemas", () => {
  it("accept every reply the builders make, each for its own event only", () => {
    const preToolUse = [stepGateOutput("y"), stepGateOutput("n"), stepGateOutput("q"), denyOutput("PreToolUse", "No.")];
    const permission = [denyOutput("PermissionRequest", "No."), permissionRequestOutput({ behavior: "allow", updatedInput: { command: "ls" } })];
    for (const output of preToolUse) {
      expect(HookOutputOf.PreToolUse.safeParse(output).success).toBe(true);
      expect(HookOutputOf.PermissionRequest.safeParse(output).success).toBe(false);
    }
    for (const output of permission) {
      expect(HookOutputOf.PermissionRequest.safeParse(output).success).toBe(true);
      expect(HookOutputOf.PreToolUse.safeParse(output).success).toBe(false);
    }
  });

  it("refuse JSON that is not a decision Claude Code can act on", () => {
    for (const reply of [{ ok: true }, { hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "maybe" } }, null, "allow"]) {
      expect(HookOutputOf.PreToolUse.safeParse(reply).success).toBe(false);
    }
    expect(
      HookOutputOf.PermissionRequest.safeParse({ hookSpecificOutput: { hookEventName: "PermissionRequest", decision: { behavior: "perhaps" } } }).success,
    ).toBe(false);
  });

  it("keep fields a newer relay adds, so the CLI passes them on to Claude Code", () => {
    const reply = { systemMessage: "note", hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "allow", additionalContext: "x" } };
    expect(HookOutputOf.PreToolUse.parse(reply)).toEqual(reply);
  });
});
