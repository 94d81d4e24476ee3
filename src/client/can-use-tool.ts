/**
 * The Claude Agent SDK's `canUseTool` callback, answered in Slack: any tool
 * becomes a `permission` request and comes back as the SDK's
 * PermissionResult; `AskUserQuestion` becomes an `ask_user_question` request
 * whose answers go back in `updatedInput`. It fails closed: anything but a
 * person's allow (expiry, cancel, an unreachable relay, a bug) is a deny that
 * says why, and no exception ever escapes. A request that expired under its
 * route's `onTimeout: halt` carries a deny with `interrupt`: the agent stops.
 */
import type { CanUseTool, PermissionResult, PermissionUpdate } from "@anthropic-ai/claude-agent-sdk";
import { AskUserQuestionDecision, PermissionDecision } from "../protocol/decisions.js";
import { LIMITS, MAX_SUGGESTIONS } from "../protocol/request-body.js";
import type { RequestView } from "../protocol/request-view.js";
import { endedReason, failureReason } from "./errors.js";
import { clip, commonFields, definedOnly, report, type AdapterOptions } from "./fields.js";
import type { Asker, RequestBody } from "./types.js";

export type { AdapterOptions };
export type CanUseToolOptions = AdapterOptions;

type CanUseToolContext = Parameters<CanUseTool>[2];

export const ASK_USER_QUESTION = "AskUserQuestion";

export function createCanUseTool(relay: Asker, options: CanUseToolOptions = {}): CanUseTool {
  return async (toolName, input, context) => {
    try {
      if (toolName === ASK_USER_QUESTION) return await askUserQuestion(relay, input, context, options);
      const view = await relay.ask(permissionBody(toolName, input, context, options), { signal: context.signal });
      return permissionResult(view);
    } catch (error) {
      report(options, error);
      return { behavior: "deny", message: failureReason(error) };
    }
  };
}

function permissionBody(toolName: string, input: Record<string, unknown>, context: CanUseToolContext, options: AdapterOptions): RequestBody {
  const extra = [
    context.agentID ? `Subagent: ${context.agentID}` : undefined,
    context.mcpServer ? `MCP server: ${context.mcpServer.name} (${context.mcpServer.source})` : undefined,
  ];
  return {
    kind: "permission",
    ...commonFields(options, extra),
    toolName,
    input,
    ...definedOnly({
      suggestions: context.suggestions?.length ? context.suggestions.slice(0, MAX_SUGGESTIONS) : undefined,
      title: clip(context.title, LIMITS.title),
      displayName: clip(context.displayName, LIMITS.displayName),
      description: clip(context.description, LIMITS.description),
      decisionReason: clip(context.decisionReason, LIMITS.decisionReason),
      blockedPath: clip(context.blockedPath, LIMITS.blockedPath),
      toolUseId: clip(context.toolUseID, LIMITS.toolUseId),
      defaultToNo: context.defaultToNo,
      suppressAlwaysAllowRule: context.suppressAlwaysAllowRule,
    }),
  };
}

function permissionResult(view: RequestView): PermissionResult {
  const decision = PermissionDecision.safeParse(view.decision);
  // An expired request's decision (onTimeout: halt) is honoured when it denies, never when it would allow.
  const halted = view.status === "expired" && decision.data?.behavior === "deny";
  if (view.status !== "answered" && !halted) return { behavior: "deny", message: endedReason(view) };
  if (!decision.success) return { behavior: "deny", message: "The approval relay's answer is not a permission decision, so nothing was approved." };
  const result = decision.data;
  if (result.behavior === "deny")
    return result.interrupt ? { behavior: "deny", message: result.message, interrupt: true } : { behavior: "deny", message: result.message };
  // The relay hands back, verbatim, suggestions this SDK gave it.
  const updatedPermissions = result.updatedPermissions as PermissionUpdate[] | undefined;
  return updatedPermissions
    ? { behavior: "allow", updatedInput: result.updatedInput, updatedPermissions }
    : { behavior: "allow", updatedInput: result.updatedInput };
}

async function askUserQuestion(relay: Asker, input: Record<string, unknown>, context: CanUseToolContext, options: AdapterOptions): Promise<PermissionResult> {
  const questions = input.questions;
  if (!Array.isArray(questions)) return { behavior: "deny", message: "AskUserQuestion was called without a questions list." };
  const body = {
    kind: "ask_user_question",
    ...commonFields(options, [context.agentID ? `Subagent: ${context.agentID}` : undefined]),
    // The relay validates the questions and names any faulty field.
    questions,
  } as RequestBody;
  const view = await relay.ask(body, { signal: context.signal });
  if (view.status !== "answered") return { behavior: "deny", message: endedReason(view) };
  const decision = AskUserQuestionDecision.safeParse(view.decision);
  if (!decision.success) return { behavior: "deny", message: "The approval relay's answer is not an answers object, so the questions went unanswered." };
  const { answers, response } = decision.data;
  return { behavior: "allow", updatedInput: { ...input, questions, answers, ...(response ? { response } : {}) } };
}
