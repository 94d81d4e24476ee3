/**
 * The relay's App Home tab (issue 9): what waits on the person who opened
 * it and the "Allow for a while" rules they made, each with **Revoke**.
 * Pure: ../home-tab.ts gathers what to show and publishes the view. Agent
 * text (what is asked, the tool, the session) is escaped and cut; channels
 * and links are written only from ids and URLs of a checked shape, so the
 * view stays inside Slack's limits (100 blocks, 3,000 characters a
 * section) however many requests wait and whatever an agent sent.
 */
import type { HomeView, KnownBlock } from "@slack/types";
import type { RequestRecord } from "../../requests/model.js";
import type { Rule } from "../../requests/rules.js";
import { Action, encodeRuleButton } from "../ids.js";
import { slackDate } from "./common.js";
import { button, confirmDialog, context, header, section } from "./elements.js";
import { askedLine } from "./message.js";
import { requestLink, timeLeft } from "./reminders.js";
import { cutShort } from "./text.js";

/**
 * Most requests and rules the view lists (the rest are counted), and how
 * many of the relay's newest pending requests are looked at per view.
 */
export const HOME_LIMITS = { requests: 20, rules: 20, scanned: 100 } as const;

export interface WaitingRequest {
  record: RequestRecord;
  /** The permalink of its message (../permalinks.ts), when known. */
  permalink?: string;
}

export interface HomeWaiting {
  /** Newest first, at most HOME_LIMITS.requests. */
  shown: WaitingRequest[];
  /** Requests waiting on the person past those shown. */
  more: number;
  /** true when the relay had more pending requests than it looked at (HOME_LIMITS.scanned), so more than `more` may wait. */
  moreUncounted: boolean;
  /** Pending requests Slack could not say whether the person may answer (a user group could not be read): not listed. */
  unchecked: number;
}

export interface HomeRules {
  /** Newest first, at most HOME_LIMITS.rules. */
  shown: Rule[];
  /** true when the person has more live rules than shown. */
  more: boolean;
  /** Permalink of the message each rule was made on, by rule id, when known. */
  permalinks?: ReadonlyMap<string, string>;
}

export interface HomeContent {
  /** Unix time in milliseconds the view is built at. */
  now: number;
  /** One line at the top: what became of the person's last click here (already escaped). */
  notice?: string;
  waiting: HomeWaiting | "unavailable";
  /** "none": the relay keeps no rules, so the section is left out. */
  rules: HomeRules | "unavailable" | "none";
}

export function homeView(content: HomeContent): HomeView {
  const blocks: KnownBlock[] = [];
  if (content.notice !== undefined) blocks.push(section("notice", content.notice));
  blocks.push(header("waiting_header", "Waiting on you"), ...waitingBlocks(content.waiting, content.now));
  if (content.rules !== "none") blocks.push({ type: "divider" }, header("rules_header", "Your rules"), ...ruleBlocks(content.rules, content.now));
  blocks.push(context("updated", [`Updated ${slackDate(content.now)}. It changes when you open this tab and after you answer or revoke.`]));
  return { type: "home", blocks };
}

/** What the view says when the store could not be read, per section. */
export const UNAVAILABLE = {
  requests: "⚠️ The relay could not read its requests just now. Open this tab again in a moment.",
  rules: "⚠️ Your rules could not be read just now. Open this tab again in a moment.",
} as const;

function waitingBlocks(waiting: HomeWaiting | "unavailable", now: number): KnownBlock[] {
  if (waiting === "unavailable") return [section("waiting_unavailable", UNAVAILABLE.requests)];
  const blocks: KnownBlock[] = waiting.shown.map((item, i) => section(`request_${i}`, requestText(item, now)));
  if (waiting.shown.length === 0 && waiting.more === 0) blocks.push(context("waiting_none", ["Nothing is waiting on you."]));
  if (waiting.more > 0) {
    blocks.push(context("waiting_more", [`…and ${waiting.more}${waiting.moreUncounted ? "+" : ""} more waiting on you, older than these.`]));
  } else if (waiting.moreUncounted) {
    blocks.push(context("waiting_more", [`Only the relay's newest ${HOME_LIMITS.scanned} pending requests were looked at: older ones may wait on you too.`]));
  }
  if (waiting.unchecked > 0) {
    const requests = waiting.unchecked === 1 ? "1 more request" : `${waiting.unchecked} more requests`;
    blocks.push(context("waiting_unchecked", [`⚠️ Slack could not say just now whether you may answer ${requests}. Open this tab again in a moment.`]));
  }
  return blocks;
}

