/**
 * The rules every store applies when a request leaves `pending`, and when it
 * counts an approval towards its quorum, in plain TypeScript (the Redis store
 * does the same inside its Lua scripts).
 */
import type { Approval, RequestRecord } from "../requests/model.js";
import type { AnsweredTransition, Transition } from "../requests/store.js";

export type PureTransitionResult = { outcome: "applied"; record: RequestRecord } | { outcome: "already_ended" | "not_due" };

export function applyTransition(record: RequestRecord, change: Transition): PureTransitionResult {
  if (record.status !== "pending") return { outcome: "already_ended" };
  if (change.status === "expired" && record.expiresAt > change.at) return { outcome: "not_due" };
  return { outcome: "applied", record: ended(record, change) };
}

/** The record as `change` leaves it. */
function ended(record: RequestRecord, change: Transition): RequestRecord {
  const next: RequestRecord = { ...record, status: change.status, endedAt: change.at };
  switch (change.status) {
    case "answered":
      next.decision = change.decision;
      next.answeredBy = change.answeredBy;
      break;
    case "cancelled":
      if (change.by !== undefined) next.cancelledBy = change.by;
      if (change.reason !== undefined) next.error = change.reason;
      break;
    case "failed":
      next.error = change.error;
      break;
    case "expired":
      if (change.unpostedError !== undefined && !record.slack) next.error = change.unpostedError;
      if (change.decision !== undefined) next.decision = change.decision;
      break;
  }
  return next;
}

export type PureApproveResult = { outcome: "applied" | "counted"; record: RequestRecord } | { outcome: "already_ended" | "duplicate" };

/**
 * Counts `approval` on a pending request: a person counts once; the approval
 * that makes `quorum` ends the request with `final` (`applied`), an earlier
 * one leaves it pending (`counted`). An ended request is `already_ended`,
 * whoever approves.
 */
export function applyApproval(record: RequestRecord, approval: Approval, quorum: number, final: AnsweredTransition): PureApproveResult {
  if (record.status !== "pending") return { outcome: "already_ended" };
  const approvals = record.approvals ?? [];
  if (approvals.some((counted) => counted.person.id === approval.person.id)) return { outcome: "duplicate" };
  const next: RequestRecord = { ...record, approvals: [...approvals, approval] };
  if (approvals.length + 1 < quorum) return { outcome: "counted", record: next };
  return { outcome: "applied", record: ended(next, final) };
}
