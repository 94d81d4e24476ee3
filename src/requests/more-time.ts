/**
 * More time for a pending request (issue 9): someone who may answer it moves
 * its deadline by EXTENSION_MS ("+30 min" in Slack). Three rules hold
 * whoever clicks:
 *
 * - only those who may answer (policy.ts refusalFor, as for any answer:
 *   refused → audit `refused`, nothing changes);
 * - never for a request whose caller gives up at the deadline itself (the
 *   body's `extendable: false`, set for Claude Code hook calls: their own
 *   timeout cannot move, so a later deadline would promise what the agent
 *   never waits for);
 * - never past MAX_TIMEOUT_SECONDS after the request was created, in all.
 *
 * The store moves the deadline in one atomic step with the expiry sweep, the
 * key TTLs and the queued message update; the message then shows the new
 * "Expires" and the waiting agents follow it on their next read.
 */
import { MAX_TIMEOUT_SECONDS } from "../protocol/request-body.js";
import { extendedEntry, refusedEntry, type AuditRecorder } from "./audit-entries.js";
import type { PeopleDirectory } from "./directory.js";
import type { RequestRecord } from "./model.js";
import { refusalFor, type Answerer, type Refusal } from "./policy.js";
import type { RequestStore } from "./store.js";
import type { UpdateOutbox } from "./update-outbox.js";

/** How much later one "+30 min" moves a request's deadline (ms). */
export const EXTENSION_MS = 30 * 60_000;

/** Why a pending request cannot be given more time. */
export type NoMoreTime =
  /** Its caller gives up at the deadline (`extendable: false`). */
  | "not_extendable"
  /** Another extension would take it past MAX_TIMEOUT_SECONDS from its creation. */
  | "at_cap";

export type MoreTimeResult =
  /** The deadline moved: `record.expiresAt` is the new one. */
  | { outcome: "applied"; record: RequestRecord }
  | { outcome: "already_ended"; record: RequestRecord }
  | { outcome: "not_found" }
  /** This person may not answer the request; nothing changed. */
  | { outcome: "refused"; record: RequestRecord; refusal: Refusal }
  /** The request takes no more time; nothing changed. */
  | { outcome: "no_more_time"; record: RequestRecord; reason: NoMoreTime };

/** Why the request cannot be given EXTENSION_MS more, or undefined when it can. */
export function noMoreTime(record: RequestRecord): NoMoreTime | undefined {
  if (record.body.extendable === false) return "not_extendable";
  if (record.expiresAt + EXTENSION_MS > record.createdAt + MAX_TIMEOUT_SECONDS * 1000) return "at_cap";
  return undefined;
}

export interface MoreTimeDeps {
  store: Pick<RequestStore, "extend">;
  directory: PeopleDirectory;
  audit: AuditRecorder;
  /** Unix time in milliseconds. */
  now: () => number;
  /** Shows the new deadline in the request's message (its update is queued by the store step). */
  updates: Pick<UpdateOutbox, "show">;
}

/** `record` is pending and within its deadline. */
export async function extendPending(deps: MoreTimeDeps, record: RequestRecord, answerer: Answerer): Promise<MoreTimeResult> {
  const at = deps.now();
  const refusal = await refusalFor(record, answerer, at, deps.directory);
  if (refusal) {
    deps.audit.record(refusedEntry(record, answerer, refusal, at));
    return { outcome: "refused", record, refusal };
  }
  const reason = noMoreTime(record);
  if (reason) return { outcome: "no_more_time", record, reason };
  const result = await deps.store.extend(record.id, record.expiresAt + EXTENSION_MS);
  if (result.outcome === "applied") {
    deps.audit.record(extendedEntry(result.record, answerer, at));
    deps.updates.show(result.record);
  }
  return result;
}