/** "Permission request: Bash: npm test" / "from *ci-bot* · in #approvals · 25 minutes left (expires …) · Open the request". */
function requestText({ record, permalink }: WaitingRequest, now: number): string {
  const parts = [
    `from *${cutShort(record.tokenName, 60) || "an agent"}*`,
    whereText(record.slack?.channel),
    `${timeLeft(record.expiresAt - now)} left (expires ${slackDate(record.expiresAt, "{date_short_pretty} {time}")})`,
  ];
  const link = requestLink(permalink);
  if (link) parts.push(link);
  return `${askedLine(record, 150)}\n${parts.join(" · ")}`;
}

/** Where a message lives, from its channel id only: a mention for a channel id, never anything an agent wrote. */
function whereText(channel: string | undefined): string {
  if (channel !== undefined && /^D[A-Z0-9]{2,30}$/.test(channel)) return "in a direct message";
  if (channel !== undefined && /^[CG][A-Z0-9]{2,30}$/.test(channel)) return `in <#${channel}>`;
  return "in Slack";
}

function ruleBlocks(rules: HomeRules | "unavailable", now: number): KnownBlock[] {
  if (rules === "unavailable") return [section("rules_unavailable", UNAVAILABLE.rules)];
  if (rules.shown.length === 0) {
    return [context("rules_none", ["You have no live rules. *Allow for 15 min* on a request makes one for that agent session and tool."])];
  }
  const blocks: KnownBlock[] = rules.shown.map((rule, i) => section(`rule_${i}`, ruleText(rule, now, rules.permalinks?.get(rule.id)), revokeButton(rule)));
  if (rules.more) blocks.push(context("rules_more", [`…and more: the newest ${HOME_LIMITS.rules} are shown.`]));
  return blocks;
}

/** "*Bash* calls of session 5f1c… from *ci-bot*" / "until 12:15 (14 minutes left) · used 3 times · Open the request". */
export function ruleText(rule: Rule, now: number, permalink?: string): string {
  const uses = rule.uses === 1 ? "used once" : `used ${rule.uses} times`;
  const parts = [`until ${slackDate(rule.expiresAt)} (${timeLeft(rule.expiresAt - now)} left)`, uses];
  const link = requestLink(permalink);
  if (link) parts.push(link);
  return `${ruleScopeText(rule)}\n${parts.join(" · ")}`;
}

/** "*Bash* calls of session 5f1c… from *ci-bot*": a rule's scope, escaped and cut. */
export function ruleScopeText(rule: Pick<Rule, "toolName" | "sessionId" | "token">): string {
  return `*${cutShort(rule.toolName, 100)}* calls of session ${cutShort(rule.sessionId, 80)} from *${cutShort(rule.token, 60)}*`;
}

function revokeButton(rule: Rule) {
  const confirm = confirmDialog("Revoke this rule?", "The agent session's next calls of this tool will be asked about again.", "Revoke", "danger");
  return button("Revoke", Action.revokeRule, encodeRuleButton({ rule: rule.id }), { style: "danger", confirm });
}

/** The notice line after a Revoke click. */
export const REVOKE_NOTICES = {
  gone: "That rule was already gone: it had run out, or had been revoked or replaced. Your live rules are below.",
  failed: "⚠️ The revoke could not be confirmed: the relay could not reach its store in time. If the rule is still listed below, try again in a moment.",
} as const;

export function revokedNotice(rule: Rule): string {
  return `✅ Revoked: ${ruleScopeText(rule)} will be asked about again.`;
}
