/**
 * Which Slack Web API failures are worth retrying, and how long to wait.
 * The WebClient is built with `retries: 0` and `rejectRateLimitedCalls: true`
 * so every failure surfaces to the relay's own retries (poster.ts for posts,
 * the service's update outbox for message updates): transient ones (rate
 * limits, network, 5xx, Slack's own outages) are retried with exponential
 * backoff and jitter, never sooner than a 429's Retry-After; anything else is
 * Slack refusing for good.
 */
import { retryDelayMs } from "../protocol/timing.js";

/** Platform errors that mean "Slack had a problem, try again". */
export const TRANSIENT_PLATFORM_ERRORS: ReadonlySet<string> = new Set([
  "internal_error",
  "fatal_error",
  "service_unavailable",
  "request_timeout",
  "ratelimited",
]);

export type SlackFailure =
  /** `retryAfterMs`: what Slack asked us to wait (429 Retry-After), in milliseconds. */
  { kind: "transient"; code: string; retryAfterMs?: number } | { kind: "permanent"; code: string };

/**
 * Classifies an error thrown by @slack/web-api. Matches on the package's
 * string error codes rather than `instanceof`, so it holds across copies of
 * the package.
 */
export function classifySlackError(error: unknown): SlackFailure {
  const e = (typeof error === "object" && error !== null ? error : {}) as {
    code?: unknown;
    retryAfter?: unknown;
    statusCode?: unknown;
    data?: { error?: unknown };
  };
  switch (e.code) {
    case "slack_webapi_rate_limited_error": {
      const seconds = typeof e.retryAfter === "number" && e.retryAfter >= 0 ? e.retryAfter : 1;
      return { kind: "transient", code: "ratelimited", retryAfterMs: seconds * 1000 };
    }
    case "slack_webapi_request_error":
      return { kind: "transient", code: "request_error" };
    case "slack_webapi_http_error": {
      const status = typeof e.statusCode === "number" ? e.statusCode : 0;
      const transient = status >= 500 || status === 408 || status === 429;
      return { kind: transient ? "transient" : "permanent", code: `http_${status}` };
    }
    case "slack_webapi_platform_error": {
      const code = typeof e.data?.error === "string" ? e.data.error : "unknown_error";
      return { kind: TRANSIENT_PLATFORM_ERRORS.has(code) ? "transient" : "permanent", code };
    }
    default:
      // Not one of Slack's coded errors (e.g. a 429 without a readable Retry-After): retry; the deadline bounds it.
      return { kind: "transient", code: error instanceof Error ? error.name : "unknown_error" };
  }
}

export interface BackoffOptions {
  /** Returns a number in [0, 1); injectable for tests. */
  random?: () => number;
}

/** Delay before retry number `attempt` (1-based): 0.5 s doubling to 30 s, with jitter (src/protocol/timing.ts). */
export function backoffDelay(attempt: number, { random = Math.random }: BackoffOptions = {}): number {
  return retryDelayMs(attempt, 500, 30_000, random);
}

export const defaultSleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
