/**
 * In-memory AuditLog for a single relay instance (no REDIS_URL): the newest
 * `maxEvents` events in append order, the oldest dropped beyond that, all lost
 * when the process exits. Ids are `<Unix ms>-<sequence>` as in the Redis
 * Stream (the sequence counts events within one millisecond, and the time never
 * goes back), so cursors mean the same with either log.
 */
import { AuditEntry, type AuditEvent, type AuditLog, type AuditQuery } from "../requests/audit.js";
import { isAtOrAfter, readStart } from "./audit-ids.js";

export interface MemoryAuditLogOptions {
  /** Most events kept (RELAY_AUDIT_MAX_EVENTS). */
  maxEvents: number;
  /** Unix time in milliseconds: the time in each new event's id. */
  now?: () => number;
}

export function createMemoryAuditLog({ maxEvents, now = Date.now }: MemoryAuditLogOptions): AuditLog {
  if (!Number.isSafeInteger(maxEvents) || maxEvents < 1) throw new Error("maxEvents must be a positive integer");
  const events: AuditEvent[] = [];
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
      const event = { ...AuditEntry.parse(entry), id: nextId() };
      events.push(event);
      if (events.length > maxEvents) events.splice(0, events.length - maxEvents);
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
