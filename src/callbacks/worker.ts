/**
 * Delivers the callbacks the store queues when a request with a `callbackUrl`
 * ends: the `callbacks` queue's handler, run by the queue worker
 * (src/requests/queue-worker.ts: claims, leases, retries, stop). Every relay
 * instance runs one; a callback that an instance was working on when it died
 * is claimed again once the lease runs out. Delivery is at least once:
 * receivers dedupe on X-Relay-Request-Id.
 *
 * A 2xx completes the callback. Anything else is retried with exponential
 * backoff and jitter until `giveUpAfterMs` after the request ended (or until
 * the store forgets the request), then given up with a warning. An ended
 * request wakes the worker, so a callback goes out at once, not at the next
 * poll. An instance that stops lets a delivery in flight finish (within
 * `stopGraceMs`) instead of throwing it away to be made again elsewhere.
 */
import { silentLogger, type Logger } from "../logger.js";
import { callbackHostAllowed, hostOf } from "../requests/callback-hosts.js";
import type { QueueMetrics } from "../requests/metrics.js";
import { toView, type RequestRecord } from "../requests/model.js";
import { OutageLog } from "../requests/outage-log.js";
import { QueueWorker, type Handled, type QueueHandler, type RoundResult as QueueRound, type Work } from "../requests/queue-worker.js";
import type { ClaimedEntry, RequestStore } from "../requests/store.js";
import { attemptCallback, type FetchLike } from "./deliver.js";

export type CallbackStore = Pick<RequestStore, "get" | "claim" | "retry" | "complete" | "onEnded">;

export interface CallbackWorkerOptions {
  store: CallbackStore;
  /** Secret of the agent token with this name; undefined when it is no longer configured. */
  tokenSecret: (tokenName: string) => string | undefined;
  /** RELAY_CALLBACK_HOSTS, checked again at delivery (the list may have shrunk); undefined: any host. */
  callbackHosts?: readonly string[];
  fetch?: FetchLike;
  /** Unix time in milliseconds. */
  now?: () => number;
  /** In [0, 1), for the jitter. */
  random?: () => number;
  logger?: Logger;
  metrics?: QueueMetrics;
  /** Milliseconds between looks at the queue when nothing is due (ended requests also wake the worker). */
  pollIntervalMs?: number;
  /** Milliseconds one POST may take. */
  timeoutMs?: number;
  /** Milliseconds a claim keeps other instances off a callback; longer than `timeoutMs`. */
  leaseMs?: number;
  /** Callbacks claimed, and delivered side by side, per round. */
  batchSize?: number;
  /** Milliseconds before the first retry; doubled for each later one. */
  backoffBaseMs?: number;
  /** Longest wait between two attempts (ms). */
  backoffMaxMs?: number;
  /** Milliseconds after the request ended when delivery is given up. */
  giveUpAfterMs?: number;
  /**
   * Milliseconds a delivery in flight when the worker stops may take to finish before it is stopped and handed
   * back (due at once, for another instance); default 3000.
   */
  stopGraceMs?: number;
}

/** What one round did with the callbacks it claimed. */
export interface RoundResult {
  delivered: number;
  retried: number;
  /** Given up, or not deliverable at all (request gone, host or token no longer allowed). */
  dropped: number;
  /** Handed back because the worker stopped mid-attempt. */
  released: number;
}

/** The `callbacks` queue's handler: one POST of a request's final state. */
export class CallbackDelivery implements QueueHandler {
  readonly queue = "callbacks";
  readonly name = "callback";
  readonly leaseMs: number;
  readonly batchSize: number;
  readonly backoff: { baseMs: number; maxMs: number };
  readonly parallel = true;
  readonly otherErrors = "retry";
  readonly heartbeat = "at once";
  private readonly timeoutMs: number;
  private readonly giveUpAfterMs: number;

  constructor(private readonly options: CallbackWorkerOptions & { now: () => number; logger: Logger }) {
    this.timeoutMs = options.timeoutMs ?? 10_000;
    this.leaseMs = options.leaseMs ?? 60_000;
    this.batchSize = options.batchSize ?? 10;
    this.backoff = { baseMs: options.backoffBaseMs ?? 1000, maxMs: options.backoffMaxMs ?? 5 * 60_000 };
    this.giveUpAfterMs = options.giveUpAfterMs ?? 6 * 3600_000;
    if (this.leaseMs <= this.timeoutMs) throw new Error("leaseMs must be longer than timeoutMs");
    if (!(this.backoff.baseMs >= 1)) throw new Error("backoffBaseMs must be at least 1");
  }

