/**
 * The hook JSON Claude Code reads back (docs/architecture.md §3), from how the request
 * ended. Fail closed: only a person's allow (or y) lets the tool run;
 * expired, cancelled, failed or unusable outcomes deny with a message that
 * says why, which the model (PreToolUse) or the transcript (PermissionRequest)
 * shows. A request that expired under its route's `onTimeout: halt` carries
 * a decision that also stops the agent (../timeout.ts): a step gate's q
 * becomes the stop (`continue: false`), a permission's deny keeps its
 * `interrupt`; whatever else an expired request carries is never an allow.
 * The shapes and builders are wire contract (src/protocol/claude-code-hook.ts).
 */
import { isDeepStrictEqual } from "node:util";
import { denyOutput, permissionRequestOutput, stepGateOutput, stopOutput, type HookEvent, type HookOutput } from "../../protocol/claude-code-hook.js";
import { PermissionDecision, StepGateDecision } from "../../protocol/decisions.js";
import { haltedOnTimeoutText, notAnsweredText } from "../../protocol/texts.js";
import type { RequestRecord } from "../model.js";

export { denyOutput, type HookOutput };

/** What the agent is told happened instead of an answer. */
const TOOL_CALL_DENIED = "so the tool call was denied";

const UNUSABLE_ANSWER = "The relay got an answer it cannot apply to this hook, so the tool call was denied.";

/** The hook JSON for a request as it is once the relay stops waiting (ended, or still pending at the deadline). */
export function hookOutput(event: HookEvent, record: RequestRecord): HookOutput {
  if (record.status === "expired" && record.decision) return haltedOutput(event, record);
  if (record.status !== "answered") return denyOutput(event, notAnsweredMessage(record));
  if (event === "PreToolUse") {
    const parsed = StepGateDecision.safeParse(record.decision);
    return parsed.success ? stepGateOutput(parsed.data.reply) : denyOutput(event, UNUSABLE_ANSWER);
  }
  const parsed = PermissionDecision.safeParse(record.decision);
  if (!parsed.success) return denyOutput(event, UNUSABLE_ANSWER);
  const decision = parsed.data;
  if (decision.behavior === "deny") {
    return permissionRequestOutput({ behavior: "deny", message: decision.message, ...(decision.interrupt ? { interrupt: true } : {}) });
  }
  const edited = "input" in record.body && !isDeepStrictEqual(decision.updatedInput, record.body.input);
  return permissionRequestOutput({
    behavior: "allow",
    ...(edited ? { updatedInput: decision.updatedInput } : {}),
    ...(decision.updatedPermissions ? { updatedPermissions: decision.updatedPermissions } : {}),
  });
}

/** An expired request's decision (onTimeout: halt): the stop, or the deny with its interrupt; anything else is the plain deny. */
function haltedOutput(event: HookEvent, record: RequestRecord): HookOutput {
  if (event === "PreToolUse" && StepGateDecision.safeParse(record.decision).data?.reply === "q") {
    return stopOutput(haltedOnTimeoutText((record.expiresAt - record.createdAt) / 1000));
  }
  const permission = PermissionDecision.safeParse(record.decision);
  if (event === "PermissionRequest" && permission.success && permission.data.behavior === "deny") {
    return permissionRequestOutput({ behavior: "deny", message: permission.data.message, ...(permission.data.interrupt ? { interrupt: true } : {}) });
  }
  return denyOutput(event, notAnsweredMessage(record));
}

/** Why a request that was not answered denies the tool call. */
export function notAnsweredMessage(record: RequestRecord): string {
  switch (record.status) {
    case "cancelled":
      return notAnsweredText({ status: "cancelled", reason: record.error ?? (record.cancelledBy ? `by ${record.cancelledBy}` : undefined) }, TOOL_CALL_DENIED);
    case "failed":
      return notAnsweredText({ status: "failed", error: record.error ?? "unknown error" }, TOOL_CALL_DENIED);
    default:
      return notAnsweredText({ status: "expired", seconds: (record.expiresAt - record.createdAt) / 1000 }, TOOL_CALL_DENIED);
  }
}
