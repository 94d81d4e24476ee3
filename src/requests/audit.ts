/**
 * The audit trail (docs/architecture.md §7): every event of a request's life, who caused
 * it and why, appended to a bounded log that operators read with admin
 * tokens (`GET /v1/audit`, `approval-relay audit`). The domain owns the
 * contract; the memory and Redis Stream logs implement it (src/store).
 *
 * Agents cannot flush it: events leave the log by age (RELAY_AUDIT_RETENTION),
 * and the size cap (RELAY_AUDIT_MAX_EVENTS) is a safety valve that never
 * pushes old events out. At the cap, new events that record no person's
 * decision are not written (and counted, so reads say so); decisions are
 * always written. What a token can drive (creates, posts, its own cancels)
 * can therefore cost at most later events of that sort, never the record of
 * what people decided.
 *
 * Appending is side work: the service appends after it has answered the
 * waiting agent, and a failed append is logged, never turned into a failed
 * request. Every event is also written to the relay's log.
 */
import { z } from "zod";
import { AuditEventFields, AuditEventId } from "../protocol/operator.js";

export { AuditEventType } from "../protocol/operator.js";

/** One event as the log keeps it (its fields, shared with the wire event, are in src/protocol/operator.ts). */
export const AuditEvent = AuditEventFields.extend({
  /** Assigned by the log on append: ordered, unique, usable as a cursor (`after`). */
  id: AuditEventId,
  /** Unix time in milliseconds. */
  at: z.number(),
});
export type AuditEvent = z.infer<typeof AuditEvent>;

/** What the service appends; the log assigns the id. Logs parse what they are given with it, so nothing unreadable is stored. */
export const AuditEntry = AuditEvent.omit({ id: true });
export type AuditEntry = z.infer<typeof AuditEntry>;

export interface AuditQuery {
  /**
   * Only events appended at or after this Unix time (ms): the time in the
   * event's id, which the log assigns (Redis: its own clock), within
   * milliseconds of `at`.
   */
  since?: number;
  /** Only events after this event id (a cursor from an earlier read). */
  after?: string;
  /** Only events of this request. */
  requestId?: string;
  /** Most events returned. */
  limit: number;
}

/**
 * True for an event that records a person's decision (or a rule a person
 * made acting for them): never dropped at the cap, only by age.
 */
export function isDecision(entry: Pick<AuditEntry, "type" | "person">): boolean {
  switch (entry.type) {
    case "answered":
    case "approval":
    case "refused":
    case "rule_created":
    case "rule_used":
    case "rule_revoked":
    case "extended":
      return true;
    case "cancelled":
      return entry.person !== undefined;
    default:
      return false;
  }
}

/** Default RELAY_AUDIT_RETENTION: 90 days, in milliseconds. */
export const DEFAULT_AUDIT_RETENTION_MS = 90 * 24 * 3_600_000;

/** Events the log did not write because it was at its cap (they are counted, never silently lost). */
export interface AuditDrops {
  events: number;
  /** Unix time in milliseconds of the first and the last event not written. */
  firstAt: number;
  lastAt: number;
}

/**
 * A bounded, append-only event log shared by every instance that shares the
 * store. Like the RequestStore, a log backed by a service that can be down
 * throws StoreUnavailableError within its bound.
 */
export interface AuditLog {
  /** Appends one event, and lets events older than the retention go; at the cap, an event that is no decision is counted instead. */
  append(entry: AuditEntry): Promise<void>;
  /** Events matching `query`, oldest first. */
  read(query: AuditQuery): Promise<AuditEvent[]>;
  /** What the cap kept out, or undefined when nothing. */
  drops(): Promise<AuditDrops | undefined>;
  close(): Promise<void>;
}

/**
 * A copy of every event, kept where no agent can reach (RELAY_AUDIT_EXPORT:
 * a file of JSON lines for log shipping). It is written as each event is
 * recorded, whatever the log does with it: at the log's cap and while the
 * store is away too.
 */
export interface AuditExport {
  /** Queues one event for writing; never throws (a failed write is the export's to report). */
  write(entry: AuditEntry): void;
  /** Writes what is queued and closes. */
  close(): Promise<void>;
}
