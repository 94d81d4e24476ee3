/**
 * One worker for every leased queue (./store.ts QueueName): claim what is
 * due, hand each entry to its queue's handler, then complete it, or retry it
 * after Slack's Retry-After or a growing backoff, whichever is longer. A
 * claim is a lease, so exactly one instance works on an entry at a time and
 * one that dies mid-work leaves it to be claimed again once the lease runs
 * out; while a handler runs, the worker renews its lease every third of it,
 * so a slow handler (a post waiting for its channel's turn) is never taken
 * over, and a renewal that finds the entry gone (completed elsewhere, or
 * taken out by the step that ended its request) aborts the handler's signal.
 *
 * Each queue runs its own loop: a round claims up to `batchSize` entries,
 * the next one follows at once when the round was full or the queue was
 * kicked (`kick`), else after `pollIntervalMs`. A store outage pauses every
 * loop of the worker and is logged once when it starts and once when it
 * ends (./outage-log.ts); a claim whose outcome could not be recorded comes
 * back after its lease, so nothing is lost (at worst done twice).
 *
 * What a handler's attempt comes to (Handled), and what a thrown error
 * means: TransientDeliveryError → retry (its Retry-After honoured),
 * PermanentDeliveryError → given up, StoreUnavailableError → left to its
 * lease, anything else → retried or given up as the handler says
 * (`otherErrors`).
 */
import type { Logger } from "../logger.js";
import { retryDelayMs } from "../protocol/timing.js";
import { PermanentDeliveryError, TransientDeliveryError } from "./delivery.js";
import { StoreUnavailableError } from "./errors.js";
import { NO_QUEUE_METRICS, type QueueMetrics, type QueueOutcome } from "./metrics.js";
import type { OutageLog } from "./outage-log.js";
import type { ClaimedEntry, QueueName, RequestStore } from "./store.js";

type LogFields = Record<string, unknown>;

/** What one attempt at an entry came to. */
export type Handled =
  /** Done with: the entry is completed. */
  | { outcome: "done" }
  /**
   * Not to be done (its request is gone or ended, Slack refused it for
   * good, …): the entry is completed and `why` logged, as a warning
   * ("<name> given up") unless `expected` (then "<name> not sent", info).
   */
  | { outcome: "skipped"; why: string; expected?: boolean; fields?: LogFields }
  /**
   * Try again later: after `retryAfterMs` (Slack's Retry-After) or the
   * backoff, whichever is longer; given up instead when that is past
   * `giveUpAt` (Unix ms).
   */
  | { outcome: "retry"; reason: string; retryAfterMs?: number; giveUpAt?: number; giveUpWhy?: string; fields?: LogFields }
  /** Stopped mid-way (the worker stops): due again at once, the attempt not counted. */
  | { outcome: "released" }
  /** The handler's own store step already settled the entry (posting: the message recorded, or the request ended). */
  | { outcome: "settled" }
  /** Left as claimed: due again once its lease runs out (another step takes it out meanwhile, or this instance is at it already). */
  | { outcome: "left" };

/** What a handler gets with each entry. */
export interface Work {
  /** Aborts when the worker stops or the entry's lease is lost. */
  signal: AbortSignal;
  /** Renews the lease from `at` (Unix ms, default now); false once the entry is no longer queued. Never rejects. */
  renew(at?: number): Promise<boolean>;
}

export interface QueueHandler<Hint = never> {
  readonly queue: QueueName;
  /** What an entry is, in the log: "callback", "reminder", … */
  readonly name: string;
  /** Milliseconds a claim keeps other instances off an entry: longer than one attempt usually takes. */
  readonly leaseMs: number;
  /** Entries claimed per round. */
  readonly batchSize: number;
  /** The first retry's delay (ms), doubled for each later one up to `maxMs`, with jitter. */
  readonly backoff: { baseMs: number; maxMs: number };
  /** Entries of one round handled side by side (true) or one after another (false). */
  readonly parallel: boolean;
  /** What an error that is neither Slack's nor the store's comes to. */
  readonly otherErrors: "retry" | "give up";
  /**
   * When the worker starts renewing the lease of an entry in hand: at once,
   * or from the handler's first own `renew` (a post renews as it joins its
   * channel's line: one that never gets that far is as good as dead).
   */
  readonly heartbeat: "at once" | "once renewed";
  /** Orders one round's claims (e.g. a request's thread reply before its DM); default: as claimed. */
  arrange?(entries: ClaimedEntry[]): ClaimedEntry[];
  /** One attempt at `entry`; `hint` is what the caller of `QueueWorker.run` already knows of it. */
  handle(entry: ClaimedEntry, work: Work, hint?: Hint): Promise<Handled>;
}

