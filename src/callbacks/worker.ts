/**
 * Delivers the callbacks the store queues when a request with a `callbackUrl`
 * ends. Every relay instance runs one; the store's lease-based claim makes
 * sure only one instance works on a callback at a time, and a callback that
 * an instance was working on when it died is claimed again once the lease
 * runs out. Delivery is at least once: receivers dedupe on X-Relay-Request-Id.
 *
 * A 2xx completes the callback. Anything else is retried with exponential
 * backoff and jitter until `giveUpAfterMs` after the request ended (or until
 * the store forgets the request), then given up with a warning.
 *
 * While the store is unavailable each round fails fast and the loop tries
 * again after `pollIntervalMs` (no spinning); the outage is logged when it
 * starts and when it ends. A claim whose outcome could not be recorded comes
 * back after its lease, so nothing is lost (at worst delivered twice).
 */
import { silentLogger, type Logger } from "../logger.js";
import { retryDelayMs } from "../protocol/timing.js";
import { callbackHostAllowed, hostOf } from "../requests/callback-hosts.js";
import { StoreUnavailableError } from "../requests/errors.js";
import { toView, type RequestRecord } from "../requests/model.js";
import type { ClaimedEntry, RequestStore } from "../requests/store.js";
import { attemptCallback, type FetchLike } from "./deliver.js";
import { sleepUnlessAborted } from "./timing.js";

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
  /** Waits `ms`, or less when `signal` aborts; never rejects. */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  logger?: Logger;
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

type Fate = keyof RoundResult;

export class CallbackWorker {
  private readonly deps: Required<Omit<CallbackWorkerOptions, "callbackHosts">> & Pick<CallbackWorkerOptions, "callbackHosts">;
  private running: { stop: AbortController; loop: Promise<void>; unsubscribe: () => void } | undefined;
  private nap: AbortController | undefined;
  private kicked = false;
  /** In a store outage: logged once when it starts and once when it ends. */
  private storeDown = false;

  constructor(options: CallbackWorkerOptions) {
    this.deps = {
      store: options.store,
      tokenSecret: options.tokenSecret,
      callbackHosts: options.callbackHosts,
      fetch: options.fetch ?? ((url, init) => fetch(url, init)),
      now: options.now ?? Date.now,
      random: options.random ?? Math.random,
      sleep: options.sleep ?? sleepUnlessAborted,
      logger: options.logger ?? silentLogger,
      pollIntervalMs: options.pollIntervalMs ?? 1000,
      timeoutMs: options.timeoutMs ?? 10_000,
      leaseMs: options.leaseMs ?? 60_000,
      batchSize: options.batchSize ?? 10,
      backoffBaseMs: options.backoffBaseMs ?? 1000,
      backoffMaxMs: options.backoffMaxMs ?? 5 * 60_000,
      giveUpAfterMs: options.giveUpAfterMs ?? 6 * 3600_000,
    };
    if (this.deps.leaseMs <= this.deps.timeoutMs) throw new Error("leaseMs must be longer than timeoutMs");
    if (!(this.deps.backoffBaseMs >= 1)) throw new Error("backoffBaseMs must be at least 1");
  }

  /** Starts delivering in the background; a second start does nothing. */
  start(): void {
    if (this.running) return;
    const stop = new AbortController();
    const unsubscribe = this.deps.store.onEnded(() => this.wake());
    this.running = { stop, unsubscribe, loop: this.loop(stop.signal) };
  }

  /** Stops the loop and any attempt in flight (handed back, due at once); resolves when done. */
  async stop(): Promise<void> {
    const running = this.running;
    if (!running) return;
    this.running = undefined;
    running.unsubscribe();
    running.stop.abort();
    this.nap?.abort();
    await running.loop;
  }

  /** Claims the callbacks due now and makes one attempt at each. */
  async runOnce(signal?: AbortSignal): Promise<RoundResult> {
    const result: RoundResult = { delivered: 0, retried: 0, dropped: 0, released: 0 };
    const claims = await this.deps.store.claim("callbacks", this.deps.now(), this.deps.leaseMs, this.deps.batchSize);
    const fates = await Promise.all(claims.map((claim) => this.handle(claim, signal)));
    for (const fate of fates) if (fate) result[fate] += 1;
    return result;
  }

