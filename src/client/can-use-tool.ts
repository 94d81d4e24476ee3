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
import { ASK_USER_QUESTION, askUserQuestionResultOf, permissionResultOf } from "../protocol/permission-result.js";
import { LIMITS, MAX_SUGGESTIONS } from "../protocol/request-body.js";
import type { RequestView } from "../protocol/request-view.js";
import { failureReason } from "./errors.js";
import { clip, commonFields, definedOnly, report, type AdapterOptions } from "./fields.js";
import type { Asker, RequestBody } from "./types.js";

export type { AdapterOptions };
export type CanUseToolOptions = AdapterOptions;

type CanUseToolContext = Parameters<CanUseTool>[2];

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
  const result = permissionResultOf(view);
  // The relay hands back, verbatim, suggestions this SDK gave it.
  return result as PermissionResult & { updatedPermissions?: PermissionUpdate[] };
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
  return askUserQuestionResultOf(view, input) as PermissionResult;
}
