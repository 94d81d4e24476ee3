/**
 * In-memory AuditLog for a single relay instance (no REDIS_URL): the events of
 * the last `retentionMs` in append order, all lost when the process exits. At
 * `maxEvents`, events that are no decision are counted instead of kept
 * (src/requests/audit.ts says why). Ids are `<Unix ms>-<sequence>` as in the Redis
 * Stream (the sequence counts events within one millisecond, and the time never
 * goes back), so cursors mean the same with either log.
 */
import { AuditEntry, DEFAULT_AUDIT_RETENTION_MS, isDecision, type AuditDrops, type AuditEvent, type AuditLog, type AuditQuery } from "../requests/audit.js";
import { isAtOrAfter, readStart } from "./audit-ids.js";

export interface MemoryAuditLogOptions {
  /** Most events kept (RELAY_AUDIT_MAX_EVENTS): past it, only decisions are written. */
  maxEvents: number;
  /** How long events are kept, in milliseconds (RELAY_AUDIT_RETENTION; default 90 days). */
  retentionMs?: number;
  /** Unix time in milliseconds: the time in each new event's id. */
  now?: () => number;
}

export function createMemoryAuditLog({ maxEvents, retentionMs = DEFAULT_AUDIT_RETENTION_MS, now = Date.now }: MemoryAuditLogOptions): AuditLog {
  if (!Number.isSafeInteger(maxEvents) || maxEvents < 1) throw new Error("maxEvents must be a positive integer");
  if (!Number.isSafeInteger(retentionMs) || retentionMs < 1) throw new Error("retentionMs must be a positive integer");
  const events: AuditEvent[] = [];
  let drops: AuditDrops | undefined;
  let lastMs = 0;
  let sequence = 0;

  function nextId(): string {
    const ms = Math.max(lastMs, Math.floor(now()));
    sequence = ms === lastMs ? sequence + 1 : 0;
    lastMs = ms;
    return `${ms}-${sequence}`;
  }

  /** Index of the first event at or after the query's start (events are in id order). */
  function firstIndex(query: AuditQuery): number {
    const start = readStart(query);
    let low = 0;
    let high = events.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (isAtOrAfter(events[middle]!.id, start)) high = middle;
      else low = middle + 1;
    }
    return low;
  }

  return {
    async append(entry) {
      const parsed = AuditEntry.parse(entry);
      const at = Math.floor(now());
      const expired = firstIndex({ since: at - retentionMs, limit: 0 });
      if (expired > 0) events.splice(0, expired);
      if (events.length >= maxEvents && !isDecision(parsed)) {
        drops = { events: (drops?.events ?? 0) + 1, firstAt: drops?.firstAt ?? at, lastAt: at };
        return;
      }
      events.push({ ...parsed, id: nextId() });
    },

    async drops() {
      return drops && { ...drops };
    },

    async read(query) {
      const found: AuditEvent[] = [];
      for (let index = firstIndex(query); index < events.length && found.length < query.limit; index += 1) {
        const event = events[index]!;
        if (query.requestId === undefined || event.requestId === query.requestId) found.push(structuredClone(event));
      }
      return found;
    },

    async close() {},
  };
}
