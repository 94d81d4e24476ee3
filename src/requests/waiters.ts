/**
 * Long-polls held open on this instance, keyed by request id. The store's
 * "ended" notifications wake them (they then re-read the request); a request
 * that ends on this instance wakes them with the ended record itself, so the
 * waiting agent hears back without another store round trip.
 *
 * Thousands may be held at once, so a waiter is one small object: it is its
 * own abort listener (`handleEvent`) and its timer's argument, so no closure
 * is made per waiter or per wait.
 */
import type { RequestRecord } from "./model.js";

/** What a wait watches to end early: an AbortSignal, or anything that tells "abort" the same way. */
export interface LeaveSignal {
  readonly aborted: boolean;
  addEventListener(type: "abort", listener: { handleEvent(): void }): void;
  removeEventListener(type: "abort", listener: { handleEvent(): void }): void;
}

export interface Waiter {
  /** Resolves on the next wake-up for this id, after `ms`, or when `signal` aborts. */
  next(ms: number, signal?: LeaveSignal): Promise<void>;
  /** The ended record a wake-up carried, if one did: final, so it needs no re-read. */
  readonly ended: RequestRecord | undefined;
  remove(): void;
}

export class Waiters {
  private readonly byId = new Map<string, Set<HeldWaiter>>();
  private count = 0;

  get size(): number {
    return this.count;
  }

  add(id: string): Waiter {
    const waiter = new HeldWaiter(this, id);
    let set = this.byId.get(id);
    if (!set) this.byId.set(id, (set = new Set()));
    set.add(waiter);
    this.count += 1;
    return waiter;
  }

  /** Wakes every waiter of `id`; `record` is the request as it ended, when the caller has it. */
  wake(id: string, record?: RequestRecord): void {
    this.byId.get(id)?.forEach((waiter) => waiter.wake(record));
  }

  wakeAll(): void {
    for (const set of this.byId.values()) set.forEach((waiter) => waiter.wake());
  }

  /** @internal HeldWaiter.remove */
  forget(waiter: HeldWaiter): void {
    this.count -= 1;
    const set = this.byId.get(waiter.id);
    set?.delete(waiter);
    if (set?.size === 0) this.byId.delete(waiter.id);
  }
}

class HeldWaiter implements Waiter {
  ended: RequestRecord | undefined = undefined;
  private woken = false;
  private removed = false;
  /** Set while a `next` is pending. */
  private resolve: (() => void) | undefined = undefined;
  private timer: NodeJS.Timeout | undefined = undefined;
  private signal: LeaveSignal | undefined = undefined;

  constructor(
    private readonly owner: Waiters,
    readonly id: string,
  ) {}

  wake(record?: RequestRecord): void {
    if (record) this.ended = record;
    this.woken = true;
    this.done();
  }

  next(ms: number, signal?: LeaveSignal): Promise<void> {
    if (this.woken || ms <= 0 || signal?.aborted) {
      this.woken = false;
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => {
      this.resolve = resolve;
      this.timer = setTimeout(timedOut, ms, this);
      if (signal) {
        this.signal = signal;
        signal.addEventListener("abort", this);
      }
    });
  }

  /** The abort listener. */
  handleEvent(): void {
    this.done();
  }

  /** Ends the pending `next`, if one is. */
  done(): void {
    const resolve = this.resolve;
    if (!resolve) return;
    clearTimeout(this.timer);
    this.signal?.removeEventListener("abort", this);
    this.resolve = this.timer = this.signal = undefined;
    this.woken = false;
    resolve();
  }

  remove(): void {
    if (this.removed) return;
    this.removed = true;
    this.owner.forget(this);
  }
}

function timedOut(waiter: HeldWaiter): void {
  waiter.done();
}
