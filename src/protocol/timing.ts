/**
 * Waiting well, for every retry loop and every bounded wait in the relay and
 * the client library: exponential backoff with "equal jitter" (so callers
 * that failed together are not retried together) and a race of a task
 * against a deadline or an abort. Here, with the wire contract, because the
 * client library may import nothing of the server.
 */

/** Delay (ms) before the next attempt after `attempts` failed ones: base · 2^(attempts−1), capped at `maxMs`, then 50–100 % of it. */
export function retryDelayMs(attempts: number, baseMs: number, maxMs: number, random: () => number): number {
  const capped = Math.min(maxMs, baseMs * 2 ** Math.min(Math.max(attempts - 1, 0), 40));
  return Math.round(capped / 2 + (capped / 2) * random());
}

/** Longest delay a Backoff gives, whatever the Retry-After (ms). */
const MAX_BACKOFF_MS = 60_000;

/** The retryDelayMs sequence of one retry loop: counts its failures, honours a Retry-After. */
export class Backoff {
  private failures = 0;
  constructor(
    private readonly initialMs: number,
    private readonly maxMs: number,
    private readonly random: () => number,
  ) {}

  /** The delay before the next retry; at least `floorMs` (a Retry-After), never above a minute. */
  next(floorMs = 0): number {
    this.failures += 1;
    return Math.min(MAX_BACKOFF_MS, Math.max(floorMs, retryDelayMs(this.failures, this.initialMs, this.maxMs, this.random)));
  }

  reset(): void {
    this.failures = 0;
  }
}

export interface Cutoff {
  /** Give up on the task after this many milliseconds. */
  ms?: number;
  /** Give up on the task as soon as this aborts. */
  signal?: AbortSignal | undefined;
}

/**
 * `task`'s outcome, unless the cutoff comes first: then what `early` returns
 * (or throws). The task itself runs on; its timer and listener are cleared
 * either way.
 */
export function settleBefore<T>(task: Promise<T>, cutoff: Cutoff, early: () => T): Promise<T> {
  const { ms, signal } = cutoff;
  if (ms === undefined && signal === undefined) return task;
  return new Promise<T>((resolve, reject) => {
    let timer: NodeJS.Timeout | undefined;
    const stop = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", cut);
    };
    function cut() {
      stop();
      try {
        resolve(early());
      } catch (error) {
        reject(error);
      }
    }
    if (signal?.aborted) return cut();
    signal?.addEventListener("abort", cut, { once: true });
    if (ms !== undefined) timer = setTimeout(cut, ms);
    task.then(
      (value) => {
        stop();
        resolve(value);
      },
      (error: unknown) => {
        stop();
        reject(error);
      },
    );
  });
}
