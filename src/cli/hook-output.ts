/**
 * Checks the hook JSON `approval-relay hook` prints: the relay's reply must
 * be a decision Claude Code will act on for the event at hand; otherwise the
 * CLI prints the relay's own deny shape (src/hooks/reply.ts) — fail closed.
 */
import { z } from "zod";
import type { HookEvent } from "../hooks/input.js";

const PreToolUseReply = z.looseObject({
  continue: z.boolean().optional(),
  stopReason: z.string().optional(),
  hookSpecificOutput: z.looseObject({
    hookEventName: z.literal("PreToolUse"),
    permissionDecision: z.enum(["allow", "deny", "ask"]),
    permissionDecisionReason: z.string().optional(),
  }),
});

const PermissionRequestReply = z.looseObject({
  hookSpecificOutput: z.looseObject({
    hookEventName: z.literal("PermissionRequest"),
    decision: z.discriminatedUnion("behavior", [
      z.looseObject({
        behavior: z.literal("allow"),
        updatedInput: z.record(z.string(), z.unknown()).optional(),
        updatedPermissions: z.array(z.looseObject({ type: z.string() })).optional(),
      }),
      z.looseObject({ behavior: z.literal("deny"), message: z.string().optional(), interrupt: z.boolean().optional() }),
    ]),
  }),
});

/** True when `reply` is a decision for `event` that Claude Code can act on. */
export function isDecisionFor(event: HookEvent, reply: unknown): boolean {
  return (event === "PreToolUse" ? PreToolUseReply : PermissionRequestReply).safeParse(reply).success;
}
