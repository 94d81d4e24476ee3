/**
 * Holding a long-poll (`?wait=`, the client's `wait`, a held hook call)
 * until its request is no longer pending, its wait runs out or its caller
 * leaves. It subscribes before it reads, so an answer landing in between is
 * never missed, and holds no record while parked: thousands may wait at once.
 *
 * Store outages: the first read fails at once (StoreUnavailableError,
 * nothing is known). Once holding, a failed re-read does not end the wait:
 * it reads again every STORE_RETRY_INTERVAL_MS until the wait ends; if the
 * store is still unavailable then, it throws StoreUnavailableError carrying
 * what it last knew (the request pending, as a wait that ran out answers)
 * rather than guess. It never holds past `waitMs` plus one bounded store call.
 */
import { StoreUnavailableError } from "./errors.js";
import { toView, type RequestRecord } from "./model.js";
import { STORE_RETRY_INTERVAL_MS } from "./store.js";
import type { LeaveSignal, Waiters } from "./waiters.js";

export interface LongPollDeps {
  waiters: Waiters;
  /** Reads the request as the service does (a pending one past its deadline is expired on the spot). */
  get: (id: string) => Promise<RequestRecord | undefined>;
  /** Unix time in milliseconds. */
  now: () => number;
  /** true once the service closed: every wait returns what it has. */
  closed: () => boolean;
}

export async function holdUntilEnded(deps: LongPollDeps, id: string, waitMs: number, signal?: LeaveSignal): Promise<RequestRecord | undefined> {
  const { waiters, get, now, closed } = deps;
  const deadline = now() + waitMs;
  const waiter = waiters.add(id);
  try {
    let record = await get(id);
    if (record?.status !== "pending") return record;
    // Followed on every read: someone may give the request more time while it is held.
    let { expiresAt } = record;
    // A few hundred bytes, unlike the record: what the poll answers if the store is still away when the wait ends.
    let lastKnown = toView(record);
    let outage: StoreUnavailableError | undefined;
    while (now() < deadline && !signal?.aborted && !closed()) {
      const until = Math.min(deadline, outage ? now() + STORE_RETRY_INTERVAL_MS : expiresAt);
      record = undefined;
      await waiter.next(until - now(), signal);
      try {
        record = waiter.ended ?? (await get(id));
        outage = undefined;
      } catch (error) {
        if (!(error instanceof StoreUnavailableError)) throw error;
        outage = error;
        continue;
      }
      if (record?.status !== "pending") return record;
      expiresAt = record.expiresAt;
      lastKnown = toView(record);
    }
    if (outage) throw new StoreUnavailableError(outage.reason, { cause: outage, lastKnown });
    return record;
  } finally {
    waiter.remove();
  }
}
