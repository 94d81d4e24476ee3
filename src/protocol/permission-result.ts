/**
 * A request's outcome as Claude's PermissionResult (`{behavior: "allow",
 * updatedInput}` / `{behavior: "deny", message}`), written once for every
 * agent side that hands one back: the client library's `canUseTool` and the
 * MCP `approve` tool (Claude Code's `--permission-prompt-tool`). Fail closed:
 * only a person's allow allows; an expired, cancelled or failed request, or
 * an answer of the wrong shape, is a deny that says why. A request that
 * expired under its route's `onTimeout: halt` carries a deny with
 * `interrupt`, which is kept.
 */
import { AskUserQuestionDecision, PermissionDecision } from "./decisions.js";
import type { RequestView } from "./request-view.js";
import { endedReason } from "./texts.js";

/** The tool name of Claude's clarifying questions: asked as an `ask_user_question` request. */
export const ASK_USER_QUESTION = "AskUserQuestion";

export type PermissionResult = { behavior: "allow"; updatedInput: Record<string, unknown>; updatedPermissions?: unknown[] } | PermissionDeny;
export type PermissionDeny = { behavior: "deny"; message: string; interrupt?: boolean };

/** A deny saying `message`. */
export function deny(message: string): PermissionDeny {
  return { behavior: "deny", message };
}

/** The PermissionResult of a `permission` request as the relay reported it. */
export function permissionResultOf(view: RequestView): PermissionResult {
  const decision = PermissionDecision.safeParse(view.decision);
  // An expired request's decision (onTimeout: halt) is honoured when it denies, never when it would allow.
  const halted = view.status === "expired" && decision.data?.behavior === "deny";
  if (view.status !== "answered" && !halted) return deny(endedReason(view));
  if (!decision.success) return deny("The approval relay's answer is not a permission decision, so nothing was approved.");
  const result = decision.data;
  if (result.behavior === "deny") return result.interrupt ? { behavior: "deny", message: result.message, interrupt: true } : deny(result.message);
  return result.updatedPermissions
    ? { behavior: "allow", updatedInput: result.updatedInput, updatedPermissions: result.updatedPermissions }
    : { behavior: "allow", updatedInput: result.updatedInput };
}

/**
 * The PermissionResult of an `ask_user_question` request made for
 * AskUserQuestion's `input`: an allow whose updatedInput is the input with the
 * person's `answers` (and free-text `response`), as Claude reads them.
 */
export function askUserQuestionResultOf(view: RequestView, input: Record<string, unknown>): PermissionResult {
  if (view.status !== "answered") return deny(endedReason(view));
  const decision = AskUserQuestionDecision.safeParse(view.decision);
  if (!decision.success) return deny("The approval relay's answer is not an answers object, so the questions went unanswered.");
  const { answers, response } = decision.data;
  return { behavior: "allow", updatedInput: { ...input, answers, ...(response ? { response } : {}) } };
}
