/**
 * "Tell this person what happened": the ephemeral message someone gets when
 * their click, submission or thread reply lands on a request that has
 * already ended (double click, late click, expired, cancelled), was refused
 * (they may not answer it) or counted towards a quorum. Only they see it,
 * and it never changes the request.
 */
import { describeDecision } from "../../requests/decisions.js";
import type { RequestRecord } from "../../requests/model.js";
import type { Refusal } from "../../requests/policy.js";
import { RELAY_PERSON, type AnswerResult } from "../../requests/service.js";
import { approvalCountedNotice, duplicateApprovalNotice, refusalNotice as refusalText } from "../blocks/index.js";
import { personText } from "../blocks/people.js";
import type { ListenerDeps } from "./context.js";

export interface NoticeTarget {
  /** Channel the request's message lives in. */
  channel: string;
  /** Slack user id of the person to tell. */
  user: string;
  /** Thread to show the notice in (a thread reply's notice belongs next to it). */
  threadTs?: string;
}

/** Why a request no longer takes answers, in one sentence. */
export function endedNotice(record: RequestRecord): string {
  switch (record.status) {
    case "answered": {
      if (!record.decision) return "This request was already answered.";
      const { emoji, verb } = describeDecision(record.decision);
      const by = record.answeredBy;
      const who = !by ? "someone" : by.id === RELAY_PERSON.id ? (by.name ?? by.id) : personText(by);
      return `This request was already answered: ${emoji} ${verb} by ${who}`;
    }
    case "expired":
      return "This request expired.";
    case "cancelled":
      return "This request was cancelled.";
    case "failed":
      return "This request failed.";
    case "pending":
      return "This request is still waiting for an answer.";
  }
}

/** Posts an ephemeral notice; a failure is logged, never thrown (the interaction is already acked). */
export async function tellPerson(deps: ListenerDeps, target: NoticeTarget, text: string): Promise<void> {
  try {
    const thread = target.threadTs === undefined ? {} : { thread_ts: target.threadTs };
    await deps.client.chat.postEphemeral({ channel: target.channel, user: target.user, text, ...thread });
  } catch (error) {
    deps.logger.warn({ channel: target.channel, error }, "slack ephemeral notice failed");
  }
}

/** Why the person may not answer this request, and who may (docs/architecture.md §7). */
export function refusalNotice(record: RequestRecord, refusal: Refusal): string {
  return `🔒 ${refusalText(refusal, record)}`;
}

/**
 * Tells the person what became of their answer when the message alone does
 * not: it came too late, it was refused, or it counted towards a quorum (or
 * already had). An answer that ended the request needs no notice: the
 * message changes. Their App Home view is refreshed too, if they opened it
 * lately (off this path).
 */
export async function reportOutcome(deps: ListenerDeps, result: AnswerResult, target: NoticeTarget): Promise<void> {
  deps.home?.acted(target.user);
  const text = outcomeNotice(result);
  if (text !== undefined) await tellPerson(deps, target, text);
}

function outcomeNotice(result: AnswerResult): string | undefined {
  switch (result.outcome) {
    case "already_ended":
      return endedNotice(result.record);
    case "refused":
      return refusalNotice(result.record, result.refusal);
    case "counted":
      return approvalCountedNotice(result.record);
    case "duplicate":
      return duplicateApprovalNotice(result.record);
    default:
      return undefined;
  }
}
