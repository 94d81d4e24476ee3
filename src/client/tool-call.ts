/**
 * One framework tool call asked in Slack as a `permission` request, and the
 * person's answer as a verdict every framework adapter maps the same way:
 * approve (input unchanged), edit (the person changed the input) or reject
 * (a deny, no answer in time, a cancel, or any failure: fail closed). The
 * adapters for the OpenAI Agents SDK, the AI SDK and LangGraph
 * (openai-agents.ts, ai-sdk.ts, langgraph.ts) turn it into their
 * framework's own approval; a framework that cannot run a tool with changed
 * input turns an edit into a reject (`editRefusedMessage`), never into an
 * approval of the original input.
 */
import { createHash } from "node:crypto";
import { isDeepStrictEqual } from "node:util";
import { PermissionDecision } from "../protocol/decisions.js";
import { LIMITS } from "../protocol/request-body.js";
import type { RequestView } from "../protocol/request-view.js";
import { endedReason, failureReason } from "./errors.js";
import { clip, commonFields, definedOnly, report, type AdapterOptions } from "./fields.js";
import type { Asker, PermissionRequestBody } from "./types.js";

/** The options every framework adapter takes. */
export interface ToolApprovalOptions extends AdapterOptions {
  /** Stops waiting: the request is cancelled (its Slack message says so) and the call is rejected. */
  signal?: AbortSignal;
}

export interface ToolCall {
  toolName: string;
  input: Record<string, unknown>;
  /** The framework's id of the call, shown with the request. */
  toolUseId?: string | undefined;
  /** Why the framework asks, shown in Slack. */
  description?: string | undefined;
  /** The same key from the same token joins the same request: a re-run never posts twice. */
  idempotencyKey?: string | undefined;
}

export type ToolVerdict = { type: "approve" } | { type: "edit"; input: Record<string, unknown> } | { type: "reject"; message: string };

/** Asks a person in Slack about one tool call; never throws. */
export async function askToolCall(relay: Asker, call: ToolCall, options: ToolApprovalOptions): Promise<ToolVerdict> {
  try {
    const view = await relay.ask(permissionBody(call, options), options.signal ? { signal: options.signal } : {});
    return verdictOf(view, call.input);
  } catch (error) {
    report(options, error);
    return { type: "reject", message: failureReason(error) };
  }
}

function permissionBody(call: ToolCall, options: AdapterOptions): PermissionRequestBody {
  return {
    kind: "permission",
    ...commonFields(options),
    toolName: clip(call.toolName, LIMITS.toolName) ?? call.toolName,
    input: call.input,
    ...definedOnly({
      toolUseId: clip(call.toolUseId, LIMITS.toolUseId),
      description: clip(call.description, LIMITS.description),
      idempotencyKey: call.idempotencyKey,
    }),
  };
}

function verdictOf(view: RequestView, input: Record<string, unknown>): ToolVerdict {
  const decision = PermissionDecision.safeParse(view.decision);
  // An expired request's deny (a route's onTimeout: halt) carries the relay's own reason.
  if (view.status === "expired" && decision.data?.behavior === "deny") return { type: "reject", message: decision.data.message };
  if (view.status !== "answered") return { type: "reject", message: endedReason(view) };
  if (!decision.success) return { type: "reject", message: "The approval relay's answer is not a permission decision, so nothing was approved." };
  if (decision.data.behavior === "deny") return { type: "reject", message: decision.data.message };
  // The input travelled as JSON: compare it as the relay saw it.
  const sent = JSON.parse(JSON.stringify(input)) as unknown;
  return isDeepStrictEqual(sent, decision.data.updatedInput) ? { type: "approve" } : { type: "edit", input: decision.data.updatedInput };
}

/** Longest edited input quoted back to the model in a refusal. */
const MAX_QUOTED_INPUT = 2000;

/**
 * The reject message when the person edited the input and it cannot be
 * carried (`why`, e.g. "the AI SDK cannot run a tool with changed input"):
 * says so, and quotes the edited input so the model can call the tool again
 * with it.
 */
export function editRefusedMessage(toolName: string, edited: Record<string, unknown>, why: string): string {
  const quoted = clip(JSON.stringify(edited), MAX_QUOTED_INPUT);
  return `The person edited the input of ${toolName} in Slack, but ${why}, so the call was not run. The edited input was: ${quoted}`;
}

/**
 * An idempotency key made of `parts` (framework, thread, call id, …), or its
 * SHA-256 when it would exceed the relay's limit: a long thread id still
 * makes a key, and two different ids never share one.
 */
export function idempotencyKeyOf(...parts: string[]): string {
  const key = parts.join(":");
  return key.length <= LIMITS.idempotencyKey ? key : `${parts[0]}:sha256:${createHash("sha256").update(key).digest("hex")}`;
}

/** A plain object (what a tool's input must be to be asked as a permission request). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
