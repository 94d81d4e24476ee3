/**
 * What a Claude Code hook call becomes in the relay: PermissionRequest → a
 * `permission` request, PreToolUse → a `step_gate` request (docs/architecture.md §3), and
 * the idempotency key that makes a retried hook call join the request the
 * first call made instead of posting twice.
 */
import { createHash } from "node:crypto";
import type { CreateRequestBody, Labels, RequestedBy } from "../../protocol/request-body.js";
import type { ClaudeCodeHookInput } from "./input.js";

/** How the agent is named in Slack. */
export const CLAUDE_CODE_AGENT = "Claude Code";

export interface HookRequestOptions {
  /** The request's timeout: the reply deadline (see deadline.ts). */
  timeoutSeconds: number;
  channel?: string;
  labels?: Labels;
  requestedBy?: RequestedBy;
}

/** The request body for a hook call; it still goes through parseCreateBody. */
export function hookRequestBody(input: ClaudeCodeHookInput, options: HookRequestOptions): CreateRequestBody {
  const agent = { name: CLAUDE_CODE_AGENT, sessionId: input.session_id, ...(input.cwd === undefined ? {} : { cwd: input.cwd }) };
  const common = {
    toolName: input.tool_name,
    input: input.tool_input,
    agent,
    timeoutSeconds: options.timeoutSeconds,
    // Claude Code gives up at the hook's own timeout, whatever the deadline: no "+30 min".
    extendable: false,
    ...(input.tool_use_id === undefined ? {} : { toolUseId: input.tool_use_id }),
    ...(options.channel === undefined ? {} : { channel: options.channel }),
    ...(options.labels === undefined ? {} : { labels: options.labels }),
    ...(options.requestedBy === undefined ? {} : { requestedBy: options.requestedBy }),
  };
  if (input.hook_event_name === "PreToolUse") return { kind: "step_gate", ...common };
  return {
    kind: "permission",
    ...common,
    ...(input.permission_suggestions === undefined ? {} : { suggestions: input.permission_suggestions }),
  };
}

export interface HookRequestKey {
  /** Idempotency key of the first request for this hook call; later ones add "#2", "#3"… */
  key: string;
  /**
   * Whether an answered request found under the key is this very tool call's
   * answer (true when Claude Code sent a tool_use_id). Without one, an
   * identical call made later would find the earlier answer, so only a
   * pending request is joined and an ended one is asked again.
   */
  answerBelongsToCall: boolean;
}

const SAFE = /^[\w.-]{1,200}$/;

/**
 * `claude-code:<event>:<session_id>:<tool_use_id>` (hashed when either part
 * has characters a key should not carry). Without a tool_use_id, a hash of
 * what identifies the call: session, prompt, subagent, tool and input.
 */
export function hookRequestKey(input: ClaudeCodeHookInput): HookRequestKey {
  const prefix = `claude-code:${input.hook_event_name}`;
  if (input.tool_use_id !== undefined) {
    const parts = [input.session_id, input.tool_use_id];
    const id = parts.every((part) => SAFE.test(part)) ? parts.join(":") : digest(parts);
    return { key: `${prefix}:${id}`, answerBelongsToCall: true };
  }
  const call = [input.session_id, input.prompt_id ?? "", input.agent_id ?? "", input.tool_name, JSON.stringify(input.tool_input)];
  return { key: `${prefix}:input:${digest(call)}`, answerBelongsToCall: false };
}

/** The key of the `attempt`-th request (1-based) for one hook call. */
export function keyForAttempt(key: string, attempt: number): string {
  return attempt === 1 ? key : `${key}#${attempt}`;
}

function digest(parts: string[]): string {
  return createHash("sha256").update(JSON.stringify(parts)).digest("hex");
}
