/**
 * Long-polls held open on this instance, keyed by request id. The store's
 * "ended" notifications wake them (they then re-read the request); a request
 * that ends on this instance wakes them with the ended record itself, so the
 * waiting agent hears back without another store round trip.
 */
import type { RequestRecord } from "./model.js";

export interface Waiter {
  /** Resolves on the next wake-up for this id, after `ms`, or when `signal` aborts. */
  next(ms: number, signal?: AbortSignal): Promise<void>;
  /** The ended record a wake-up carried, if one did: final, so it needs no re-read. */
  readonly ended: RequestRecord | undefined;
  remove(): void;
}

export class Waiters {
  private readonly byId = new Map<string, Set<(record?: RequestRecord) => void>>();
  private count = 0;

  get size(): number {
    return this.count;
  }

  add(id: string): Waiter {
    let woken = false;
    let ended: RequestRecord | undefined;
    let release: (() => void) | undefined;
    const wake = (record?: RequestRecord) => {
      if (record) ended = record;
      woken = true;
      release?.();
    };
    let set = this.byId.get(id);
    if (!set) this.byId.set(id, (set = new Set()));
    set.add(wake);
    this.count += 1;
    let removed = false;
    return {
      get ended() {
        return ended;
      },
      next: (ms, signal) => {
        if (woken || ms <= 0 || signal?.aborted) {
          woken = false;
          return Promise.resolve();
        }
        return new Promise<void>((resolve) => {
          const timer = setTimeout(done, ms);
          const onAbort = () => done();
          signal?.addEventListener("abort", onAbort, { once: true });
          function done() {
            clearTimeout(timer);
            signal?.removeEventListener("abort", onAbort);
            release = undefined;
            woken = false;
            resolve();
          }
          release = done;
        });
      },
      remove: () => {
        if (removed) return;
        removed = true;
        this.count -= 1;
        const current = this.byId.get(id);
        current?.delete(wake);
        if (current?.size === 0) this.byId.delete(id);
      },
    };
  }

  /** Wakes every waiter of `id`; `record` is the request as it ended, when the caller has it. */
  wake(id: string, record?: RequestRecord): void {
    this.byId.get(id)?.forEach((wake) => wake(record));
  }

  wakeAll(): void {
    for (const set of this.byId.values()) set.forEach((wake) => wake());
  }
}