/** What one round did with the entries it claimed. */
export type RoundResult = Record<QueueOutcome, number>;

const emptyRound = (): RoundResult => ({ done: 0, retried: 0, dropped: 0, released: 0 });

export interface QueueWorkerDeps {
  store: Pick<RequestStore, "claim" | "retry" | "complete">;
  logger: Logger;
  /** Unix time in milliseconds. */
  now: () => number;
  /** Logs a store outage once for every loop that meets it. */
  outage: OutageLog;
  /** In [0, 1), for the backoff's jitter. */
  random?: () => number;
  metrics?: QueueMetrics;
  /** Milliseconds between rounds of a queue with nothing due. */
  pollIntervalMs?: number;
}

interface Loop {
  handler: QueueHandler<unknown>;
  nap: AbortController | undefined;
  kicked: boolean;
  done: Promise<void>;
}

export class QueueWorker {
  private readonly handlers = new Map<QueueName, QueueHandler<unknown>>();
  private readonly random: () => number;
  private readonly metrics: QueueMetrics;
  private running: { stop: AbortController; loops: Loop[] } | undefined;
  /** Attempts in flight (rounds and `run`), so `stop` and `idle` wait for them. */
  private readonly inFlight = new Set<Promise<unknown>>();
  /** Aborted by `stop`: every attempt in flight is told to let go. */
  private stopping = new AbortController();

  constructor(private readonly deps: QueueWorkerDeps) {
    this.random = deps.random ?? Math.random;
    this.metrics = deps.metrics ?? NO_QUEUE_METRICS;
  }

  /** Adds the handler of one queue (one per queue). */
  add<Hint>(handler: QueueHandler<Hint>): void {
    if (this.handlers.has(handler.queue)) throw new Error(`the ${handler.queue} queue has a handler already`);
    if (!(handler.leaseMs >= 3)) throw new Error("leaseMs must be at least 3");
    this.handlers.set(handler.queue, handler as QueueHandler<unknown>);
  }

  /** Starts every queue's loop, each looking every `pollIntervalMs` when nothing is due; a second start does nothing. */
  start(pollIntervalMs = this.deps.pollIntervalMs ?? 1000): void {
    if (this.running) return;
    this.stopping = new AbortController();
    const stop = new AbortController();
    const loops = [...this.handlers.values()].map((handler) => {
      const loop: Loop = { handler, nap: undefined, kicked: false, done: Promise.resolve() };
      loop.done = this.loop(loop, stop.signal, pollIntervalMs);
      return loop;
    });
    this.running = { stop, loops };
  }

  /** Looks at `queue` again at once (something was just queued there). */
  kick(queue: QueueName): void {
    const loop = this.running?.loops.find(({ handler }) => handler.queue === queue);
    if (!loop) return;
    loop.kicked = true;
    loop.nap?.abort();
  }

  /**
   * Stops every loop (nothing more is claimed) and tells every attempt in flight to let go, at once or, with
   * `graceMs`, once that long has passed and it is still running (one about to finish is not thrown away, to be
   * made again elsewhere); resolves once they all have settled.
   */
  async stop(graceMs = 0): Promise<void> {
    const running = this.running;
    this.running = undefined;
    if (running) {
      running.stop.abort();
      for (const loop of running.loops) loop.nap?.abort();
    }
    if (graceMs > 0) await Promise.race([this.idle(), pause(graceMs, this.stopping.signal)]);
    this.stopping.abort();
    if (running) await Promise.all(running.loops.map((loop) => loop.done));
    await this.idle();
  }

