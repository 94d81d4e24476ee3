/**
 * What the relay does when an agent token runs away (issue 19): a create
 * past the token's pending cap (TooManyPendingError, counted in the store
 * with the create) or over its create rate (the HTTP layer's rate limit) is
 * refused, counted in the metrics every time, and written to the audit
 * trail and the log once a minute per token and limit, so an agent stuck in
 * a loop leaves a trace without flooding either.
 */
import type { Logger } from "../logger.js";
import { limitedEntry, type AuditRecorder } from "./audit-entries.js";
import type { RequestMetrics } from "./metrics.js";

/** The limits a create can hit, as the metrics label them. */
export type CreateLimit = "too_many_pending" | "rate_limited";

/** How often each token's refusals under one limit reach the audit trail and the log at most (ms). */
export const LIMITED_AUDIT_INTERVAL_MS = 60_000;

export interface CreateLimitsDeps {
  audit: AuditRecorder;
  metrics: RequestMetrics;
  logger: Logger;
  /** Unix time in milliseconds. */
  now: () => number;
}

export class CreateLimits {
  /** `<limit> <token>` → when its refusals were last written (Unix ms), and how many came since. */
  private readonly written = new Map<string, { at: number; since: number }>();

  constructor(private readonly deps: CreateLimitsDeps) {}

  /**
   * A create of `tokenName` was refused by `limit`; `requestId` names it
   * (the id it would have had, or the HTTP request's), `reason` says what
   * the limit was.
   */
  refused(tokenName: string, limit: CreateLimit, requestId: string, reason: string): void {
    const { audit, metrics, logger, now } = this.deps;
    metrics.limited(tokenName, limit);
    const key = `${limit} ${tokenName}`;
    const at = now();
    const last = this.written.get(key);
    if (last && at - last.at < LIMITED_AUDIT_INTERVAL_MS) {
      last.since += 1;
      return;
    }
    const more = last && last.since > 0 ? ` (and ${last.since} more refused in the minute before)` : "";
    this.written.set(key, { at, since: 0 });
    for (const [other, { at: written }] of this.written) if (at - written >= LIMITED_AUDIT_INTERVAL_MS) this.written.delete(other);
    audit.record(limitedEntry(tokenName, requestId, `${limit}: ${reason}${more}`, at));
    logger.warn({ token: tokenName, limit, reason }, "an agent token's create was refused by a limit");
  }
}
