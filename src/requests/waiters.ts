/**
 * Long-polls held open on this instance, keyed by request id. The store's
 * "ended" notifications wake them (they then re-read the request); a request
 * that ends on this instance wakes them with the ended record itself, so the
 * waiting agent hears back without another store round trip.
 *
 * Thousands may be held at once, so the registry keeps the waiter itself
 * under its id, and an array only for an id more than one waits on (most
 * have one): no Set per request.
 */
import type { RequestRecord } from "./model.js";

/** What a wait watches to end early: an AbortSignal, or anything that tells "abort" the same way. */
export interface LeaveSignal {
  readonly aborted: boolean;
  addEventListener(type: "abort", listener: { handleEvent(): void }): void;
  removeEventListener(type: "abort", listener: { handleEvent(): void }): void;
}

/** A held long-poll as the registry sees it (./long-poll.ts). */
export interface Waiter {
  readonly id: string;
  /** The request may have ended; `record` is the request as it ended, when the caller has it. */
  wake(record?: RequestRecord): void;
}

export class Waiters {
  private readonly byId = new Map<string, Waiter | Waiter[]>();
  private count = 0;

  get size(): number {
    return this.count;
  }

  add(waiter: Waiter): void {
    const held = this.byId.get(waiter.id);
    if (held === undefined) this.byId.set(waiter.id, waiter);
    else if (Array.isArray(held)) held.push(waiter);
    else this.byId.set(waiter.id, [held, waiter]);
    this.count += 1;
  }

  /** Forgets `waiter`; a no-op when it is not held. */
  remove(waiter: Waiter): void {
    const held = this.byId.get(waiter.id);
    if (held === waiter) this.byId.delete(waiter.id);
    else if (Array.isArray(held) && held.includes(waiter)) {
      if (held.length === 2) this.byId.set(waiter.id, held[0] === waiter ? held[1]! : held[0]!);
      else held.splice(held.indexOf(waiter), 1);
    } else return;
    this.count -= 1;
  }

  /** Wakes every waiter of `id`; `record` is the request as it ended, when the caller has it. */
  wake(id: string, record?: RequestRecord): void {
    const held = this.byId.get(id);
    // A copy: a woken waiter may end, and leave the registry, while this goes on.
    if (Array.isArray(held)) for (const waiter of [...held]) waiter.wake(record);
    else held?.wake(record);
  }

  wakeAll(): void {
    for (const id of [...this.byId.keys()]) this.wake(id);
  }
}
