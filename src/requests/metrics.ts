/**
 * What the service tells the relay's metrics (GET /metrics, src/http/metrics.ts)
 * of a request's life: the domain owns this narrow interface, so it never
 * imports the metrics library, and a service built without one counts nothing.
 */
import type { CreateLimit } from "./limits.js";
import type { RequestRecord } from "./model.js";

export interface RequestMetrics {
  /** A request was stored (not a repeated create that found it). Never throws or waits. */
  created(record: RequestRecord): void;
  /** A request left pending (as the store returned it), on this instance. Never throws or waits. */
  ended(record: RequestRecord): void;
  /** A create by the agent token `tokenName` was refused by a limit (./limits.ts). Never throws or waits. */
  limited(tokenName: string, limit: CreateLimit): void;
}

export const NO_METRICS: RequestMetrics = { created: () => undefined, ended: () => undefined, limited: () => undefined };

/**
 * Seconds from the request's message reaching Slack (`postedAt`) to its
 * answer; undefined for a request that ended otherwise or was never posted
 * (answered at once, by the relay).
 */
export function decisionSeconds(record: RequestRecord): number | undefined {
  if (record.status !== "answered" || record.postedAt === undefined || record.endedAt === undefined) return undefined;
  return Math.max(0, record.endedAt - record.postedAt) / 1000;
}
