/**
 * The hook input Claude Code POSTs to an `http` hook, parsed at the trust
 * boundary with the protocol's schema (src/protocol/claude-code-hook.ts),
 * with the relay's 400 (relay_invalid_request) naming the offending fields.
 */
import { ClaudeCodeHookInput, HOOK_EVENTS, isHookEvent } from "../../protocol/claude-code-hook.js";
import { depthProblem } from "../../protocol/json-depth.js";
import { fieldProblems, invalidRequest } from "../errors.js";

export type { ClaudeCodeHookInput, HookEvent } from "../../protocol/claude-code-hook.js";

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
  const deep = depthProblem(value);
  if (deep) throw invalidRequest([deep]);
  const result = ClaudeCodeHookInput.safeParse(value);
  if (result.success) return result.data;
  throw invalidRequest(fieldProblems(result.error.issues));
}
