/**
 * Answering from a Slack message: a click, a modal submission or a thread
 * reply counts only on the request's own message — the one it was posted
 * as, another copy the store recorded, or a copy in its channel that Slack
 * confirms the relay posted for it (a post whose reply was lost; it is
 * recorded then). A click on any other message (another channel, a forged
 * ts) answers nothing. RequestService.answerFromMessage applies this rule,
 * then reads the click on the request as stored (the Slack layer's `read`),
 * then answers as every answer does (./answering.ts).
 */
import type { Decision } from "../protocol/decisions.js";
import type { SlackRef } from "../protocol/request-view.js";
import type { AnswerResult } from "./answering.js";
import { messagesOf, type RequestRecord } from "./model.js";
import type { Answerer } from "./policy.js";

/** Slack's word on a message the store does not know: is it a copy the relay posted for the request? */
export interface MessageCopies {
  /** Throws when Slack cannot say (its API failing): no answer is not a "no". */
  isRequestMessage(ref: SlackRef, requestId: string): Promise<boolean>;
}

/** How a click, submission or reply reads on the request as stored: the decision it makes, or something else (`none`) its listener handles. */
export type Reading<T> = { decision: Decision } | { none: T };

export interface FromMessage<T> {
  /** The request the button or modal names; absent for a thread reply, whose request is found by its message. */
  id?: string;
  /** The message the click, submission or reply came from (channel and ts, as Slack said). */
  message: Partial<SlackRef>;
  person: Answerer;
  /** Reads the click on the request as stored, whatever its status (a pure function of the Slack layer). */
  read(record: RequestRecord): Reading<T>;
}

/** An answer's result; `not_found` also when the request is not on that message; `no_answer` when `read` made no decision. */
export type FromMessageResult<T> = AnswerResult | { outcome: "no_answer"; record: RequestRecord; none: T };

/** true when `ref` names exactly a message the request was posted as (its main one or another recorded copy). */
export function isRequestMessage(record: RequestRecord, ref: Partial<SlackRef>): boolean {
  const same = (message: SlackRef) => message.channel === ref.channel && message.ts === ref.ts;
  return messagesOf(record).some(same);
}

/**
 * The copy to ask Slack about: a ts in the request's own channel the store
 * does not know; undefined when there is none to ask about. Before the post
 * is recorded (Slack's reply still on its way, or its store write waiting
 * out a Redis failover) the request's own channel is the one it names.
 */
export function unknownCopy(record: RequestRecord, ref: Partial<SlackRef>): SlackRef | undefined {
  const channel = record.slack?.channel ?? record.channel;
  if (channel === undefined || ref.channel !== channel || ref.ts === undefined) return undefined;
  return { channel, ts: ref.ts };
}
