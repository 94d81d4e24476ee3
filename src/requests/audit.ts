/**
 * The audit trail (docs/architecture.md §7): every event of a request's life, who caused
 * it and why, appended to a bounded log that operators read with admin
 * tokens (`GET /v1/audit`, `approval-relay audit`). The domain owns the
 * contract; the memory and Redis Stream logs implement it (src/store).
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
 * A bounded, append-only event log shared by every instance that shares the
 * store. Like the RequestStore, a log backed by a service that can be down
 * throws StoreUnavailableError within its bound.
 */
export interface AuditLog {
  /** Appends one event; the oldest events beyond the log's cap are dropped. */
  append(entry: AuditEntry): Promise<void>;
  /** Events matching `query`, oldest first. */
  read(query: AuditQuery): Promise<AuditEvent[]>;
  close(): Promise<void>;
}
