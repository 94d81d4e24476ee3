/**
 * The audit trail (DESIGN §7): every event of a request's life, who caused
 * it and why, appended to a bounded log that operators read with admin
 * tokens (`GET /v1/audit`, `approval-relay audit`). The domain owns the
 * contract; the memory and Redis Stream logs implement it (src/store).
 *
 * Appending is side work: the service appends after it has answered the
 * waiting agent, and a failed append is logged, never turned into a failed
 * request. Every event is also written to the relay's log.
 */
import { z } from "zod";
import { RequestKind } from "../protocol/request-body.js";
import { Person, RequestStatus } from "../protocol/request-view.js";

/** The event types, exactly as `GET /v1/audit` names them. */
export const AuditEventType = z.enum([
  "created",
  "posted",
  "reminded",
  "escalated",
  /** An approval counted towards a quorum. */
  "approval",
  /** An answer refused: the person may not answer (reason says why). */
  "refused",
  "answered",
  "expired",
  "cancelled",
  "failed",
]);
export type AuditEventType = z.infer<typeof AuditEventType>;

/** One event as the log keeps it. */
export const AuditEvent = z.object({
  /** Assigned by the log on append: ordered, unique, usable as a cursor (`after`). */
  id: z.string().min(1),
  /** Unix time in milliseconds. */
  at: z.number(),
  type: AuditEventType,
  requestId: z.string().min(1),
  /** Name of the agent token that created the request. */
  token: z.string().optional(),
  kind: RequestKind.optional(),
  /** The approver route the request fell under. */
  route: z.string().optional(),
  /** Slack channel of the request (or, for an escalation, the channel it was posted to). */
  channel: z.string().optional(),
  /** Who answered, approved, was refused, or cancelled when a person did. */
  person: Person.optional(),
  /** Why: the refusal, the cancel, the failure, the decision in a few words. */
  reason: z.string().max(2000).optional(),
  /** The status the request ended in (answered, expired, cancelled, failed events). */
  status: RequestStatus.optional(),
  /** Approvals counted so far and how many the request needs (approval and answered events of a quorum). */
  approvals: z.object({ count: z.number().int().min(0), quorum: z.number().int().min(1) }).optional(),
});
export type AuditEvent = z.infer<typeof AuditEvent>;

/** What the service appends; the log assigns the id. */
export type AuditEntry = Omit<AuditEvent, "id">;

export interface AuditQuery {
  /** Only events at or after this Unix time (ms). */
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
