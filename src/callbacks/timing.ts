/**
 * The callback worker's sense of time: how long to wait before the next
 * attempt (exponential backoff with jitter, so receivers that failed together
 * are not retried together) and an idle wait that ends early on demand.
 */

/** Delay (ms) before the next attempt after `attempts` failed ones: base · 2^(attempts−1), capped at `maxMs`, then 50–100 % of it. */
export function retryDelayMs(attempts: number, baseMs: number, maxMs: number, random: () => number): number {
  const capped = Math.min(maxMs, baseMs * 2 ** Math.min(Math.max(attempts - 1, 0), 40));
  return Math.round(capped / 2 + (capped / 2) * random());
}

/** Waits `ms`, or less when `signal` aborts; never rejects and never keeps the process alive. */
export function sleepUnlessAborted(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    const timer = setTimeout(done, ms);
    timer.unref();
    signal.addEventListener("abort", done, { once: true });
    if (signal.aborted) done();
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
  });
}
