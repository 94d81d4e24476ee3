/**
 * The words agents and people read when a request gives no answer, in one
 * place: the relay's Claude Code hook denies with them, and the client
 * library and the CLI say the same when the request they waited for ended
 * unanswered. Plain English; agents show them to the model and to people.
 * Also what an operator reads when the audit log kept events out, said
 * alike by `approval-relay audit` and the web console's audit view.
 */
import type { AuditReply } from "./operator.js";
import type { RequestView } from "./request-view.js";

/** How a request ended without an answer, as far as the text needs to know. */
export type NotAnswered =
  | { status: "expired"; /** How long people had to answer, in seconds. */ seconds: number }
  | { status: "cancelled"; /** Why, or by whom, when known. */ reason?: string | undefined }
  | { status: "failed"; /** Slack's error, when known. */ error?: string | undefined };

/**
 * One sentence saying why no answer came, e.g. "No one answered in Slack
 * within 10 minutes, so the tool call was denied." `consequence` (what
 * happened instead) follows after a comma.
 */
export function notAnsweredText(why: NotAnswered, consequence?: string): string {
  return `${notAnsweredClause(why)}${consequence ? `, ${consequence}` : ""}.`;
}

function notAnsweredClause(why: NotAnswered): string {
  switch (why.status) {
    case "expired":
      return `No one answered in Slack within ${formatDuration(why.seconds)}`;
    case "cancelled":
      return why.reason ? `The request was cancelled (${why.reason})` : "The request was cancelled before anyone answered in Slack";
    case "failed":
      return `The request could not be posted to Slack${why.error ? ` (${why.error})` : ""}`;
  }
}

/** What happened instead of an answer when a request expired under a route's `onTimeout: halt`. */
const HALTED = "so the tool call was denied and the agent was stopped";

/**
 * The sentence an agent reads when its request expired under a route's
 * `onTimeout: halt`: the deny message of a permission request, and the deny
 * and stop reason of a step gate, e.g. "No one answered in Slack within 10
 * minutes, so the tool call was denied and the agent was stopped."
 */
export function haltedOnTimeoutText(seconds: number): string {
  return notAnsweredText({ status: "expired", seconds }, HALTED);
}

/** "1 second", "45 seconds", "9 minutes 55 seconds", "1 hour 30 minutes"; "the time allowed" when unknown. */
export function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds)) return "the time allowed";
  const total = Math.max(0, Math.round(seconds));
  const units: Array<[number, string]> = [
    [Math.floor(total / 3600), "hour"],
    [Math.floor((total % 3600) / 60), "minute"],
    [total % 60, "second"],
  ];
  const parts = units.filter(([n]) => n > 0).map(([n, unit]) => `${n} ${unit}${n === 1 ? "" : "s"}`);
  return parts.length > 0 ? parts.join(" ") : "0 seconds";
}

/** Why a request that ended without an answer gave none, in words an agent or a person can act on. */
export function endedReason(view: Pick<RequestView, "status" | "createdAt" | "expiresAt" | "error">): string {
  switch (view.status) {
    case "expired":
      return notAnsweredText({ status: "expired", seconds: (Date.parse(view.expiresAt) - Date.parse(view.createdAt)) / 1000 });
    case "cancelled":
      return notAnsweredText({ status: "cancelled", reason: view.error });
    case "failed":
      return notAnsweredText({ status: "failed", error: view.error });
    default:
      return `The request ended with status "${view.status}".`;
  }
}

/** "3 events were not recorded from <ISO> to <ISO>: <why>", from the `dropped` of a `GET /v1/audit` reply. */
export function auditDroppedText({ events, from, to, reason }: NonNullable<AuditReply["dropped"]>): string {
  return `${events} events were not recorded from ${from} to ${to}: ${reason}`;
}
