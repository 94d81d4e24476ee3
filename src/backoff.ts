/**
 * Exponential backoff with "equal jitter", shared by every retry loop (Slack
 * Web API calls, callback deliveries) so callers that failed together are not
 * retried together.
 */

/** Delay (ms) before the next attempt after `attempts` failed ones: base · 2^(attempts−1), capped at `maxMs`, then 50–100 % of it. */
export function retryDelayMs(attempts: number, baseMs: number, maxMs: number, random: () => number): number {
  const capped = Math.min(maxMs, baseMs * 2 ** Math.min(Math.max(attempts - 1, 0), 40));
  return Math.round(capped / 2 + (capped / 2) * random());
}
