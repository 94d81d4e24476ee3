/**
 * "Tell this person what happened": the ephemeral message someone gets when
 * their click or submission lands on a request that has already ended
 * (double click, late click, expired, cancelled). Only they see it, and it
 * never changes the request.
 */
import { describeDecision } from "../../requests/decisions.js";
import type { RequestRecord } from "../../requests/model.js";
import { RELAY_PERSON } from "../../requests/service.js";
import type { TransitionResult } from "../../requests/store.js";
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
      const who = !by ? "someone" : by.id === RELAY_PERSON.id ? (by.name ?? by.id) : `<@${by.id}>`;
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

/** Tells the person when their answer came too late; an applied answer needs no notice (the message changes). */
export async function reportOutcome(deps: ListenerDeps, result: TransitionResult, target: NoticeTarget): Promise<void> {
  if (result.outcome === "already_ended") await tellPerson(deps, target, endedNotice(result.record));
}
