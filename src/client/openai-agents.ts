/**
 * `slack-approval-relay/openai-agents`: the OpenAI Agents SDK's tool
 * approvals (`needsApproval`, `result.interruptions`), answered in Slack.
 * `approveInterruptions` asks about each interruption and approves or rejects
 * it on the run's state, ready to resume (`run(agent, state)`, or
 * `state.toString()` to resume elsewhere); `runWithApprovals` runs an agent
 * and answers interruptions until the run finishes.
 *
 * The SDK can approve a call only with its original arguments, so an edit
 * made in Slack becomes a rejection that says so and quotes the edited input
 * (the model may call the tool again with it). Anything but a person's
 * approval (a deny, no answer in time, a cancel, an unreachable relay) is a
 * rejection whose message the model reads.
 */
import { run, type Agent, type AgentInputItem, type NonStreamRunOptions, type RunResult, type RunState, type RunToolApprovalItem } from "@openai/agents";
import type { Asker } from "./types.js";
import { askToolCall, editRefusedMessage, idempotencyKeyOf, isRecord, type ToolApprovalOptions, type ToolVerdict } from "./tool-call.js";

const CANNOT_EDIT = "the OpenAI Agents SDK cannot run a tool with changed input";

/** Any agent, bounded as the SDK's own `run` bounds it (Agent is invariant in its type parameters). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the SDK's own bound for run()
type AnyAgent = Agent<any, any>;

export interface OpenAIAgentsApprovalOptions extends ToolApprovalOptions {
  /**
   * The request's idempotency key for an interruption: asking about the same
   * call again (a resumed process, a retried handler) joins the request
   * instead of posting twice. Default: `openai-agents:<callId>`; return
   * undefined for a fresh request each time.
   */
  idempotencyKey?: (item: RunToolApprovalItem) => string | undefined;
}

export interface RunWithApprovalsOptions<TContext, TAgent extends AnyAgent> extends OpenAIAgentsApprovalOptions {
  /** Passed to every `run` (context, maxTurns, signal, …). */
  runOptions?: Omit<NonStreamRunOptions<TContext, TAgent>, "stream">;
}

/** What `run` returns, as far as approvals need it (a RunResult, or a StreamedRunResult once it completed). */
export interface Interrupted {
  readonly interruptions: RunToolApprovalItem[];
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- any run's state: its context and agent types are the caller's
  readonly state: RunState<any, any>;
}

/**
 * Asks about every interruption of `result` in Slack (all at once) and
 * approves or rejects each on `result.state`; returns that state, to resume
 * with `run(agent, state)`. Never throws for a relay failure: the call is
 * rejected with the reason.
 */
export async function approveInterruptions<R extends Interrupted>(result: R, relay: Asker, options: OpenAIAgentsApprovalOptions = {}): Promise<R["state"]> {
  const { state } = result;
  const verdicts = await Promise.all(result.interruptions.map((item) => askAbout(item, relay, options)));
  result.interruptions.forEach((item, index) => {
    const verdict = verdicts[index]!;
    if (verdict.type === "approve") state.approve(item);
    else state.reject(item, { message: rejectMessage(item, verdict) });
  });
  return state;
}

/**
 * Runs `agent` on `input`, answers every interruption in Slack, and resumes
 * until the run finishes; returns the final result.
 */
export async function runWithApprovals<TContext, TAgent extends AnyAgent>(
  agent: TAgent,
  input: string | AgentInputItem[] | RunState<TContext, TAgent>,
  relay: Asker,
  options: RunWithApprovalsOptions<TContext, TAgent> = {},
): Promise<RunResult<TContext, TAgent>> {
  const runOptions = { ...options.runOptions, stream: false } as NonStreamRunOptions<TContext, TAgent>;
  let result = await run(agent, input, runOptions);
  while (result.interruptions.length > 0) {
    const state = await approveInterruptions(result, relay, options);
    result = await run(agent, state, runOptions);
  }
  return result;
}

function askAbout(item: RunToolApprovalItem, relay: Asker, options: OpenAIAgentsApprovalOptions): Promise<ToolVerdict> {
  const callId = callIdOf(item);
  const defaultKey = callId === undefined ? undefined : idempotencyKeyOf("openai-agents", callId);
  return askToolCall(
    relay,
    {
      toolName: toolNameOf(item),
      input: inputOf(item),
      toolUseId: callId,
      idempotencyKey: options.idempotencyKey ? options.idempotencyKey(item) : defaultKey,
    },
    options,
  );
}

function rejectMessage(item: RunToolApprovalItem, verdict: Exclude<ToolVerdict, { type: "approve" }>): string {
  return verdict.type === "edit" ? editRefusedMessage(toolNameOf(item), verdict.input, CANNOT_EDIT) : verdict.message;
}

function toolNameOf(item: RunToolApprovalItem): string {
  return item.name ?? item.rawItem.type;
}

function callIdOf(item: RunToolApprovalItem): string | undefined {
  const raw = item.rawItem as { callId?: unknown; id?: unknown };
  if (typeof raw.callId === "string" && raw.callId) return raw.callId;
  return typeof raw.id === "string" && raw.id ? raw.id : undefined;
}

/** A function call's arguments as an object; a hosted tool's call (shell, computer, apply_patch) as its action. */
function inputOf(item: RunToolApprovalItem): Record<string, unknown> {
  const text = item.arguments;
  if (text !== undefined) {
    try {
      const parsed: unknown = JSON.parse(text);
      if (isRecord(parsed)) return parsed;
    } catch {
      // Shown as the text the model wrote.
    }
    return { arguments: text };
  }
  const raw = item.rawItem as Record<string, unknown>;
  if (isRecord(raw.action)) return raw.action;
  const { type: _type, id: _id, callId: _callId, status: _status, providerData: _providerData, ...rest } = raw;
  return rest;
}
