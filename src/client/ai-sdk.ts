/**
 * `slack-approval-relay/ai-sdk`: the Vercel AI SDK's tool approvals,
 * answered in Slack, in both of the SDK's ways:
 * - blocking: `createToolApproval(relay)` is a function for the
 *   `toolApproval` option of generateText / streamText / ToolLoopAgent; it
 *   holds the tool call until a person answers and returns approved or
 *   denied with the reason;
 * - durable: `answerApprovalRequests(content, relay)` takes the
 *   `tool-approval-request` parts a run stopped on (`result.content`, or the
 *   assistant messages of `result.response.messages`) and returns the
 *   `role: "tool"` message with a `tool-approval-response` for each, to append
 *   to the messages of the next call.
 *
 * The SDK cannot run a tool with input a person changed, so an edit made in
 * Slack is a denial that says so and quotes the edited input; anything but a
 * person's approval (a deny, no answer in time, a cancel, an unreachable
 * relay) is a denial with the reason, which the model reads.
 */
import type { ToolApprovalResponse, ToolApprovalStatus, ToolModelMessage } from "ai";
import type { Asker } from "./types.js";
import { askToolCall, editRefusedMessage, idempotencyKeyOf, isRecord, type ToolApprovalOptions, type ToolVerdict } from "./tool-call.js";

const CANNOT_EDIT = "the AI SDK cannot run a tool with changed input";

/** A tool call as the SDK hands it to `toolApproval` and puts it in approval requests. */
export interface AiSdkToolCall {
  toolCallId: string;
  toolName: string;
  input: unknown;
}

export interface CreateToolApprovalOptions extends ToolApprovalOptions {
  /** Whether this call needs a person (default: every call does); false → "not-applicable", it runs. */
  needsApproval?: (toolCall: AiSdkToolCall) => boolean | Promise<boolean>;
  /** The request's idempotency key for a call. Default: `ai-sdk:<toolCallId>`; return undefined for a fresh request each time. */
  idempotencyKey?: (toolCall: AiSdkToolCall) => string | undefined;
}

export interface AnswerApprovalRequestsOptions extends ToolApprovalOptions {
  /**
   * The request's idempotency key for an approval request. Default:
   * `ai-sdk:<approvalId>`, so answering the same content again (a retried
   * handler) joins the requests instead of posting twice.
   */
  idempotencyKey?: (approvalId: string, toolCall: AiSdkToolCall) => string | undefined;
}

/**
 * A `toolApproval` function that asks a person in Slack about each tool call
 * and waits for the answer: `{type: "approved"}` or `{type: "denied", reason}`.
 */
export function createToolApproval(relay: Asker, options: CreateToolApprovalOptions = {}): (call: { toolCall: AiSdkToolCall }) => Promise<ToolApprovalStatus> {
  return async ({ toolCall }) => {
    if (options.needsApproval && !(await options.needsApproval(toolCall))) return { type: "not-applicable" };
    const key = options.idempotencyKey ? options.idempotencyKey(toolCall) : idempotencyKeyOf("ai-sdk", toolCall.toolCallId);
    const verdict = await ask(relay, toolCall, key, options);
    return verdict.type === "approve" ? { type: "approved" } : { type: "denied", reason: denialReason(toolCall, verdict) };
  };
}

/** What `answerApprovalRequests` reads: content parts, or whole messages (their array contents are read). */
export type ApprovalContent = ReadonlyArray<unknown>;

/**
 * Asks a person about every `tool-approval-request` in `content` (all at
 * once) and returns the tool message that answers them. Requests the SDK
 * decided itself (`isAutomatic`) and ones `content` already answers are left
 * out. Never throws for a relay failure: the call is denied with the reason.
 */
export async function answerApprovalRequests(
  content: ApprovalContent,
  relay: Asker,
  options: AnswerApprovalRequestsOptions = {},
): Promise<ToolModelMessage & { content: ToolApprovalResponse[] }> {
  const parts = content.flatMap((item) => (isRecord(item) && "role" in item ? (Array.isArray(item.content) ? (item.content as unknown[]) : []) : [item]));
  const toolCalls = new Map<string, AiSdkToolCall>();
  const answered = new Set<string>();
  for (const part of parts) {
    if (!isRecord(part)) continue;
    if (part.type === "tool-call" && isToolCall(part)) toolCalls.set(part.toolCallId, part);
    if (part.type === "tool-approval-response" && typeof part.approvalId === "string") answered.add(part.approvalId);
  }
  const requests = parts.filter(isRecord).flatMap((part) => {
    if (part.type !== "tool-approval-request" || typeof part.approvalId !== "string" || part.isAutomatic === true || answered.has(part.approvalId)) return [];
    const toolCall = isToolCall(part.toolCall) ? part.toolCall : typeof part.toolCallId === "string" ? toolCalls.get(part.toolCallId) : undefined;
    return [{ approvalId: part.approvalId, toolCall }];
  });
  const responses = await Promise.all(
    requests.map(async ({ approvalId, toolCall }): Promise<ToolApprovalResponse> => {
      if (!toolCall)
        return {
          type: "tool-approval-response",
          approvalId,
          approved: false,
          reason: "The tool call this approval request is for was not found, so nothing was approved.",
        };
      const key = options.idempotencyKey ? options.idempotencyKey(approvalId, toolCall) : idempotencyKeyOf("ai-sdk", approvalId);
      const verdict = await ask(relay, toolCall, key, options);
      return verdict.type === "approve"
        ? { type: "tool-approval-response", approvalId, approved: true }
        : { type: "tool-approval-response", approvalId, approved: false, reason: denialReason(toolCall, verdict) };
    }),
  );
  return { role: "tool", content: responses };
}

function ask(relay: Asker, toolCall: AiSdkToolCall, idempotencyKey: string | undefined, options: ToolApprovalOptions): Promise<ToolVerdict> {
  const input = isRecord(toolCall.input) ? toolCall.input : { input: toolCall.input };
  return askToolCall(relay, { toolName: toolCall.toolName, input, toolUseId: toolCall.toolCallId, idempotencyKey }, options);
}

function denialReason(toolCall: AiSdkToolCall, verdict: Exclude<ToolVerdict, { type: "approve" }>): string {
  return verdict.type === "edit" ? editRefusedMessage(toolCall.toolName, verdict.input, CANNOT_EDIT) : verdict.message;
}

function isToolCall(value: unknown): value is AiSdkToolCall {
  return isRecord(value) && typeof value.toolCallId === "string" && typeof value.toolName === "string";
}
