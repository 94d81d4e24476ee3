/**
 * The hook JSON `approval-relay hook` prints: the relay's reply, checked to
 * be a decision Claude Code will act on for the event at hand, or the deny
 * the CLI writes itself when anything went wrong (fail closed).
 */
import { z } from "zod";

/** The hook events the relay answers (DESIGN §3); any other gets exit 2. */
export const HOOK_EVENTS = ["PreToolUse", "PermissionRequest"] as const;
export type HookEvent = (typeof HOOK_EVENTS)[number];

export function isHookEvent(value: unknown): value is HookEvent {
  return (HOOK_EVENTS as readonly unknown[]).includes(value);
}

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

/** The deny Claude Code reads from stdout when the relay gave no usable answer. */
export function denyOutput(event: HookEvent, reason: string): Record<string, unknown> {
  if (event === "PreToolUse") {
    return { hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: reason } };
  }
  return { hookSpecificOutput: { hookEventName: "PermissionRequest", decision: { behavior: "deny", message: reason } } };
}
