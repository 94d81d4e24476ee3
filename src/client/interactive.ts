/**
 * For tools that return `InteractiveQuestion[]`: ask them in Slack and hand
 * back the answers keyed by question id, or a clear error when no one
 * answered (docs/architecture.md §2, interactive_questions).
 */
import { InteractiveQuestionsDecision, type InteractiveAnswer } from "../protocol/decisions.js";
import type { AgentInfo, Labels, RequestedBy } from "../protocol/request-body.js";
import type { RequestView } from "../protocol/request-view.js";
import { RelayClientError, RequestEndedError } from "./errors.js";
import { definedOnly } from "./fields.js";
import type { Asker, InteractiveQuestionInput } from "./types.js";

export type { InteractiveAnswer };
/** Answers keyed by question id: string (choice, text), string[] (multiChoice), boolean (confirm). */
export type InteractiveAnswers = Record<string, InteractiveAnswer>;

export interface AskInteractiveOptions {
  /** Questions with a default are answered with it at once; only required ones without a default go to a person. */
  autonomous?: boolean;
  signal?: AbortSignal;
  /** Slack channel or user id; default from the relay's configuration. */
  channel?: string;
  title?: string;
  /** mrkdwn shown above the questions (escaped by the relay). */
  context?: string;
  agent?: AgentInfo;
  timeoutSeconds?: number;
  idempotencyKey?: string;
  /** For the relay's routes to match on (e.g. `{env: "prod"}`); shown in Slack. */
  labels?: Labels;
  /** Who the questions are asked for (Slack user id or email): with `selfApproval: deny` they may not answer. */
  requestedBy?: RequestedBy;
}

/**
 * Resolves with the answers; rejects with RequestEndedError when the request
 * expired, was cancelled or could not be posted, with RelayClientError when
 * the relay refused or stayed unreachable, and with an AbortError when
 * `signal` aborts (the request is then cancelled).
 */
export async function askInteractive(relay: Asker, questions: InteractiveQuestionInput[], options: AskInteractiveOptions = {}): Promise<InteractiveAnswers> {
  const { signal, ...fields } = options;
  const view = await relay.ask({ kind: "interactive_questions", questions, ...definedOnly(fields) }, signal ? { signal } : {});
  return answersOf(view);
}

function answersOf(view: RequestView): InteractiveAnswers {
  if (view.status !== "answered") {
    throw new RequestEndedError(view as RequestView & { status: "expired" | "cancelled" | "failed" });
  }
  const decision = InteractiveQuestionsDecision.safeParse(view.decision);
  if (!decision.success) {
    throw new RelayClientError("relay_bad_reply", `request ${view.id} was answered with a decision that is not an answers object`);
  }
  return decision.data.answers;
}
