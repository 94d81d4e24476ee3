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
 * A request that ended while still being posted has its update queued too
 * (the store's ending step): its poster may have died after Slack took the
 * message and before the reply, leaving a message with live buttons the
 * store never heard of. Its update looks the channel's history up for the
 * request's messages (their metadata carries its id), records what it finds
 * as copies and shows them ended.
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
import type { RequestMessenger } from "./delivery.js";
import { isRequestMessage } from "./from-message.js";
import { messagesOf, type RequestRecord } from "./model.js";
import type { Handled, QueueHandler, QueueWorker } from "./queue-worker.js";
import type { ClaimedEntry, RequestStore } from "./store.js";

export interface UpdateOutboxDeps {
  store: Pick<RequestStore, "get" | "completePendingUpdate" | "addOtherMessage">;
  messenger: Pick<RequestMessenger, "showEnded" | "findPosted">;
  /** Runs the attempts `show` starts, as it runs the claimed ones. */
  worker: Pick<QueueWorker, "run">;
  logger: Logger;
  /** Unix time in milliseconds. */
  now: () => number;
}

/** Runs on the next turn of the event loop: what the caller does first (waking waiters) is not delayed. */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** The `updates` queue's handler, and the instance's own first attempt at each update it queued (`show`). */
export class UpdateOutbox implements QueueHandler<RequestRecord> {
  readonly queue = "updates";
  readonly name = "message update";
  /** Longer than one Slack call. */
  readonly leaseMs = 30_000;
  readonly batchSize = 20;
  readonly backoff = { baseMs: 1000, maxMs: 60_000 };
  readonly parallel = true;
  readonly otherErrors = "retry";
  readonly heartbeat = "at once";
  private readonly background = new Set<Promise<unknown>>();
  /** Requests this instance is updating right now. */
  private readonly updating = new Set<string>();
  /** A request's newer state handed to `show` while an attempt at it was running: shown once that attempt ends, unless it showed as much. */
  private readonly followUps = new Map<string, RequestRecord>();

  constructor(private readonly deps: UpdateOutboxDeps) {}

  /**
   * Rewrites the message of a request that just ended here, or just counted
   * an approval, in the background (its update is queued already); `later`
   * waits for the next turn of the event loop, so the caller's own work
   * (waking the waiting agent, acking the click) goes first.
   */
  show(record: RequestRecord, { later = true }: { later?: boolean } = {}): void {
    // One with no message known yet is left to its queued update: a post still on its way to Slack lands meanwhile.
    if (messagesOf(record).length === 0) return;
    if (this.updating.has(record.id)) {
      this.followUps.set(record.id, record);
      return;
    }
    this.track((later ? nextTurn() : Promise.resolve()).then(() => this.runFor(record)));
  }

  /** Resolves when every update started by `show` so far has settled. */
  async idle(): Promise<void> {
    while (this.background.size > 0) await Promise.allSettled([...this.background]);
  }

  /** Shows the request as it now is (or as `known`) and, while it keeps changing under a pending render, again. */
  async handle({ id }: ClaimedEntry, _work: unknown, known?: RequestRecord): Promise<Handled> {
    if (this.updating.has(id)) return { outcome: "left" };
    const stored = known ?? (await this.deps.store.get(id));
    if (!stored) return { outcome: "skipped", why: "the request is gone" };
    const first = await this.withUnrecordedPosts(stored);
    // Ended before any message of it reached Slack: nothing to show.
    if (messagesOf(first).length === 0) return { outcome: "done" };
    const { store, messenger, now } = this.deps;
    this.updating.add(id);
    let shown: RequestRecord | undefined;
    try {
      let record: RequestRecord | undefined = first;
      while (record && messagesOf(record).length > 0) {
        await messenger.showEnded(record);
        shown = record;
        if (record.status !== "pending") return { outcome: "done" };
        if (await store.completePendingUpdate(id, record.approvals?.length ?? 0, now() + this.leaseMs, record.expiresAt)) return { outcome: "settled" };
        // It ended, counted another approval or was given more time while the message was shown pending: show it again, after that render.
        record = await store.get(id);
      }
      return { outcome: "done" };
    } finally {
      this.updating.delete(id);
      const next = this.followUps.get(id);
      this.followUps.delete(id);
      if (next && !(shown && sameView(shown, next))) this.track(this.runFor(next));
    }
  }

  /**
   * An ended request whose post was never recorded, with the messages Slack's history shows for it recorded as
   * copies (so clicks on them count as the request's, and they are shown ended); any other request as it is.
   */
  private async withUnrecordedPosts(record: RequestRecord): Promise<RequestRecord> {
    const { store, messenger, logger } = this.deps;
    if (record.status === "pending" || record.slack || !messenger.findPosted) return record;
    let found = record;
    for (const message of await messenger.findPosted(record)) {
      if (isRequestMessage(found, message)) continue;
      logger.warn({ id: record.id, ...message }, "a message of an ended request that was never recorded was found: showing it ended");
      found = (await store.addOtherMessage(record.id, message)) ?? found;
    }
    return found;
  }

  /** An attempt at the update of `record`, which this instance just queued (it holds it for UPDATE_GRACE_MS). */
  private runFor(record: RequestRecord): Promise<unknown> {
    return this.deps.worker.run("updates", { key: record.id, id: record.id, attempts: 0 }, record);
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
