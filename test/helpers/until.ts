/**
 * The one way tests and the bench wait for something that happens on its own
 * time (a held call, a post, a reconnect): poll `check` every 5 ms until it
 * holds, or fail naming what was awaited. Waiting on a condition instead of
 * sleeping keeps tests fast on a quiet machine and patient on a busy one.
 */

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Resolves once `check` returns (or resolves to) true, checking every
 * `intervalMs` milliseconds; throws after `timeoutMs` milliseconds, naming
 * `what` (a string, or a function called then to say what was seen). An
 * error `check` throws ends the wait with that error.
 */
export async function until(
  check: () => boolean | Promise<boolean>,
  timeoutMs = 5000,
  what: string | (() => string) = "condition",
  intervalMs = 5,
): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await check())) {
    if (performance.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${typeof what === "function" ? what() : what}`);
    await sleep(intervalMs);
  }
}
