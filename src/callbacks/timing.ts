/**
 * The callback worker's idle wait, which ends early on demand. (Its retry
 * delays are the shared backoff, src/protocol/timing.ts.)
 */

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
