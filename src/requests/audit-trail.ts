/**
 * The audit trail as the rest of the relay uses it (docs/architecture.md §7): the service
 * records each event of a request's life here, and `GET /v1/audit` reads
 * them back a page at a time.
 *
 * Recording is side work, off the critical path: `record` writes the event
 * to the relay's log at once (so it is never lost entirely), then appends it
 * to the AuditLog; it never throws or rejects, so a caller may leave it
 * unawaited. A failed append (Redis away, an entry the log refuses) is
 * logged at warn and the request goes on as if nothing happened. When an
 * export is configured (RELAY_AUDIT_EXPORT), every recorded event is also
 * handed to it, appended to the log or not.
 */
import { silentLogger, type Logger } from "../logger.js";
import type { AuditEventView } from "../protocol/operator.js";
import type { AuditDrops, AuditEntry, AuditEvent, AuditExport, AuditLog, AuditQuery } from "./audit.js";

/** What a caller records: an entry, its time defaulting to the trail's now. */
export type AuditRecord = Omit<AuditEntry, "at"> & { at?: number };

/** One page of a read: `next` when more events may follow (the `after` of the next read). */
export interface AuditPage {
  events: AuditEvent[];
  next?: string;
  /** Events the log's cap kept out, when any: a reader is told the record is not whole. */
  dropped?: AuditDrops;
}

export interface AuditTrailDeps {
  log: AuditLog;
  /** Where a copy of every event goes (RELAY_AUDIT_EXPORT), when anywhere. */
  export?: AuditExport;
  logger?: Logger;
  /** Unix time in milliseconds. */
  now?: () => number;
}

/** Longest `reason` the log keeps (the AuditEvent schema's bound); a longer one is cut. */
const MAX_REASON_LENGTH = 2000;
const ELLIPSIS = "…";

export class AuditTrail {
  private readonly log: AuditLog;
  private readonly export: AuditExport | undefined;
  private readonly logger: Logger;
  private readonly now: () => number;
  private readonly appending = new Set<Promise<void>>();

  constructor(deps: AuditTrailDeps) {
    this.log = deps.log;
    this.export = deps.export;
    this.logger = deps.logger ?? silentLogger;
    this.now = deps.now ?? Date.now;
  }

  /** Logs the event and appends it to the audit log; resolves once the append is done or has failed (never rejects). */
  record(record: AuditRecord): Promise<void> {
    let entry: AuditEntry;
    try {
      entry = { ...record, at: record.at ?? this.now() };
      if (entry.reason !== undefined && entry.reason.length > MAX_REASON_LENGTH) {
        entry.reason = `${entry.reason.slice(0, MAX_REASON_LENGTH - ELLIPSIS.length)}${ELLIPSIS}`;
      }
      const { type, token, ...fields } = entry;
      // `token` is the token's name; the logger censors every field called token.
      this.logger.info({ event: type, ...fields, ...(token === undefined ? {} : { tokenName: token }) }, `audit: ${type}`);
      this.export?.write(entry);
    } catch (error) {
      this.logger.warn({ error }, "an audit event could not be recorded");
      return Promise.resolve();
    }
    const appended = this.append(entry);
    this.appending.add(appended);
    void appended.finally(() => this.appending.delete(appended));
    return appended;
  }

  /** Up to `query.limit` events, oldest first, and the cursor to read on from when there are more. */
  async read(query: AuditQuery): Promise<AuditPage> {
    const [events, dropped] = await Promise.all([query.limit <= 0 ? [] : this.log.read({ ...query, limit: query.limit + 1 }), this.log.drops()]);
    const told = dropped === undefined ? {} : { dropped };
    if (events.length <= query.limit) return { events, ...told };
    const page = events.slice(0, query.limit);
    return { events: page, next: page[page.length - 1]!.id, ...told };
  }

  /** Resolves once every append recorded so far has settled (at shutdown, before the log closes). */
  async idle(): Promise<void> {
    while (this.appending.size > 0) await Promise.all([...this.appending]);
  }

  private async append(entry: AuditEntry): Promise<void> {
    try {
      await this.log.append(entry);
    } catch (error) {
      this.logger.warn(
        { event: entry.type, requestId: entry.requestId, error },
        "an audit event was not appended to the audit log (it is in the relay's log only)",
      );
    }
  }
}

/** An event as `GET /v1/audit` shows it: the time in ISO 8601. */
export function toAuditView({ id, at, ...fields }: AuditEvent): AuditEventView {
  return { id, at: new Date(at).toISOString(), ...fields };
}
