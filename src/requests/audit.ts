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
 * always written. What a token can drive (creates, posts, its own cancels,
 * its refused creates) can therefore cost at most later events of that sort,
 * never the record of what people decided.
 *
 * Nor can one token crowd out another: each agent token may hold at most its
 * share of the cap in events that are no decision, counted over the retention
 * window (so its share frees up as its events age out); past it, its events
 * of that sort are counted, not written, under the reason `token_share`. The
 * share is the cap divided by the number of agent tokens (RELAY_TOKENS,
 * `tokenShareOf`): the shares add up to at most the cap, so what every other
 * token writes never takes a token's room, whatever they do, and no operator
 * setting is needed to get there. A fraction of the cap would let a few
 * tokens together fill it; a share of the tokens active lately would let a
 * token that woke up find its room taken. A token that needs more room than
 * its share needs a larger cap. Decisions still count towards the cap, so
 * only they can bring the log to it (reason `cap`): people's answers, and
 * the `rule_used` of a rule a person made, within the create rate limit.
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

/** Why events were not written: the log at its cap, or their token past its share (see above). */
export type AuditDropReason = "cap" | "token_share";

/** A count of events not written (they are counted, never silently lost). */
export interface AuditDropCount {
  events: number;
  /** Unix time in milliseconds of the first and the last event not written. */
  firstAt: number;
  lastAt: number;
}

/** Events not written for one reason (for `token_share`, of one token). */
export interface AuditDropCause extends AuditDropCount {
  reason: AuditDropReason;
  /** The agent token past its share (`token_share` only). */
  token?: string;
}

/** Every event not written (the totals), and why: one cause per reason and token, the cap's first. */
export interface AuditDrops extends AuditDropCount {
  causes: AuditDropCause[];
}

/**
 * Most events that are no decision one agent token may hold in the log: the
 * cap shared out evenly among the agent tokens. At least one event each: with
 * more agent tokens than the cap (100 at the least), the shares add up to more
 * than it, and the cap is what bounds them.
 */
export function tokenShareOf(maxEvents: number, agentTokens: number): number {
  return Math.max(1, Math.floor(maxEvents / Math.max(1, agentTokens)));
}

/** Two counts of events not written as one (undefined: none). */
export function addDropCounts(a: AuditDropCount | undefined, b: AuditDropCount | undefined): AuditDropCount | undefined {
  if (!a || !b) return a ?? b;
  return { events: a.events + b.events, firstAt: Math.min(a.firstAt, b.firstAt), lastAt: Math.max(a.lastAt, b.lastAt) };
}

/** Adds one event not written at `at` to `count` (undefined: the first). */
export function countDrop(count: AuditDropCount | undefined, at: number): AuditDropCount {
  return { events: (count?.events ?? 0) + 1, firstAt: count?.firstAt ?? at, lastAt: at };
}

/**
 * A bounded, append-only event log shared by every instance that shares the
 * store. Like the RequestStore, a log backed by a service that can be down
 * throws StoreUnavailableError within its bound.
 */
export interface AuditLog {
  /**
   * Appends one event, and lets events older than the retention go; an event
   * that is no decision is counted instead when the log is at its cap or its
   * token holds its share.
   */
  append(entry: AuditEntry): Promise<void>;
  /** Events matching `query`, oldest first. */
  read(query: AuditQuery): Promise<AuditEvent[]>;
  /** What the cap and the tokens' shares kept out, or undefined when nothing. */
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
