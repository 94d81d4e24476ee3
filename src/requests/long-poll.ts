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
 *
 * A held long-poll is one `HeldPoll` object and the one promise its caller
 * got: it is its own registry entry, abort listener and timer argument, and
 * steps from read to park and back by callbacks, not as a suspended async
 * function (whose generator, register file, await reactions and closures
 * cost about 1 KB more per long-poll, held by the thousand).
 */
import { StoreUnavailableError } from "./errors.js";
import type { RequestView } from "../protocol/request-view.js";
import { toView, type RequestRecord } from "./model.js";
import { STORE_RETRY_INTERVAL_MS } from "./store.js";
import type { LeaveSignal, Waiter, Waiters } from "./waiters.js";

export interface LongPollDeps {
  waiters: Waiters;
  /** Reads the request as the service does (a pending one past its deadline is expired on the spot). */
  get: (id: string) => Promise<RequestRecord | undefined>;
  /** Unix time in milliseconds. */
  now: () => number;
  /** true once the service closed: every wait returns what it has. */
  closed: () => boolean;
}

export function holdUntilEnded(deps: LongPollDeps, id: string, waitMs: number, signal?: LeaveSignal): Promise<RequestRecord | undefined> {
  return new Promise((resolve, reject) => new HeldPoll(deps, id, deps.now() + waitMs, signal, resolve, reject).start());
}

type Settle = (record: RequestRecord | undefined) => void;

class HeldPoll implements Waiter {
  /** The ended record a wake-up carried, if one did: final, so it needs no re-read. */
  private ended: RequestRecord | undefined = undefined;
  /** Woken while not parked (a read in flight): the next park reads again at once. */
  private woken = false;
  /** Parked: waiting for a wake-up, its timer or the signal. */
  private parked = false;
  private timer: NodeJS.Timeout | undefined = undefined;
  /** Followed on every read: someone may give the request more time while it is held. */
  private expiresAt = 0;
  /** A few hundred bytes, unlike the record: what the poll answers if the store is still away when the wait ends. */
  private lastKnown: RequestView | undefined = undefined;
  private outage: StoreUnavailableError | undefined = undefined;

  constructor(
    private readonly deps: LongPollDeps,
    readonly id: string,
    private readonly deadline: number,
    private readonly signal: LeaveSignal | undefined,
    private readonly resolve: Settle,
    private readonly reject: (error: unknown) => void,
  ) {}

  start(): void {
    this.deps.waiters.add(this);
    this.deps.get(this.id).then(
      (record) => this.read(record),
      // The first read has nothing to fall back on: any failure ends the wait.
      (error: unknown) => this.fail(error),
    );
  }

  wake(record?: RequestRecord): void {
    if (record) this.ended = record;
    if (this.parked) this.unpark();
    else this.woken = true;
  }

  /** The abort listener. */
  handleEvent(): void {
    this.unpark();
  }

  /** @internal the timer's callback */
  unpark(): void {
    if (!this.parked) return;
    this.parked = false;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.signal?.removeEventListener("abort", this);
    this.reread();
  }

  private reread(): void {
    this.woken = false;
    if (this.ended) return this.read(this.ended);
    this.deps.get(this.id).then(
      (record) => this.read(record),
      (error: unknown) => {
        if (!(error instanceof StoreUnavailableError)) return this.fail(error);
        this.outage = error;
        this.park(undefined);
      },
    );
  }

  private read(record: RequestRecord | undefined): void {
    if (record?.status !== "pending") return this.settle(record);
    this.outage = undefined;
    this.expiresAt = record.expiresAt;
    this.lastKnown = toView(record);
    this.park(record);
  }

  /** Parks until the next wake-up, the wait's end or the request's expiry; `record` (just read) is answered if the wait is over. */
  private park(record: RequestRecord | undefined): void {
    const { now, closed } = this.deps;
    if (now() >= this.deadline || this.signal?.aborted || closed()) {
      const outage = this.outage;
      if (outage) return this.fail(new StoreUnavailableError(outage.reason, { cause: outage, lastKnown: this.lastKnown }));
      return this.settle(record);
    }
    const ms = Math.min(this.deadline, this.outage ? now() + STORE_RETRY_INTERVAL_MS : this.expiresAt) - now();
    if (this.woken || ms <= 0) return this.reread();
    this.parked = true;
    this.timer = setTimeout(timedOut, ms, this);
    this.signal?.addEventListener("abort", this);
  }

  private settle(record: RequestRecord | undefined): void {
    this.deps.waiters.remove(this);
    this.resolve(record);
  }

  private fail(error: unknown): void {
    this.deps.waiters.remove(this);
    this.reject(error);
  }
}

function timedOut(poll: HeldPoll): void {
  poll.unpark();
}