  /** Resolves once every attempt started so far has settled. */
  async idle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  /** Claims what is due on `queue` and makes one attempt at each entry. */
  async runOnce(queue: QueueName): Promise<RoundResult> {
    const handler = this.handlerOf(queue);
    const claimed = await this.deps.store.claim(queue, this.deps.now(), handler.leaseMs, handler.batchSize);
    const entries = handler.arrange ? handler.arrange(claimed) : claimed;
    const result = emptyRound();
    const count = (fate: QueueOutcome | undefined) => {
      if (fate) result[fate] += 1;
    };
    if (handler.parallel) {
      (await Promise.all(entries.map((entry) => this.attempt(handler, entry)))).forEach(count);
    } else {
      for (const entry of entries) count(await this.attempt(handler, entry));
    }
    return result;
  }

  /** Rounds of `queue` until one finds nothing due (for tests and tools); the totals. */
  async drain(queue: QueueName): Promise<RoundResult> {
    const total = emptyRound();
    for (;;) {
      const round = await this.runOnce(queue);
      for (const fate of Object.keys(total) as QueueOutcome[]) total[fate] += round[fate];
      if (round.done + round.retried + round.dropped + round.released === 0) return total;
    }
  }

  /**
   * One attempt at an entry this instance holds without a claim (it just
   * queued it, leased to itself: a new request's post, an update of a
   * request it ended), with what it knows of it (`hint`); settled as a
   * claimed one is. Resolves to what became of it (undefined: left to its lease).
   */
  run<Hint>(queue: QueueName, entry: ClaimedEntry, hint?: Hint): Promise<QueueOutcome | undefined> {
    return this.attempt(this.handlerOf(queue), entry, hint);
  }

  private handlerOf(queue: QueueName): QueueHandler<unknown> {
    const handler = this.handlers.get(queue);
    if (!handler) throw new Error(`the ${queue} queue has no handler`);
    return handler;
  }

  private async loop(loop: Loop, signal: AbortSignal, pollIntervalMs: number): Promise<void> {
    const { outage } = this.deps;
    while (!signal.aborted) {
      loop.kicked = false;
      let busy = false;
      try {
        const round = await this.runOnce(loop.handler.queue);
        busy = round.done + round.retried + round.dropped >= loop.handler.batchSize;
        outage.ok();
      } catch (error) {
        outage.failed(error, `${loop.handler.queue} queue`);
      }
      if (busy || loop.kicked || signal.aborted) continue;
      loop.nap = new AbortController();
      await pause(pollIntervalMs, loop.nap.signal);
      loop.nap = undefined;
    }
  }

  /** One attempt, its lease renewed meanwhile, then settled; never throws (a lost claim comes back after its lease). */
  private attempt(handler: QueueHandler<unknown>, entry: ClaimedEntry, hint?: unknown): Promise<QueueOutcome | undefined> {
    const task = this.settle(handler, entry, hint);
    this.inFlight.add(task);
    void task.finally(() => this.inFlight.delete(task));
    return task;
  }

  private async settle(handler: QueueHandler<unknown>, entry: ClaimedEntry, hint: unknown): Promise<QueueOutcome | undefined> {
    const { logger } = this.deps;
    const fields = { queue: handler.queue, entry: entry.key };
    try {
      const handled = await this.withLease(handler, entry, (work) => handler.handle(entry, work, hint));
      const fate = await this.apply(handler, entry, handled);
      if (fate) this.metrics.handled(handler.queue, fate);
      return fate;
    } catch (error) {
      const level = error instanceof StoreUnavailableError ? "warn" : "error";
      logger[level]({ ...fields, error }, `${handler.name} attempt failed; the claim comes back after its lease`);
      return undefined;
    }
  }

