/**
 * What the service tells the relay's metrics (GET /metrics, src/http/metrics.ts)
 * of a request's life: the domain owns this narrow interface, so it never
 * imports the metrics library, and a service built without one counts nothing.
 */
import type { CreateLimit } from "./limits.js";
import type { RequestRecord } from "./model.js";
import type { QueueName } from "./store.js";

export interface RequestMetrics {
  /** A request was stored (not a repeated create that found it). Never throws or waits. */
  created(record: RequestRecord): void;
  /** A request left pending (as the store returned it), on this instance. Never throws or waits. */
  ended(record: RequestRecord): void;
  /** A create by the agent token `tokenName` was refused by a limit (./limits.ts). Never throws or waits. */
  limited(tokenName: string, limit: CreateLimit): void;
}

export const NO_METRICS: RequestMetrics = { created: () => undefined, ended: () => undefined, limited: () => undefined };

/** What became of an attempt at a leased queue's entry (./queue-worker.ts). */
export const QUEUE_OUTCOMES = ["done", "retried", "dropped", "released"] as const;
export type QueueOutcome = (typeof QUEUE_OUTCOMES)[number];

export interface QueueMetrics {
  /** An attempt at an entry of `queue` settled as `outcome`. Never throws or waits. */
  handled(queue: QueueName, outcome: QueueOutcome): void;
}

export const NO_QUEUE_METRICS: QueueMetrics = { handled: () => undefined };

/**
 * Seconds from the request's message reaching Slack (`postedAt`) to its
 * answer; undefined for a request that ended otherwise or was never posted
 * (answered at once, by the relay).
 */
export function decisionSeconds(record: RequestRecord): number | undefined {
  if (record.status !== "answered" || record.postedAt === undefined || record.endedAt === undefined) return undefined;
  return Math.max(0, record.endedAt - record.postedAt) / 1000;
}
