/**
 * The hook input Claude Code POSTs to an `http` hook (or pipes to a `command`
 * hook), parsed at the trust boundary. Loose: Claude Code sends more fields
 * than the relay uses (transcript_path, permission_mode, effort, mcp_server…)
 * and adds new ones over time, so unknown fields pass. Strict on the fields
 * the relay uses, with the same limits as the request they become, so a hook
 * input that parses always makes a valid request. Checked against Claude Code
 * 2.1.332: PreToolUse carries tool_use_id; PermissionRequest does not (it is
 * optional here for both) and carries permission_suggestions instead.
 */
import { z } from "zod";
import { fieldNestedDeeperThan, MAX_DEPTH } from "../http/parse.js";
import { fieldProblems, invalidRequest } from "../requests/errors.js";
import { JsonObject, PermissionUpdate } from "../requests/schemas.js";

/** The hook events the relay answers; any other is a 400. */
export const HOOK_EVENTS = ["PreToolUse", "PermissionRequest"] as const;
export type HookEvent = (typeof HOOK_EVENTS)[number];

const fields = {
  /** Claude Code's session UUID; shown in Slack and part of the idempotency key. */
  session_id: z.string().min(1).max(200),
  /** Working directory of the session; shown in Slack. */
  cwd: z.string().max(2000).optional(),
  /** Correlates the events of one user prompt; absent before the first prompt. */
  prompt_id: z.string().max(200).optional(),
  /** Present when a subagent calls the tool. */
  agent_id: z.string().max(200).optional(),
  tool_name: z.string().min(1).max(500),
  tool_input: JsonObject,
  tool_use_id: z.string().min(1).max(500).optional(),
};

export const PreToolUseInput = z.looseObject({ hook_event_name: z.literal("PreToolUse"), ...fields });
export type PreToolUseInput = z.infer<typeof PreToolUseInput>;

export const PermissionRequestInput = z.looseObject({
  hook_event_name: z.literal("PermissionRequest"),
  ...fields,
  /** The "always allow" rule updates Claude Code would offer; kept verbatim. */
  permission_suggestions: z.array(PermissionUpdate).max(50).optional(),
});
export type PermissionRequestInput = z.infer<typeof PermissionRequestInput>;

export const ClaudeCodeHookInput = z.discriminatedUnion("hook_event_name", [PreToolUseInput, PermissionRequestInput]);
export type ClaudeCodeHookInput = z.infer<typeof ClaudeCodeHookInput>;

export function isHookEvent(value: unknown): value is HookEvent {
  return (HOOK_EVENTS as readonly unknown[]).includes(value);
}

/**
 * The hook input, or a 400 (relay_invalid_request) naming the offending
 * fields. The event is checked first, so the input of another hook (Stop,
 * PostToolUse…) is refused for its hook_event_name alone.
 */
export function parseHookInput(value: unknown): ClaudeCodeHookInput {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw invalidRequest([{ path: "(body)", message: "the body must be Claude Code's hook input, a JSON object" }]);
  }
  const event: unknown = (value as Record<string, unknown>).hook_event_name;
  if (!isHookEvent(event)) {
    const got = typeof event === "string" ? `"${event.slice(0, 100)}" is not answered here` : "is required";
    throw invalidRequest([{ path: "hook_event_name", message: `${got}; the relay answers ${HOOK_EVENTS.join(" and ")} hooks only` }]);
  }
  const deep = fieldNestedDeeperThan(value, MAX_DEPTH);
  if (deep !== undefined) throw invalidRequest([{ path: deep, message: `nests deeper than ${MAX_DEPTH} levels` }]);
  const result = ClaudeCodeHookInput.safeParse(value);
  if (result.success) return result.data;
  throw invalidRequest(fieldProblems(result.error.issues));
}
