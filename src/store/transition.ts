/**
 * The rule every store applies when a request leaves `pending`, in plain
 * TypeScript (the Redis store does the same inside its Lua scripts).
 */
import type { RequestRecord } from "../requests/model.js";
import type { Transition } from "../requests/store.js";

export type PureTransitionResult = { outcome: "applied"; record: RequestRecord } | { outcome: "already_ended" | "not_due" };

export function applyTransition(record: RequestRecord, change: Transition): PureTransitionResult {
  if (record.status !== "pending") return { outcome: "already_ended" };
  if (change.status === "expired" && record.expiresAt > change.at) return { outcome: "not_due" };
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
      break;
  }
  return { outcome: "applied", record: next };
}
