/**
 * In-memory AuditLog for a single relay instance (no REDIS_URL): the events of
 * the last `retentionMs` in append order, all lost when the process exits. At
 * `maxEvents`, and past their token's `tokenShare`, events that are no decision
 * are counted instead of kept (src/requests/audit.ts says why). Ids are `<Unix ms>-<sequence>` as in the Redis
 * Stream (the sequence counts events within one millisecond, and the time never
 * goes back), so cursors mean the same with either log.
 *
 * Each event is kept as its id and its JSON text, parsed when read: a
 * request's "created" and "posted" events as objects took about 740 bytes of
 * heap (their own copies of the request id, token, kind, route and channel
 * strings, property arrays, ids as strings of three pieces), as text about
 * 570; the log holds up to RELAY_AUDIT_MAX_EVENTS (50,000 by default) of
 * them. A read by request looks for the request id in the text before it
 * parses.
 */
import {
  AuditEntry,
  countDrop,
  DEFAULT_AUDIT_RETENTION_MS,
  isDecision,
  type AuditDropCount,
  type AuditDrops,
  type AuditEvent,
  type AuditLog,
  type AuditQuery,
} from "../requests/audit.js";
import { isAtOrAfter, readStart } from "./audit-ids.js";

export interface MemoryAuditLogOptions {
  /** Most events kept (RELAY_AUDIT_MAX_EVENTS): past it, only decisions are written. */
  maxEvents: number;
  /** Most events that are no decision one agent token may hold (src/requests/audit.ts tokenShareOf); default `maxEvents`. */
  tokenShare?: number;
  /** How long events are kept, in milliseconds (RELAY_AUDIT_RETENTION; default 90 days). */
  retentionMs?: number;
  /** Unix time in milliseconds: the time in each new event's id. */
  now?: () => number;
}

/** One event as the log keeps it: the id (a flat string) and the event's other fields as JSON. */
interface KeptEvent {
  readonly id: string;
  readonly text: string;
}

export function createMemoryAuditLog({
  maxEvents,
  tokenShare = maxEvents,
  retentionMs = DEFAULT_AUDIT_RETENTION_MS,
  now = Date.now,
}: MemoryAuditLogOptions): AuditLog {
  if (!Number.isSafeInteger(maxEvents) || maxEvents < 1) throw new Error("maxEvents must be a positive integer");
  if (!Number.isSafeInteger(tokenShare) || tokenShare < 1) throw new Error("tokenShare must be a positive integer");
  if (!Number.isSafeInteger(retentionMs) || retentionMs < 1) throw new Error("retentionMs must be a positive integer");
  const events: KeptEvent[] = [];
  /** Agent token → the id times (ms) of its events in the log that are no decision, oldest first. */
  const held = new Map<string, number[]>();
  let total: AuditDropCount | undefined;
  let capped: AuditDropCount | undefined;
  const overShare = new Map<string, AuditDropCount>();
  let lastMs = 0;
  let sequence = 0;

  function nextId(): string {
    const ms = Math.max(lastMs, Math.floor(now()));
    sequence = ms === lastMs ? sequence + 1 : 0;
    lastMs = ms;
    // join makes one flat string; a template literal this long would be a string of pieces.
    return [ms, sequence].join("-");
  }

  /** Index of the first event at or after the query's start (events are in id order). */
  function firstIndex(query: AuditQuery): number {
    const start = readStart(query);
    return lowerBound(events.length, (i) => isAtOrAfter(events[i]!.id, start));
  }

  return {
    async append(entry) {
      const parsed = AuditEntry.parse(entry);
      const at = Math.floor(now());
      const cutoff = at - retentionMs;
      const expired = firstIndex({ since: cutoff, limit: 0 });
      if (expired > 0) events.splice(0, expired);
      const token = parsed.token;
      const times = token === undefined ? undefined : held.get(token);
      // One splice, not a shift per time: a token back after a long quiet may have its whole share to let go.
      const gone = times === undefined ? 0 : lowerBound(times.length, (i) => times[i]! >= cutoff);
      if (gone > 0) times!.splice(0, gone);
      if (!isDecision(parsed)) {
        const atCap = events.length >= maxEvents;
        if (atCap || (token !== undefined && (times?.length ?? 0) >= tokenShare)) {
          total = countDrop(total, at);
          if (atCap) capped = countDrop(capped, at);
          else overShare.set(token!, countDrop(overShare.get(token!), at));
          return;
        }
      }
      events.push({ id: nextId(), text: JSON.stringify(parsed) });
      if (token === undefined || isDecision(parsed)) return;
      if (times) times.push(lastMs);
      else held.set(token, [lastMs]);
    },

    async drops(): Promise<AuditDrops | undefined> {
      if (total === undefined) return undefined;
      const shares = [...overShare].sort(([a], [b]) => (a < b ? -1 : 1)).map(([token, count]) => ({ reason: "token_share" as const, token, ...count }));
      return { ...total, causes: [...(capped ? [{ reason: "cap" as const, ...capped }] : []), ...shares] };
    },

    async read(query) {
      const found: AuditEvent[] = [];
      const needle = query.requestId === undefined ? undefined : `"requestId":${JSON.stringify(query.requestId)}`;
      for (let index = firstIndex(query); index < events.length && found.length < query.limit; index += 1) {
        const { id, text } = events[index]!;
        if (needle !== undefined && !text.includes(needle)) continue;
        const event = { ...(JSON.parse(text) as AuditEntry), id };
        if (query.requestId === undefined || event.requestId === query.requestId) found.push(event);
      }
      return found;
    },

    async close() {},
  };
}

/** The first index in [0, length) for which `atOrAfter` holds, where it holds from some index on (sorted data); `length` when none. */
function lowerBound(length: number, atOrAfter: (index: number) => boolean): number {
  let low = 0;
  let high = length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (atOrAfter(middle)) high = middle;
    else low = middle + 1;
  }
  return low;
}
