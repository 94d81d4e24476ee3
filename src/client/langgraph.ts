/**
 * `slack-approval-relay/langgraph`: LangGraph.js interrupts that carry a
 * HITLRequest (langchain's `humanInTheLoopMiddleware`, or a graph node's own
 * `interrupt({actionRequests, reviewConfigs})`), answered in Slack.
 * `answerHitlRequest` asks about each action and maps the person's answer to
 * a HITLResponse: approve, edit (when the action's review allows edits),
 * reject with the person's reason. `invokeWithApprovals` invokes a graph or
 * agent and resumes it (`Command({resume})`) until no interrupt is left.
 *
 * A node re-runs from its start when it resumes, and an interrupted run may
 * be resumed by another process: every request's idempotency key is made of
 * the thread id, the interrupt id and the action's position, so asking about
 * the same interrupt again joins the request already posted.
 *
 * An edit that the action's review does not allow is a reject that says so
 * and quotes the edited input, never an approval of the original input; a
 * request that ends without an answer is a reject with the reason. A
 * rejection the action's review does not allow cannot be expressed: it
 * throws (HitlDecisionError), so the run stops instead of going ahead.
 */
import { Command } from "@langchain/langgraph";
import type { Decision as HitlDecision, DecisionType, HITLRequest, HITLResponse } from "langchain";
import type { Asker } from "./types.js";
import { askToolCall, editRefusedMessage, idempotencyKeyOf, isRecord, type ToolApprovalOptions, type ToolVerdict } from "./tool-call.js";

export type { HITLRequest, HITLResponse };

export interface AnswerHitlOptions extends ToolApprovalOptions {
  /** The checkpointer thread's id (`config.configurable.thread_id`). */
  threadId: string;
  /** The interrupt's id (`result.__interrupt__[i].id`). */
  interruptId: string;
}

/** The person answered, but the action's review config allows no decision that carries the answer. */
export class HitlDecisionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "HitlDecisionError";
  }
}

/** The decisions allowed when a request names no review config for an action: never an edit nobody allowed. */
const WITHOUT_CONFIG: DecisionType[] = ["approve", "reject"];

/**
 * Asks a person in Slack about every action of `request` (all at once) and
 * returns the HITLResponse to resume with. Relay failures, denials and
 * requests that end unanswered are rejections with the reason.
 */
export async function answerHitlRequest(request: HITLRequest, relay: Asker, options: AnswerHitlOptions): Promise<HITLResponse> {
  if (!isHitlRequest(request)) throw new TypeError("answerHitlRequest: the interrupt's value is not a HITLRequest ({actionRequests, reviewConfigs})");
  const decisions = await Promise.all(
    request.actionRequests.map(async (action, index): Promise<HitlDecision> => {
      const allowed = request.reviewConfigs.find((config) => config.actionName === action.name)?.allowedDecisions ?? WITHOUT_CONFIG;
      const verdict = await askToolCall(
        relay,
        {
          toolName: action.name,
          input: isRecord(action.args) ? action.args : {},
          description: action.description,
          idempotencyKey: idempotencyKeyOf("langgraph", options.threadId, options.interruptId, String(index)),
        },
        options,
      );
      return decisionFor(action.name, verdict, allowed);
    }),
  );
  return { decisions };
}

function decisionFor(name: string, verdict: ToolVerdict, allowed: readonly DecisionType[]): HitlDecision {
  const reject = (message: string): HitlDecision => {
    if (allowed.includes("reject")) return { type: "reject", message };
    throw new HitlDecisionError(`${message} (The review of ${name} does not allow a reject either, so the run stops.)`);
  };
  switch (verdict.type) {
    case "approve":
      return allowed.includes("approve")
        ? { type: "approve" }
        : reject(`The person approved ${name} in Slack, but its review does not allow a plain approval, so the call was not run.`);
    case "edit":
      return allowed.includes("edit")
        ? { type: "edit", editedAction: { name, args: verdict.input } }
        : reject(editRefusedMessage(name, verdict.input, "its review does not allow edits"));
    case "reject":
      return reject(verdict.message);
  }
}

/** Anything with LangGraph's `invoke` (a compiled graph, a `createAgent` agent). */
export interface Invocable {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the graph's own input, config and state types
  invoke(input: any, config?: any): Promise<any>;
}

interface Interrupted {
  __interrupt__?: Array<{ id?: string; value?: unknown }>;
}

/**
 * Invokes `agent` with `input` and `config` (which must name a checkpointer
 * thread), answers every interrupt in Slack and resumes until none is left;
 * returns the last result. To resume a run an earlier process left waiting,
 * invoke again with the same config: the pending interrupt's request is
 * joined, not posted again.
 */
export async function invokeWithApprovals<A extends Invocable>(
  agent: A,
  input: Parameters<A["invoke"]>[0],
  config: Parameters<A["invoke"]>[1],
  relay: Asker,
  options: ToolApprovalOptions = {},
): Promise<Awaited<ReturnType<A["invoke"]>>> {
  const threadId = (config as { configurable?: { thread_id?: unknown } } | undefined)?.configurable?.thread_id;
  if (typeof threadId !== "string" && typeof threadId !== "number") {
    throw new TypeError("invokeWithApprovals: config.configurable.thread_id is needed (and a checkpointer) to resume after an interrupt");
  }
  let result = (await agent.invoke(input, config)) as Awaited<ReturnType<A["invoke"]>>;
  for (;;) {
    const interrupts = (result as Interrupted | undefined)?.__interrupt__ ?? [];
    if (interrupts.length === 0) return result;
    const answers = await Promise.all(
      interrupts.map((pending) => {
        if (!pending.id) throw new TypeError("invokeWithApprovals: an interrupt without an id cannot be resumed");
        return answerHitlRequest(pending.value as HITLRequest, relay, { ...options, threadId: String(threadId), interruptId: pending.id });
      }),
    );
    const resume = interrupts.length === 1 ? answers[0] : Object.fromEntries(interrupts.map((pending, index) => [pending.id!, answers[index]]));
    result = (await agent.invoke(new Command({ resume }), config)) as Awaited<ReturnType<A["invoke"]>>;
  }
}

function isHitlRequest(value: unknown): value is HITLRequest {
  return isRecord(value) && Array.isArray(value.actionRequests) && Array.isArray(value.reviewConfigs);
}