  /** Runs `attempt` with its lease renewed every third of it; after it settles, no renewal is in flight. */
  private async withLease(handler: QueueHandler<unknown>, entry: ClaimedEntry, attempt: (work: Work) => Promise<Handled>): Promise<Handled> {
    const { store, now, logger } = this.deps;
    const lost = new AbortController();
    const signal = AbortSignal.any([lost.signal, this.stopping.signal]);
    let renewing: Promise<boolean> = Promise.resolve(true);
    let heartbeat: NodeJS.Timeout | undefined;
    const beat = () => {
      heartbeat ??= setInterval(() => void renewal(), Math.floor(handler.leaseMs / 3));
      heartbeat.unref();
    };
    const renewal = (at = now()): Promise<boolean> =>
      (renewing = store.retry(handler.queue, entry.key, at + handler.leaseMs, entry.attempts).then(
        (queued) => {
          if (!queued) lost.abort();
          return queued;
        },
        (error: unknown) => {
          logger.warn({ queue: handler.queue, entry: entry.key, error }, "lease renewal failed; working on");
          return true;
        },
      ));
    const renew = (at?: number) => {
      beat();
      return renewal(at);
    };
    if (handler.heartbeat === "at once") beat();
    try {
      return await attempt({ signal, renew }).catch((error: unknown) => this.fromError(handler, error));
    } finally {
      clearInterval(heartbeat);
      await renewing;
    }
  }

  private fromError(handler: QueueHandler<unknown>, error: unknown): Handled {
    if (error instanceof StoreUnavailableError) throw error;
    if (error instanceof TransientDeliveryError) {
      return { outcome: "retry", reason: error.reason, ...(error.retryAfterMs === undefined ? {} : { retryAfterMs: error.retryAfterMs }) };
    }
    if (error instanceof PermanentDeliveryError) return { outcome: "skipped", why: `Slack refused it for good: ${error.reason}` };
    if (handler.otherErrors === "give up") return { outcome: "skipped", why: String(error) };
    this.deps.logger.error({ queue: handler.queue, error }, `${handler.name} failed`);
    return { outcome: "retry", reason: String(error) };
  }

  /** Completes or requeues the entry as `handled` says; what it came to. */
  private async apply(handler: QueueHandler<unknown>, entry: ClaimedEntry, handled: Handled): Promise<QueueOutcome | undefined> {
    const { store, now, logger } = this.deps;
    const { queue } = handler;
    const fields = { queue, id: entry.id, entry: entry.key, ...("fields" in handled ? handled.fields : {}) };
    switch (handled.outcome) {
      case "done":
        await store.complete(queue, entry.key);
        return "done";
      case "settled":
        return "done";
      case "left":
        return undefined;
      case "skipped":
        await store.complete(queue, entry.key);
        if (handled.expected) logger.info({ ...fields, why: handled.why }, `${handler.name} not sent`);
        else logger.warn({ ...fields, why: handled.why }, `${handler.name} given up`);
        return "dropped";
      case "released":
        await store.retry(queue, entry.key, now(), entry.attempts);
        return "released";
      case "retry": {
        const attempts = entry.attempts + 1;
        const backoff = retryDelayMs(attempts, handler.backoff.baseMs, handler.backoff.maxMs, this.random);
        const delayMs = Math.max(handled.retryAfterMs ?? 0, backoff);
        const nextAt = now() + delayMs;
        if (handled.giveUpAt !== undefined && nextAt > handled.giveUpAt) {
          await store.complete(queue, entry.key);
          logger.warn({ ...fields, reason: handled.reason, attempts, why: handled.giveUpWhy }, `${handler.name} given up`);
          return "dropped";
        }
        await store.retry(queue, entry.key, nextAt, attempts);
        logger.info({ ...fields, reason: handled.reason, attempts, retryInMs: delayMs }, `${handler.name} failed, will retry`);
        return "retried";
      }
    }
  }
}

/** Resolves after `ms`, or at once when `signal` aborts; never rejects and never keeps the process alive. */
export function pause(ms: number, signal: AbortSignal): Promise<void> {
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

/** `entries` grouped by request, requests in the order claimed, each request's entries by `rank` (for a handler's `arrange`). */
export function byRequest(entries: ClaimedEntry[], rank: (entry: ClaimedEntry) => number): ClaimedEntry[] {
  const first = new Map<string, number>();
  for (const { id } of entries) if (!first.has(id)) first.set(id, first.size);
  return [...entries].sort((a, b) => first.get(a.id)! - first.get(b.id)! || rank(a) - rank(b));
}
