/**
 * The line that replaces the buttons once a request has ended: who decided
 * what and when ("✅ Allowed by @alice · 12:03"), the deny reason or the
 * answers given, or why the request expired, was cancelled or failed.
 */
import { describeDecision, isDefaultDenyMessage } from "../../requests/decisions.js";
import { type Decision } from "../../protocol/decisions.js";
import type { RequestRecord } from "../../requests/model.js";
import { allocate, Fitter, type Leaf } from "./budget.js";
import { byWhom, slackDate } from "./common.js";
import { displayValue } from "./interactive.js";
import { cutShort, fit } from "./text.js";
import { quoteLines } from "./escape.js";

/** The outcome section never takes more than this; message.ts keeps it free. */
export const OUTCOME_MAX = 2000;
const REASON_MAX = 1500;
const ANSWERS_MAX = 1700;

/** First line of the outcome, e.g. "✅ Allowed by <@U123>" (no time). */
export function outcomeHeadline(record: RequestRecord): string {
  switch (record.status) {
    case "pending":
      return "⏳ Waiting for an answer";
    case "expired":
      // A decision here is the route's onTimeout: halt: the agent was told to stop.
      return record.decision ? "⏱ Expired: no one answered in time, so the agent was stopped" : "⏱ Expired";
    case "cancelled":
      if (record.error) return `🚫 Cancelled: ${cutShort(record.error, 250)}`;
      return record.cancelledBy ? `🚫 Cancelled by ${cutShort(record.cancelledBy, 100)}` : "🚫 Cancelled";
    case "failed":
      return `⚠️ Failed: ${cutShort(record.error ?? "unknown error", 250)}`;
    case "answered": {
      const { emoji, verb } = record.decision ? describeDecision(record.decision) : { emoji: "✅", verb: "Answered" };
      const reply = record.decision && "reply" in record.decision ? ` (${record.decision.reply})` : "";
      return [`${emoji} ${verb}${reply}`, byWhom(record.answeredBy)].filter(Boolean).join(" ");
    }
  }
}

/** The full outcome text (mrkdwn, at most OUTCOME_MAX characters). */
export function outcomeText(record: RequestRecord): string {
  const when = record.endedAt !== undefined && record.status !== "pending" ? ` · ${slackDate(record.endedAt)}` : "";
  const details = record.status === "answered" && record.decision ? decisionDetails(record, record.decision) : "";
  return `${outcomeHeadline(record)}${when}${details}`;
}

function decisionDetails(record: RequestRecord, decision: Decision): string {
  if ("behavior" in decision) {
    if (decision.behavior !== "deny" || isDefaultDenyMessage(decision.message)) return "";
    return `\nReason: ${fit(decision.message, "text", REASON_MAX, REASON_MAX).parts[0] ?? ""}`;
  }
  if ("answers" in decision) return answerLines(record, decision);
  return "";
}

/**
 * "> *Question*: answer" for every answered question, sharing ANSWERS_MAX
 * characters. Questions and the options picked are the agent's words, so
 * every line of them is quoted: none can pass for the outcome line above.
 */
function answerLines(record: RequestRecord, decision: Decision & { answers: Record<string, unknown> }): string {
  const rows: Array<{ label: string; value: string }> = [];
  const body = record.body;
  if (body.kind === "ask_user_question") {
    for (const question of body.questions) {
      const answer = decision.answers[question.question];
      if (typeof answer === "string") rows.push({ label: question.header || question.question, value: answer });
    }
    if ("response" in decision && typeof decision.response === "string") rows.push({ label: "Response", value: decision.response });
  } else if (body.kind === "interactive_questions") {
    for (const question of body.questions) {
      const answer = decision.answers[question.id];
      if (typeof answer === "string" || typeof answer === "boolean" || Array.isArray(answer)) {
        rows.push({ label: question.question, value: displayValue(answer as string | string[] | boolean) });
      }
    }
  }
  const labelMax = Math.min(100, Math.max(20, Math.floor(ANSWERS_MAX / Math.max(1, rows.length) / 3)));
  const labels = rows.map((row) => quoteLines(`*${cutShort(row.label, labelMax)}*: `));
  const leaves: Leaf[] = rows.map((row, i) => ({ key: `v${i}`, raw: row.value, encoding: "quote", weight: 1, cap: 1000 }));
  const fixed = labels.reduce((sum, label) => sum + label.length + 1, 0);
  const fitter = new Fitter(leaves, allocate(leaves, ANSWERS_MAX - fixed));
  return rows.map((_, i) => `\n${labels[i]}${unquoteFirst(fitter.text(`v${i}`))}`).join("");
}

/** A quoted value that follows its quoted label on the same line: its first `> ` goes. */
function unquoteFirst(quoted: string): string {
  return quoted.startsWith("> ") ? quoted.slice(2) : quoted;
}