  async handle({ id, attempts }: ClaimedEntry, { signal }: Work): Promise<Handled> {
    const { store, now, logger } = this.options;
    const record = await store.get(id);
    if (!record) return { outcome: "skipped", why: "the request is no longer stored", fields: { id } };
    const target = this.target(record);
    if (typeof target === "string") return { outcome: "skipped", why: target, fields: { id } };
    const fields = { id, host: hostOf(target.url), attempt: attempts + 1 };
    const outcome = await attemptCallback(
      { url: target.url, requestId: record.id, body: JSON.stringify(toView(record)), token: target.token, now: now() },
      { fetch: this.options.fetch ?? ((url, init) => fetch(url, init)), timeoutMs: this.timeoutMs, signal },
    );
    if (outcome.delivered) {
      logger.info({ ...fields, status: outcome.status }, "callback delivered");
      return { outcome: "done" };
    }
    if (outcome.stopped) return { outcome: "released" };
    return {
      outcome: "retry",
      reason: outcome.reason,
      giveUpAt: (record.endedAt ?? record.createdAt) + this.giveUpAfterMs,
      giveUpWhy: `not delivered within ${this.giveUpAfterMs} ms of the end`,
      fields: { ...fields, ...(outcome.status === undefined ? {} : { status: outcome.status }) },
    };
  }

  /** Where and with which secret the request's callback goes, or why it cannot go at all. */
  private target(record: RequestRecord): { url: string; token: string } | string {
    const url = record.body.callbackUrl;
    if (record.status === "pending" || url === undefined) return "the request has no callback to send";
    if (!callbackHostAllowed(url, this.options.callbackHosts)) return "the callback host is no longer in RELAY_CALLBACK_HOSTS";
    const token = this.options.tokenSecret(record.tokenName);
    if (!token) return "the token that created the request is no longer configured";
    return { url, token };
  }
}

/** The callback side of a relay: a queue worker with the one handler, woken by every ended request. */
export class CallbackWorker {
  private readonly worker: QueueWorker;
  private unsubscribe: (() => void) | undefined;
  /** The stop in progress, if any. */
  private stopping: Promise<void> | undefined;

  constructor(private readonly options: CallbackWorkerOptions) {
    const logger = options.logger ?? silentLogger;
    const now = options.now ?? Date.now;
    this.worker = new QueueWorker({
      store: options.store,
      logger,
      now,
      outage: new OutageLog(logger, "callback delivery pauses"),
      ...(options.random ? { random: options.random } : {}),
      ...(options.metrics ? { metrics: options.metrics } : {}),
      pollIntervalMs: options.pollIntervalMs ?? 1000,
    });
    this.worker.add(new CallbackDelivery({ ...options, now, logger }));
  }

  /** Starts delivering in the background; a second start does nothing. */
  start(): void {
    if (this.unsubscribe) return;
    this.unsubscribe = this.options.store.onEnded(() => this.worker.kick("callbacks"));
    this.worker.start();
  }

  /**
   * Claims nothing more; a delivery in flight may finish within `stopGraceMs`, then any still running is
   * stopped and handed back (due at once, for another instance); resolves when done. A draining instance
   * calls it right after its drain and again at its end: both wait for the one stop.
   */
  stop(): Promise<void> {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    const stopping = (this.stopping ??= this.worker.stop(this.options.stopGraceMs ?? 3000).finally(() => (this.stopping = undefined)));
    return stopping;
  }

  /** Claims the callbacks due now and makes one attempt at each. */
  async runOnce(): Promise<RoundResult> {
    return asCallbackRound(await this.worker.runOnce("callbacks"));
  }

  /** Runs rounds until one finds nothing due (for tests and tools); returns the totals. */
  async drain(): Promise<RoundResult> {
    return asCallbackRound(await this.worker.drain("callbacks"));
  }
}

const asCallbackRound = ({ done, ...rest }: QueueRound): RoundResult => ({ delivered: done, ...rest });
