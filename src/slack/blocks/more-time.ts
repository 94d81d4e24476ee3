/**
 * "+30 min" in a pending request's message (issue 9): its own row under the
 * answer buttons, the same for every kind, shown only while the request
 * can take more time (src/requests/more-time.ts: not for a caller that gives
 * up at its deadline, never past the longest wait). And the ephemeral texts
 * of a click on it. Pure; no agent text appears here.
 */
import type { KnownBlock } from "@slack/types";
import { MAX_TIMEOUT_SECONDS } from "../../protocol/request-body.js";
import { EXTENSION_MS, noMoreTime, type NoMoreTime } from "../../requests/more-time.js";
import type { RequestRecord } from "../../requests/model.js";
import { Action, encodeButton } from "../ids.js";
import { slackDate } from "./common.js";
import { actions, button } from "./elements.js";

const MINUTES = EXTENSION_MS / 60_000;

/** The button's text: "+30 min". */
const MORE_TIME_LABEL = `+${MINUTES} min`;

/**
 * A pending message's `controls` (its kind's answer buttons) with the
 * "+30 min" row under them, unless the request takes no more time or there
 * is nothing to answer. Whatever the status: message.ts also measures an
 * ended message as if pending, and it must measure the same.
 */
export function withMoreTime(record: RequestRecord, controls: KnownBlock[]): KnownBlock[] {
  if (controls.length === 0 || noMoreTime(record) !== undefined) return controls;
  return [...controls, actions("more_time", [button(MORE_TIME_LABEL, Action.moreTime, encodeButton({ r: record.id }))])];
}

/** Told to the person whose click moved the deadline; `record` holds the new one. */
export function extendedNotice(record: RequestRecord): string {
  return `⏱ You gave this request ${MINUTES} more minutes: it now expires ${slackDate(record.expiresAt, "{date_short_pretty} {time}")}.`;
}

/** Told to the person whose click could not give the request more time. */
export function noMoreTimeNotice(reason: NoMoreTime): string {
  if (reason === "not_extendable") {
    return "⏱ This request cannot be given more time: the agent stops waiting at its own deadline (a Claude Code hook's timeout). Nothing changed.";
  }
  const days = MAX_TIMEOUT_SECONDS / 86_400;
  return `⏱ This request cannot wait any longer: no request waits more than ${days} days from when it was asked. Nothing changed.`;
}
