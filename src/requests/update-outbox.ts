/**
 * Decided messages never keep live buttons: every ended request's Slack
 * message is rewritten to show the outcome until Slack takes it, through
 * restarts. The store queues the update in the very step that ends a request
 * (or that records the message of a request that had already ended), due
 * UPDATE_GRACE_MS later; the instance that ended it tries at once (`show`),
 * and whatever is still queued once due — an attempt that failed, an instance
 * that died — is claimed by any instance's sweep (`runOnce`), leased so one
 * instance works on it at a time. A transient failure (429, 5xx, network) is
 * retried after Slack's Retry-After or a growing backoff, with no limit; a
 * permanent one (message deleted, bot removed from the channel) or a request
 * the store no longer has ends it with a warning.
 *
 * A pending request's message is updated too, to show its approvals so far
 * (approve queues that update as it counts one) or its new deadline (extend
 * queues it as it moves the deadline). Instances race there: A
 * shows "1 of 2" while B ends the request, and A's call may reach Slack
 * last. So a pending render is completed only while the request is still as
 * shown (store.completePendingUpdate, one atomic step); when it changed
 * meanwhile, the update stays queued and the message is shown again as the
 * request now is, after A's own render: the last word is never a stale one.
 * On one instance, a newer state handed to `show` while an attempt at the
 * same request runs is shown right after it.
 */
import type { Logger } from "../logger.js";
import { retryDelayMs } from "../protocol/timing.js";
import { PermanentDeliveryError, TransientDeliveryError, type RequestMessenger } from "./delivery.js";
import type { RequestRecord } from "./model.js";
import type { ClaimedEntry, RequestStore } from "./store.js";

export type UpdateStore = Pick<RequestStore, "get" | "claim" | "retry" | "complete" | "completePendingUpdate">;

export interface UpdateOutboxDeps {
  store: UpdateStore;
  messenger: Pick<RequestMessenger, "showEnded">;
  logger: Logger;
  /** Unix time in milliseconds. */
  now: () => number;
  /** In [0, 1), for backoff jitter. */
  random?: () => number;
  /** Milliseconds a claim keeps other instances off an update; longer than one Slack call. */
  leaseMs?: number;
  /** Updates claimed per sweep. */
  batchSize?: number;
  /** Milliseconds before the first retry, doubled for each later one up to `backoffMaxMs`. */
  backoffBaseMs?: number;
  backoffMaxMs?: number;
}

/** Runs on the next turn of the event loop: what the caller does first (waking waiters) is not delayed. */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

export class UpdateOutbox {
  private readonly background = new Set<Promise<unknown>>();
  /** Requests this instance is updating right now. */
  private readonly updating = new Set<string>();
  /** A request's newer state handed to `show` while an attempt at it was running: shown once that attempt ends, unless it showed as much. */
  private readonly followUps = new Map<string, RequestRecord>();
  private readonly leaseMs: number;
  private readonly batchSize: number;
  private readonly backoffBaseMs: number;
  private readonly backoffMaxMs: number;
  private readonly random: () => number;

  constructor(private readonly deps: UpdateOutboxDeps) {
    this.leaseMs = deps.leaseMs ?? 30_000;
    this.batchSize = deps.batchSize ?? 20;
    this.backoffBaseMs = deps.backoffBaseMs ?? 1000;
    this.backoffMaxMs = deps.backoffMaxMs ?? 60_000;
    this.random = deps.random ?? Math.random;
  }

  /**
   * Rewrites the message of a request that just ended here, or just counted
   * an approval, in the background (its update is queued already); `later`
   * waits for the next turn of the event loop, so the caller's own work
   * (waking the waiting agent, acking the click) goes first.
   */
  show(record: RequestRecord, { later = true }: { later?: boolean } = {}): void {
    if (!record.slack) return;
    if (this.updating.has(record.id)) {
      this.followUps.set(record.id, record);
      return;
    }
    this.track((later ? nextTurn() : Promise.resolve()).then(() => this.attempt(record, 0)));
  }

  /** Claims the updates due now (on any instance's requests) and makes one attempt at each; returns how many it claimed. */
  async runOnce(): Promise<number> {
    const { store, now, logger } = this.deps;
    const claims = await store.claim("updates", now(), this.leaseMs, this.batchSize);
    await Promise.all(claims.map((claim) => this.handle(claim).catch((error: unknown) => logger.error({ id: claim.id, error }, "message update failed"))));
    return claims.length;
  }

  /** Resolves when every update started by `show` so far has settled. */
  async idle(): Promise<void> {
    while (this.background.size > 0) await Promise.allSettled([...this.background]);
  }

  private async handle({ id, attempts }: ClaimedEntry): Promise<void> {
    if (this.updating.has(id)) return;
    const record = await this.deps.store.get(id);
    if (!record?.slack) {
      this.deps.logger.warn({ id }, "message update dropped: the request is gone or has no message");
      await this.deps.store.complete("updates", id);
      return;
    }
    await this.attempt(record, attempts);
  }

  /** Shows `first` and, while the request keeps changing under a pending render, the request as it now is. */
  private async attempt(first: RequestRecord, attempts: number): Promise<void> {
    const { store, now } = this.deps;
    const id = first.id;
    this.updating.add(id);
    let shown: RequestRecord | undefined;
    try {
      let record: RequestRecord | undefined = first;
      while (record?.slack) {
        if (!(await this.render(record, attempts))) return;
        shown = record;
        if (record.status !== "pending") {
          await store.complete("updates", id);
          return;
        }
        if (await store.completePendingUpdate(id, record.approvals?.length ?? 0, now() + this.leaseMs, record.expiresAt)) return;
        // It ended, counted another approval or was given more time while the message was shown pending: show it again, after that render.
        record = await store.get(id);
        attempts = 0;
      }
      await store.complete("updates", id);
    } finally {
      this.updating.delete(id);
      const next = this.followUps.get(id);
      this.followUps.delete(id);
      if (next && !(shown && sameView(shown, next))) this.track(this.attempt(next, 0));
    }
  }

  /** One Slack call: true when it is done with (shown, or refused for good), false when a retry is queued. */
  private async render(record: RequestRecord, attempts: number): Promise<boolean> {
    const { store, messenger, logger, now } = this.deps;
    try {
      await messenger.showEnded(record);
      return true;
    } catch (error) {
      if (error instanceof PermanentDeliveryError) {
        logger.warn({ id: record.id, reason: error.reason }, "slack refused the message update for good; it is dropped");
        return true;
      }
      const retryAfterMs = error instanceof TransientDeliveryError ? error.retryAfterMs : undefined;
      const delay = Math.max(retryAfterMs ?? 0, retryDelayMs(attempts + 1, this.backoffBaseMs, this.backoffMaxMs, this.random));
      logger.info({ id: record.id, error, attempts: attempts + 1, delayMs: delay }, "message update failed, retrying");
      await store.retry("updates", record.id, now() + delay, attempts + 1);
      return false;
    }
  }

  private track(task: Promise<unknown>): void {
    const tracked = task.catch((error: unknown) => this.deps.logger.error({ error }, "message update failed"));
    this.background.add(tracked);
    void tracked.finally(() => this.background.delete(tracked));
  }
}

/** True when a message rendered from `a` shows what one rendered from `b` would: the same status, count of approvals and deadline. */
function sameView(a: RequestRecord, b: RequestRecord): boolean {
  return a.status === b.status && (a.approvals?.length ?? 0) === (b.approvals?.length ?? 0) && a.expiresAt === b.expiresAt;
}
