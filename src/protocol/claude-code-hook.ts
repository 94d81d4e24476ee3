/**
 * Claude Code hooks on the wire: the hook input Claude Code POSTs to an
 * `http` hook (or pipes to a `command` hook), the hook JSON it reads back,
 * and the hook timeouts the relay works within. One source for the relay's
 * endpoint, which parses the input and builds the output, and for
 * `approval-relay hook`, which checks the relay's reply before printing it
 * and prints its own deny when anything fails (fail closed).
 *
 * The input is loose: Claude Code sends more fields than the relay uses
 * (transcript_path, permission_mode, effort, mcp_server…) and adds new ones
 * over time, so unknown fields pass. It is strict on the fields the relay
 * uses, with the same limits as the request they become, so a hook input
 * that parses always makes a valid request. Checked against Claude Code
 * 2.1.332: PreToolUse carries tool_use_id; PermissionRequest does not (it is
 * optional here for both) and carries permission_suggestions instead.
 */
import { z } from "zod";
import { STEP_GATE_REJECTED, STEP_GATE_STOPPED, type StepReply } from "./decisions.js";
import { JsonObject, LIMITS, MAX_SUGGESTIONS, PermissionUpdate } from "./request-body.js";

/** Path of the relay's endpoint for Claude Code `http` hooks. */
export const HOOK_PATH = "/v1/hooks/claude-code";
/**
 * Request header by which a caller of HOOK_PATH says it retries a 503 itself
 * (the client library does; Claude Code does not): while an instance shuts
 * down, such a call gets 503 relay_shutting_down instead of a deny.
 */
export const RETRIES_UNAVAILABLE_HEADER = "x-relay-retries-unavailable";
/** Claude Code's default hook timeout (seconds), when neither the hook nor the configuration says. */
export const DEFAULT_HOOK_TIMEOUT_SECONDS = 600;
/** Shortest hook timeout the relay accepts: below it there is no time to answer before Claude Code gives up. */
export const MIN_HOOK_TIMEOUT_SECONDS = 3;
/** Longest hook timeout the relay accepts: a day. */
export const MAX_HOOK_TIMEOUT_SECONDS = 86_400;

/** The hook events the relay answers; any other is refused. */
export const HOOK_EVENTS = ["PreToolUse", "PermissionRequest"] as const;
export type HookEvent = (typeof HOOK_EVENTS)[number];

export function isHookEvent(value: unknown): value is HookEvent {
  return (HOOK_EVENTS as readonly unknown[]).includes(value);
}

const fields = {
  /** Claude Code's session UUID; shown in Slack and part of the idempotency key. */
  session_id: z.string().min(1).max(LIMITS.agentField),
  /** Working directory of the session; shown in Slack. */
  cwd: z.string().max(LIMITS.cwd).optional(),
  /** Correlates the events of one user prompt; absent before the first prompt. */
  prompt_id: z.string().max(LIMITS.agentField).optional(),
  /** Present when a subagent calls the tool. */
  agent_id: z.string().max(LIMITS.agentField).optional(),
  tool_name: z.string().min(1).max(LIMITS.toolName),
  tool_input: JsonObject,
  tool_use_id: z.string().min(1).max(LIMITS.toolUseId).optional(),
};

export const PreToolUseInput = z.looseObject({ hook_event_name: z.literal("PreToolUse"), ...fields });
export type PreToolUseInput = z.infer<typeof PreToolUseInput>;

export const PermissionRequestInput = z.looseObject({
  hook_event_name: z.literal("PermissionRequest"),
  ...fields,
  /** The "always allow" rule updates Claude Code would offer; kept verbatim. */
  permission_suggestions: z.array(PermissionUpdate).max(MAX_SUGGESTIONS).optional(),
});
export type PermissionRequestInput = z.infer<typeof PermissionRequestInput>;

export const ClaudeCodeHookInput = z.discriminatedUnion("hook_event_name", [PreToolUseInput, PermissionRequestInput]);
export type ClaudeCodeHookInput = z.infer<typeof ClaudeCodeHookInput>;

/** The hook JSON for PreToolUse: Claude Code acts on `permissionDecision`. */
export const PreToolUseOutput = z.looseObject({
  /** false only on q: Claude Code stops the turn. */
  continue: z.boolean().optional(),
  stopReason: z.string().optional(),
  hookSpecificOutput: z.looseObject({
    hookEventName: z.literal("PreToolUse"),
    permissionDecision: z.enum(["allow", "deny", "ask"]),
    /** The deny reason the model reads. */
    permissionDecisionReason: z.string().optional(),
  }),
});
export type PreToolUseOutput = z.infer<typeof PreToolUseOutput>;

/** The decision of a PermissionRequest hook: the SDK's PermissionResult, with `updatedInput` only when it was edited. */
export const PermissionRequestDecision = z.discriminatedUnion("behavior", [
  z.looseObject({
    behavior: z.literal("allow"),
    updatedInput: JsonObject.optional(),
    updatedPermissions: z.array(PermissionUpdate).optional(),
  }),
  z.looseObject({ behavior: z.literal("deny"), message: z.string().optional(), interrupt: z.boolean().optional() }),
]);
export type PermissionRequestDecision = z.infer<typeof PermissionRequestDecision>;

export const PermissionRequestOutput = z.looseObject({
  hookSpecificOutput: z.looseObject({ hookEventName: z.literal("PermissionRequest"), decision: PermissionRequestDecision }),
});
export type PermissionRequestOutput = z.infer<typeof PermissionRequestOutput>;

export type HookOutput = PreToolUseOutput | PermissionRequestOutput;

/** The output schema of each event: a reply that does not parse is not a decision Claude Code can act on. */
export const HookOutputOf = { PreToolUse: PreToolUseOutput, PermissionRequest: PermissionRequestOutput } as const;

/** y → allow; n → deny with the fixed n text; q → the same deny with the q text, and the turn stops. */
export function stepGateOutput(reply: StepReply): PreToolUseOutput {
  if (reply === "y") return { hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "allow" } };
  if (reply === "n") return denyOutput("PreToolUse", STEP_GATE_REJECTED);
  return stopOutput(STEP_GATE_STOPPED);
}

/** A deny that also stops the turn (`continue: false`), `reason` saying why: a person's q, or no answer under `onTimeout: halt`. */
export function stopOutput(reason: string): PreToolUseOutput {
  return { continue: false, stopReason: reason, ...denyOutput("PreToolUse", reason) };
}

/** A deny in the event's shape, `message` saying why. */
export function denyOutput(event: "PreToolUse", message: string): PreToolUseOutput;
export function denyOutput(event: HookEvent, message: string): HookOutput;
export function denyOutput(event: HookEvent, message: string): HookOutput {
  if (event === "PreToolUse") {
    return { hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: message } };
  }
  return permissionRequestOutput({ behavior: "deny", message });
}

export function permissionRequestOutput(decision: PermissionRequestDecision): PermissionRequestOutput {
  return { hookSpecificOutput: { hookEventName: "PermissionRequest", decision } };
}
