/**
 * The callback worker's sense of time: how long to wait before the next
 * attempt (exponential backoff with jitter, so receivers that failed together
 * are not retried together) and an idle wait that ends early on demand.
 */

export { retryDelayMs } from "../backoff.js";

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
