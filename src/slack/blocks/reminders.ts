/**
 * What the relay says when a request's reminder or escalation is due
 * (docs/architecture.md §7): a thread reply that mentions who may answer at that moment
 * and how long is left, and, for an escalation with a `channel`, a post
 * there linking to the request's message. Pure; the reminder worker posts
 * them. Mentions come only from ids (./people.ts); the one line of agent
 * text (what is asked) is escaped and cut.
 */
import type { Escalation } from "../../requests/vocabulary.js";
import type { RequestRecord } from "../../requests/model.js";
import { approversAt, quorumOf } from "../../requests/policy.js";
import { barredRequester } from "./approvers.js";
import { slackDate } from "./common.js";
import { context, section } from "./elements.js";
import type { SlackMessage } from "./limits.js";
import { askedLine } from "./message.js";
import { mentionList } from "./people.js";
import { cutShort } from "./text.js";

/** Room for a thread reply's mentions: the whole reply stays within Slack's 3,000-character message text. */
const THREAD_MENTIONS = 2500;
/** A link the relay builds into mrkdwn: https, no whitespace and none of Slack's link delimiters. */
const SAFE_URL = /^https:\/\/[A-Za-z0-9.-]+(?:[/?#][^\s<>|]*)?$/;

/**
 * "<permalink|Open the request>" for a permalink from chat.getPermalink; undefined
 * unless it is a plain https URL of at most 1,000 characters (no whitespace,
 * none of Slack's link delimiters), so nothing else can become a link.
 */
export function requestLink(permalink: string | undefined): string | undefined {
  if (permalink === undefined || !SAFE_URL.test(permalink) || permalink.length > 1000) return undefined;
  return `<${permalink.replace(/&/g, "&amp;")}|Open the request>`;
}

/** "25 minutes", "1 hour 5 minutes", "40 seconds": time left, for people. */
export function timeLeft(ms: number): string {
  const seconds = Math.ceil(ms / 1000);
  if (seconds <= 0) return "no time";
  if (seconds < 60) return plural(seconds, "second");
  const minutes = Math.round(seconds / 60);
  if (minutes < 60) return plural(minutes, "minute");
  const hours = Math.floor(minutes / 60);
  const rest = minutes % 60;
  return rest === 0 ? plural(hours, "hour") : `${plural(hours, "hour")} ${plural(rest, "minute")}`;
}

function plural(n: number, unit: string): string {
  return `${n} ${unit}${n === 1 ? "" : "s"}`;
}

/** " 25 minutes left: it expires <date>." */
function deadline(record: RequestRecord, now: number): string {
  return ` ${timeLeft(record.expiresAt - now)} left: it expires ${slackDate(record.expiresAt, "{date_short_pretty} {time}")}.`;
}

/** " 1 of 2 approvals so far." where several are needed (counts only: people who approved are not mentioned again). */
function approvalsSoFar(record: RequestRecord): string {
  const quorum = quorumOf(record);
  return quorum > 1 ? ` ${record.approvals?.length ?? 0} of ${quorum} approvals so far.` : "";
}

/** Who is mentioned: never someone whose approval already counted, nor the requester barred from answering. */
function notMentioned(record: RequestRecord): string[] {
  const barred = barredRequester(record);
  return [...(record.approvals ?? []).map(({ person }) => person.id), ...(barred ? [barred] : [])];
}

/**
 * The reminder thread reply: the approvers at `now` (escalations due by
 * then included) are mentioned; under `approvers: any`, nobody is.
 */
export function reminderText(record: RequestRecord, now: number): string {
  const approvers = approversAt(record, now);
  const who = approvers ? mentionList(approvers, THREAD_MENTIONS, notMentioned(record)) : "";
  const opening = who ? `⏰ ${who}: this request is still waiting for an answer.` : "⏰ This request is still waiting for an answer.";
  return `${opening}${approvalsSoFar(record)}${deadline(record, now)}`;
}

/** The escalation thread reply: its users and groups are mentioned and told they may answer now. */
export function escalationText(record: RequestRecord, escalation: Escalation, now: number): string {
  const added = { users: escalation.users ?? [], usergroups: escalation.usergroups ?? [] };
  const who = mentionList(added, THREAD_MENTIONS, notMentioned(record));
  const opening = who ? `🔺 Escalated: ${who} may answer this request now.` : "🔺 Escalated: this request is still waiting for an answer.";
  const channel = escalation.channel && /^[CG]/.test(escalation.channel) ? ` Also posted in <#${escalation.channel}>.` : "";
  return `${opening}${channel}${approvalsSoFar(record)}${deadline(record, now)}`;
}

/**
 * The post in an escalation's `channel`: a link to the request's message
 * (`permalink`, from chat.getPermalink; left out unless it is a plain https
 * URL) and what is asked, in one line.
 */
export function escalationPost(record: RequestRecord, permalink: string, now: number): SlackMessage {
  const open = requestLink(permalink);
  const link = open ? ` · ${open}` : "";
  const by = `Requested by *${cutShort(record.tokenName, 100) || "an agent"}*`;
  return {
    text: `🔺 Waiting for an answer: ${askedLine(record, 300)}`,
    blocks: [
      section("escalation", `🔺 *A request is waiting for an answer*${link}\n${askedLine(record, 1000)}`),
      context("escalation_meta", [by, deadline(record, now).trim()]),
    ],
  };
}
