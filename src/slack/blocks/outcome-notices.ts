/**
 * What the relay says once a request ended, beside rewriting its message
 * (docs/architecture.md §7, everyone told): a reply in the message's thread with the
 * outcome, who decided and when (so the thread keeps the history; an expiry
 * says so too), and a DM to the person the request was made for with the
 * outcome and a link to the message. Pure; the messenger sends them
 * (src/slack/outcome-poster.ts). Mentions come only from ids (./people.ts);
 * the agent's text (what was asked) is escaped and cut.
 */
import { formatDuration } from "../../protocol/texts.js";
import type { RequestRecord } from "../../requests/model.js";
import { slackDate } from "./common.js";
import { context, section } from "./elements.js";
import type { SlackMessage } from "./limits.js";
import { askedLine } from "./message.js";
import { outcomeHeadline, outcomeText } from "./outcome.js";
import { joinWithin, personText } from "./people.js";
import { requestLink } from "./reminders.js";
import { cutShort } from "./text.js";

/** Room for the approvers of a quorum: with the outcome (at most 2,000) well within a message's 3,000 characters. */
const APPROVALS_MAX = 600;
/** A channel the relay may mention (`<#C…>`): a public or private channel id, never a DM. */
const CHANNEL_ID = /^[CG][A-Z0-9]{2,20}$/;

/** The outcome as the thread keeps it: the message's outcome line, and for an expiry how long people had. */
function outcomeLine(record: RequestRecord): string {
  if (record.status !== "expired") return outcomeText(record);
  const when = record.endedAt === undefined ? "" : ` · ${slackDate(record.endedAt)}`;
  const stopped = record.decision ? ", so the agent was stopped" : "";
  return `⏱ Expired: no one answered within ${formatDuration((record.expiresAt - record.createdAt) / 1000)}${stopped}${when}`;
}

/** "\nApprovals: <@U1>, <@U2>" on a request that counted approvals towards a quorum. */
function approvalsLine(record: RequestRecord): string {
  const approvals = record.approvals ?? [];
  if (approvals.length === 0) return "";
  return `\nApprovals: ${joinWithin(
    approvals.map(({ person }) => personText(person)),
    APPROVALS_MAX,
  )}`;
}

/** The reply in the request message's thread, e.g. "✅ Allowed by <@U123> · 12:03". */
export function outcomeReplyText(record: RequestRecord): string {
  return `${outcomeLine(record)}${approvalsLine(record)}`;
}

/**
 * The DM to the person the request was made for: what was asked, how it
 * ended, and a link to the message (`permalink`, from chat.getPermalink;
 * left out unless it is a plain https URL, and then the channel is named
 * instead where it is one).
 */
export function outcomeDirectMessage(record: RequestRecord, permalink: string | undefined): SlackMessage {
  const channel = record.slack && CHANNEL_ID.test(record.slack.channel) ? `In <#${record.slack.channel}>` : undefined;
  const where = requestLink(permalink) ?? channel;
  const by = `Requested by *${cutShort(record.tokenName, 100) || "an agent"}*`;
  return {
    text: `${outcomeHeadline(record)} · ${askedLine(record, 200)}`,
    blocks: [
      section("outcome_notice", `*A request made for you has ended*\n${askedLine(record, 1000)}`),
      section("outcome_notice_result", outcomeReplyText(record)),
      context("outcome_notice_meta", where ? [where, by] : [by]),
    ],
  };
}
