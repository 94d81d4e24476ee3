/**
 * The hook JSON Claude Code reads back (DESIGN §3), from how the request
 * ended. Fail closed: only a person's allow (or y) lets the tool run;
 * expired, cancelled, failed or unusable outcomes deny with a message that
 * says why, which the model (PreToolUse) or the transcript (PermissionRequest)
 * shows.
 */
import { isDeepStrictEqual } from "node:util";
import { PermissionDecision, STEP_GATE_REJECTED, STEP_GATE_STOPPED, StepGateDecision } from "../requests/decisions.js";
import type { RequestRecord } from "../requests/model.js";
import type { JsonObject, PermissionUpdate } from "../requests/schemas.js";
import type { HookEvent } from "./input.js";

export interface PreToolUseOutput {
  /** false only on q: Claude Code stops the turn. */
  continue?: false;
  stopReason?: string;
  hookSpecificOutput: {
    hookEventName: "PreToolUse";
    permissionDecision: "allow" | "deny";
    /** The deny reason the model reads. */
    permissionDecisionReason?: string;
  };
}

export type PermissionRequestDecision =
  | { behavior: "allow"; updatedInput?: JsonObject; updatedPermissions?: PermissionUpdate[] }
  | { behavior: "deny"; message: string; interrupt?: true };

export interface PermissionRequestOutput {
  hookSpecificOutput: { hookEventName: "PermissionRequest"; decision: PermissionRequestDecision };
}

export type HookOutput = PreToolUseOutput | PermissionRequestOutput;

/** The hook JSON for a request as it is once the relay stops waiting (ended, or still pending at the deadline). */
export function hookOutput(event: HookEvent, record: RequestRecord): HookOutput {
  if (record.status !== "answered") return denyOutput(event, notAnsweredMessage(record));
  if (event === "PreToolUse") {
    const parsed = StepGateDecision.safeParse(record.decision);
    return parsed.success ? stepGateOutput(parsed.data.reply) : denyOutput(event, UNUSABLE_ANSWER);
  }
  const parsed = PermissionDecision.safeParse(record.decision);
  if (!parsed.success) return denyOutput(event, UNUSABLE_ANSWER);
  const decision = parsed.data;
  if (decision.behavior === "deny") {
    return permissionOutput({ behavior: "deny", message: decision.message, ...(decision.interrupt ? { interrupt: true } : {}) });
  }
  const edited = "input" in record.body && !isDeepStrictEqual(decision.updatedInput, record.body.input);
  return permissionOutput({
    behavior: "allow",
    ...(edited ? { updatedInput: decision.updatedInput } : {}),
    ...(decision.updatedPermissions ? { updatedPermissions: decision.updatedPermissions } : {}),
  });
}

/** y → allow; n → deny with the fixed n text; q → the same deny with the q text, and the turn stops. */
export function stepGateOutput(reply: StepGateDecision["reply"]): PreToolUseOutput {
  if (reply === "y") return { hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "allow" } };
  if (reply === "n") return denyOutput("PreToolUse", STEP_GATE_REJECTED);
  return { continue: false, stopReason: STEP_GATE_STOPPED, ...denyOutput("PreToolUse", STEP_GATE_STOPPED) };
}

export function denyOutput(event: "PreToolUse", message: string): PreToolUseOutput;
export function denyOutput(event: HookEvent, message: string): HookOutput;
export function denyOutput(event: HookEvent, message: string): HookOutput {
  if (event === "PreToolUse") {
    return { hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: message } };
  }
  return permissionOutput({ behavior: "deny", message });
}

const UNUSABLE_ANSWER = "The relay got an answer it cannot apply to this hook, so the tool call was denied.";

/** Why a request that was not answered denies the tool call. */
export function notAnsweredMessage(record: RequestRecord): string {
  switch (record.status) {
    case "cancelled": {
      const why = record.error ?? (record.cancelledBy ? `by ${record.cancelledBy}` : undefined);
      return `The approval request was cancelled${why ? ` (${why})` : ""}, so the tool call was denied.`;
    }
    case "failed":
      return `The approval request could not be posted to Slack (${record.error ?? "unknown error"}), so the tool call was denied.`;
    default:
      return `No one answered the approval request in Slack within ${formatDuration((record.expiresAt - record.createdAt) / 1000)}, so the tool call was denied.`;
  }
}

/** "1 second", "45 seconds", "9 minutes 55 seconds", "1 hour 30 minutes". */
export function formatDuration(seconds: number): string {
  const total = Math.max(0, Math.round(seconds));
  const units: Array<[number, string]> = [
    [Math.floor(total / 3600), "hour"],
    [Math.floor((total % 3600) / 60), "minute"],
    [total % 60, "second"],
  ];
  const parts = units.filter(([n]) => n > 0).map(([n, unit]) => `${n} ${unit}${n === 1 ? "" : "s"}`);
  return parts.length > 0 ? parts.join(" ") : "0 seconds";
}

function permissionOutput(decision: PermissionRequestDecision): PermissionRequestOutput {
  return { hookSpecificOutput: { hookEventName: "PermissionRequest", decision } };
}