  /** Runs rounds until one finds nothing due (for tests and tools); returns the totals. */
  async drain(): Promise<RoundResult> {
    const total: RoundResult = { delivered: 0, retried: 0, dropped: 0, released: 0 };
    for (;;) {
      const round = await this.runOnce();
      const handled = round.delivered + round.retried + round.dropped + round.released;
      for (const fate of Object.keys(total) as Fate[]) total[fate] += round[fate];
      if (handled === 0) return total;
    }
  }

  private wake(): void {
    this.kicked = true;
    this.nap?.abort();
  }

  private async loop(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      let busy = false;
      this.kicked = false;
      try {
        const round = await this.runOnce(signal);
        busy = round.delivered + round.retried + round.dropped >= this.deps.batchSize;
        if (this.storeDown) this.deps.logger.info("the store is back: callback delivery resumes");
        this.storeDown = false;
      } catch (error) {
        if (!(error instanceof StoreUnavailableError)) {
          this.deps.logger.error({ error }, "callback round failed");
        } else if (!this.storeDown) {
          this.storeDown = true;
          this.deps.logger.warn({ reason: error.reason }, "the store is unavailable: callback delivery pauses until it is back");
        }
      }
      if (busy || this.kicked || signal.aborted) continue;
      this.nap = new AbortController();
      await this.deps.sleep(this.deps.pollIntervalMs, this.nap.signal);
      this.nap = undefined;
    }
  }

  /** One attempt at one claimed callback; never throws (a lost claim comes back after its lease). */
  private async handle(claim: ClaimedEntry, signal?: AbortSignal): Promise<Fate | undefined> {
    try {
      const record = await this.deps.store.get(claim.id);
      if (!record) return await this.drop(claim, "the request is no longer stored");
      const target = this.target(record);
      if (typeof target === "string") return await this.drop(claim, target);
      const attempts = claim.attempts + 1;
      const fields = { id: claim.id, host: hostOf(target.url), attempt: attempts };
      const body = JSON.stringify(toView(record));
      const outcome = await attemptCallback(
        { url: target.url, requestId: record.id, body, token: target.token, now: this.deps.now() },
        { fetch: this.deps.fetch, timeoutMs: this.deps.timeoutMs, ...(signal ? { signal } : {}) },
      );
      if (outcome.delivered) {
        await this.deps.store.complete("callbacks", claim.key);
        this.deps.logger.info({ ...fields, status: outcome.status }, "callback delivered");
        return "delivered";
      }
      if (outcome.stopped) {
        await this.deps.store.retry("callbacks", claim.key, this.deps.now(), claim.attempts);
        return "released";
      }
      const nextAt = this.deps.now() + retryDelayMs(attempts, this.deps.backoffBaseMs, this.deps.backoffMaxMs, this.deps.random);
      const failure = { ...fields, reason: outcome.reason, ...(outcome.status === undefined ? {} : { status: outcome.status }) };
      if (nextAt > (record.endedAt ?? record.createdAt) + this.deps.giveUpAfterMs) {
        return await this.drop(claim, `not delivered within ${this.deps.giveUpAfterMs} ms of the end`, failure);
      }
      await this.deps.store.retry("callbacks", claim.key, nextAt, attempts);
      this.deps.logger.info({ ...failure, retryInMs: nextAt - this.deps.now() }, "callback failed, will retry");
      return "retried";
    } catch (error) {
      const level = error instanceof StoreUnavailableError ? "warn" : "error";
      this.deps.logger[level]({ id: claim.id, error }, "callback attempt failed; the claim comes back after its lease");
      return undefined;
    }
  }

  /** Where and with which secret the request's callback goes, or why it cannot go at all. */
  private target(record: RequestRecord): { url: string; token: string } | string {
    const url = record.body.callbackUrl;
    if (record.status === "pending" || url === undefined) return "the request has no callback to send";
    if (!callbackHostAllowed(url, this.deps.callbackHosts)) return "the callback host is no longer in RELAY_CALLBACK_HOSTS";
    const token = this.deps.tokenSecret(record.tokenName);
    if (!token) return "the token that created the request is no longer configured";
    return { url, token };
  }

  private async drop(claim: ClaimedEntry, why: string, fields: Record<string, unknown> = { id: claim.id }): Promise<Fate> {
    await this.deps.store.complete("callbacks", claim.key);
    this.deps.logger.warn({ ...fields, why }, "callback given up");
    return "dropped";
  }
}
