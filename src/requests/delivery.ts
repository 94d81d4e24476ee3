/**
 * Getting each request's message into Slack, crash-safe, and keeping it
 * current once the request ends: the service's background Slack work.
 *
 * The store puts every new pending request in its posting set, leased to the
 * instance that created it. That instance posts at once and renews the lease
 * before every attempt and every wait (see `keepTrying`), so a slow post
 * under rate limits is never taken over. Recording the message or ending the
 * request takes it out of the set. If the instance dies first, the lease runs
 * out and `recover` (run by every instance's sweeper) claims the request and
 * posts it. Posting is at least once: a crash after Slack accepted the
 * message but before the store recorded it leaves one extra message.
 *
 * A store outage between the post and its record is waited out: recording
 * the message is retried every STORE_RETRY_INTERVAL_MS while the request has
 * time left (a click on a message the store does not know cannot count).
 */
import type { Logger } from "../logger.js";
import { retryDelayMs } from "../protocol/timing.js";
import type { SlackRef } from "../protocol/request-view.js";
import type { RequestRecord } from "./model.js";
import { StoreUnavailableError } from "./errors.js";
import { postedEntry, type AuditRecorder } from "./audit-entries.js";
import type { RequestChanges } from "./changes.js";
import { remindersToQueue, type ScheduleEntry } from "./policy.js";
import type { Rule } from "./rules.js";
import { pause, type Handled, type QueueHandler, type QueueWorker, type Work } from "./queue-worker.js";
import { STORE_RETRY_INTERVAL_MS, type ClaimedEntry, type NoticePart, type RequestStore, type Transition, type TransitionResult } from "./store.js";
import type { UpdateOutbox } from "./update-outbox.js";

/** The Slack side as the service sees it. */
export interface RequestMessenger {
  /**
   * Posts the request; retries transient failures itself. Throws
   * PermanentDeliveryError when Slack refuses for good; resolves undefined
   * when `options.keepTrying` stopped it.
   */
  post(record: RequestRecord, options?: PostOptions): Promise<PostedMessage | undefined>;
  /**
   * Rewrites the posted message to show how the request ended: one attempt,
   * paced like every call. Throws TransientDeliveryError (retry later, after
   * `retryAfterMs` when Slack said) or PermanentDeliveryError.
   */
  showEnded(record: RequestRecord): Promise<void>;
  /**
   * The messages posted for `record` in its channel since it was created,
   * as Slack's history shows them (a post whose poster died before Slack's
   * reply left one the store never recorded). One call, paced like every
   * call; throws TransientDeliveryError or PermanentDeliveryError. Absent:
   * nothing is looked up.
   */
  findPosted?(record: RequestRecord): Promise<SlackRef[]>;
  /**
   * Sends the reminder or escalation `entry` of a pending request with a
   * Slack message, as of `now` (Unix ms): see ./reminders.ts. Throws
   * TransientDeliveryError (retry later) or PermanentDeliveryError (give up).
   */
  remind(record: RequestRecord, entry: ScheduleEntry, now: number): Promise<void>;
  /**
   * Sends one part of an ended request's outcome notice (see
   * ./outcome-notices.ts), as of `now` (Unix ms): the reply in its message's
   * thread, or the DM to the person it was made for with a link to the
   * message. One attempt, paced like every call. Throws
   * TransientDeliveryError (retry later) or PermanentDeliveryError (give up).
   */
  tellOutcome(record: RequestRecord, part: NoticePart, now: number): Promise<void>;
  /**
   * Posts the thread reply that counts an "Allow for a while" rule's uses,
   * under the message the rule was created on (`rule.message`); resolves
   * the reply's ts. One attempt, paced like every call; throws
   * TransientDeliveryError or PermanentDeliveryError. Absent: no tally.
   */
  postRuleTally?(rule: Rule): Promise<string>;
  /** Rewrites that reply (`rule.tallyTs`) to show the rule's uses as `rule` has them; one attempt, as postRuleTally. */
  updateRuleTally?(rule: Rule): Promise<void>;
}

/**
 * The messenger of a relay without Slack (RequestServiceDeps.messenger
 * unset): the service posts nothing then, so no request has a message and
 * none of these is ever called; each refuses for good should one be.
 */
export const NO_SLACK: RequestMessenger = {
  post: () => Promise.reject(new PermanentDeliveryError("the relay runs without Slack")),
  showEnded: () => Promise.reject(new PermanentDeliveryError("the relay runs without Slack")),
  remind: () => Promise.reject(new PermanentDeliveryError("the relay runs without Slack")),
  tellOutcome: () => Promise.reject(new PermanentDeliveryError("the relay runs without Slack")),
};

/** Where a request's message was posted. */
export interface PostedMessage extends SlackRef {
  /** Other copies found posted for the request (a retry after Slack's reply was lost). */
  others?: SlackRef[];
}

export interface PostOptions {
  /**
   * Asked before the post joins its channel's line, before each attempt and
   * before each wait for one, with the time (Unix ms) that attempt starts;
   * resolving false stops the post (the request ended, or another instance
   * posts it). Never rejects. From the first call on, the service keeps its
   * post lease alive until the post settles.
   */
  keepTrying?: (attemptAt: number) => Promise<boolean>;
  /** Told why an attempt failed (e.g. "Slack was rate limiting") each time the post is retried. */
  onRetry?: (reason: string) => void;
}

/** The `expired` error of a request whose message never reached Slack, when nothing more precise is known. */
export const NEVER_POSTED = "The request was never posted to Slack before its deadline: Slack was rate limiting or could not be reached.";

export class PermanentDeliveryError extends Error {
  constructor(readonly reason: string) {
    super(`Slack refused the message: ${reason}`);
    this.name = "PermanentDeliveryError";
  }
}

/** Slack could not take a call now (rate limit, outage, network); worth trying again. */
export class TransientDeliveryError extends Error {
  constructor(
    readonly reason: string,
    /** What Slack asked to wait before the next call (429 Retry-After), in milliseconds. */
    readonly retryAfterMs?: number,
  ) {
    super(`Slack did not take the call: ${reason}`);
    this.name = "TransientDeliveryError";
  }
}

/** What a failed one-attempt Slack call comes to: try again in `retryInMs`, or give it up. */
export type AfterFailure = { retryInMs: number; reason: string } | { giveUp: string };

/**
 * After a failed call that a queue retries (a reminder, an outcome notice),
 * `attempts` made so far: a transient failure is tried again after Slack's
 * Retry-After or the backoff (`baseMs` doubled per attempt up to `maxMs`,
 * with jitter from `random`), whichever is longer; a refusal for good, or an
 * error that is not Slack's, is given up.
 */
export function afterFailure(error: unknown, attempts: number, backoff: { baseMs: number; maxMs: number }, random: () => number): AfterFailure {
  if (error instanceof TransientDeliveryError) {
    return { retryInMs: Math.max(error.retryAfterMs ?? 0, retryDelayMs(attempts + 1, backoff.baseMs, backoff.maxMs, random)), reason: error.reason };
  }
  return { giveUp: error instanceof PermanentDeliveryError ? error.reason : String(error) };
}

export type DeliveryStore = Pick<RequestStore, "get" | "setSlackMessage" | "addOtherMessage">;

export interface DeliveryDeps {
  store: DeliveryStore;
  /** Runs the posts `post` starts, as it runs the claimed ones (their lease renewed meanwhile). */
  worker: Pick<QueueWorker, "run">;
  messenger: RequestMessenger;
  logger: Logger;
  /** Unix time in milliseconds. */
  now: () => number;
  /** Milliseconds a poster holds a request before another instance may post it; longer than one Slack call. */
  postLeaseMs: number;
  /** This instance's one ending step (./ending.ts): a request Slack refuses for good fails there, its waiters woken. */
  ending: { end(id: string, change: Transition): Promise<TransitionResult> };
  /** Rewrites the message of a request that ended before its message was recorded (its update is queued already). */
  updates: Pick<UpdateOutbox, "show">;
  /** Where the post is recorded once the message is (the `posted` event). */
  audit: AuditRecorder;
  /** Told of each request once its message is recorded (the console links to it). */
  changes?: Pick<RequestChanges, "tell">;
}

/** The `posting` queue's handler: posts a request whose message is not recorded yet, and this instance's first post of each request it creates (`post`). */
export class Delivery implements QueueHandler<RequestRecord> {
  readonly queue = "posting";
  readonly name = "slack post";
  readonly leaseMs: number;
  /** Posts recovered per round. */
  readonly batchSize = 100;
  /** Unused: a post retries within itself (the messenger), and a failed one ends its request. */
  readonly backoff = { baseMs: 1000, maxMs: 60_000 };
  readonly parallel = true;
  readonly otherErrors = "give up";
  readonly heartbeat = "once renewed";
  private readonly background = new Set<Promise<unknown>>();
  /** Ids this instance is posting right now: its own recovery leaves them alone. */
  private readonly posting = new Set<string>();
  /** Why the last attempt at posting each request failed, for its `expired` error. */
  private readonly retryReasons = new Map<string, string>();
  /** Aborts when the service closes: retries through a store outage stop. */
  private readonly closing = new AbortController();

  constructor(private readonly deps: DeliveryDeps) {
    if (!Number.isSafeInteger(deps.postLeaseMs) || deps.postLeaseMs <= 0) throw new Error("postLeaseMs must be a positive integer");
    this.leaseMs = deps.postLeaseMs;
  }

  /** When a post lease taken at `at` (Unix ms) runs out. */
  leaseFrom(at: number): number {
    return at + this.leaseMs;
  }

  /** Posts a pending request in the background, unless this instance is posting it already or runs without Slack. */
  post(record: RequestRecord): void {
    if (this.deps.messenger === NO_SLACK || this.posting.has(record.id)) return;
    this.posting.add(record.id);
    const entry = { key: record.id, id: record.id, attempts: 0 };
    this.track(this.deps.worker.run("posting", entry, record).finally(() => this.posting.delete(record.id)));
  }

  /**
   * Posts the request of a claimed entry (its poster's lease ran out) while
   * it is pending without a message and in time; forgets the entry of one
   * posted, ended or gone. `known`: the request this instance just created.
   */
  async handle({ id }: ClaimedEntry, work: Work, known?: RequestRecord): Promise<Handled> {
    if (known) return this.deliver(known, work);
    if (this.posting.has(id)) return { outcome: "left" };
    const { store, now, logger } = this.deps;
    const record = await store.get(id);
    if (record?.status !== "pending" || record.slack) return { outcome: "skipped", why: "posted, ended or gone", expected: true };
    // Past its deadline it is left to the expiry sweep, which takes it out of the set.
    if (record.expiresAt <= now()) return { outcome: "left" };
    logger.warn({ id }, "posting a request whose poster stopped before it was posted");
    this.posting.add(id);
    try {
      return await this.deliver(record, work);
    } finally {
      this.posting.delete(id);
    }
  }

  /** The error an expired request gets when it was never posted (as far as this instance knows why). */
  unpostedError(id: string): string {
    // Still waiting for its turn here: its channel's line (Slack's pace) did not reach it in time.
    const reason = this.retryReasons.get(id) ?? (this.posting.has(id) ? "Slack was rate limiting" : undefined);
    return reason === undefined ? NEVER_POSTED : `${reason}: the message could not be posted to Slack before the request's deadline.`;
  }

  /** The request ended (on any instance): nothing more to remember about posting it. */
  forget(id: string): void {
    this.retryReasons.delete(id);
  }

  /** Stops waiting out store outages (shutdown); what is in flight settles. */
  close(): void {
    this.closing.abort();
  }

  /** Resolves when every background Slack call started so far has settled. */
  async idle(): Promise<void> {
    while (this.background.size > 0) await Promise.allSettled([...this.background]);
  }

  private async deliver(record: RequestRecord, work: Work): Promise<Handled> {
    const { store, messenger, logger, now } = this.deps;
    let slack: PostedMessage | undefined;
    try {
      // A post may wait in its channel's line for longer than a lease: the worker renews it meanwhile, and from each attempt's start.
      slack = await messenger.post(record, {
        keepTrying: (attemptAt) => work.renew(attemptAt),
        onRetry: (reason) => this.retryReasons.set(record.id, reason),
      });
    } catch (error) {
      const reason = error instanceof PermanentDeliveryError ? error.reason : String(error);
      logger.warn({ id: record.id, reason }, "slack post failed");
      await this.deps.ending.end(record.id, { status: "failed", at: now(), error: reason });
      return { outcome: "settled" };
    }
    if (!slack) {
      logger.info({ id: record.id }, "slack post stopped: the request ended, another instance posted it, or its deadline came first");
      return { outcome: "settled" };
    }
    this.retryReasons.delete(record.id);
    let stored = await this.recordMessage(record, { channel: slack.channel, ts: slack.ts });
    for (const other of slack.others ?? []) stored = (await store.addOtherMessage(record.id, other)) ?? stored;
    if (stored) {
      this.deps.audit.record(postedEntry(stored, stored.postedAt ?? now()));
      this.deps.changes?.tell(stored.id);
    }
    if (stored && stored.status !== "pending") this.deps.updates.show(stored, { later: false });
    return { outcome: "settled" };
  }

  /** Records where the message landed, retrying through a store outage while the request has time left. */
  private async recordMessage(record: RequestRecord, slack: SlackRef): Promise<RequestRecord | undefined> {
    const { store, now, logger } = this.deps;
    let logged = false;
    const postedAt = now();
    const options = { postedAt, reminders: remindersToQueue(record, postedAt) };
    for (;;) {
      try {
        return await store.setSlackMessage(record.id, slack, options);
      } catch (error) {
        if (!(error instanceof StoreUnavailableError) || this.closing.signal.aborted || now() >= record.expiresAt) throw error;
        if (!logged) logger.warn({ id: record.id, reason: error.reason }, "posted, but the store is unavailable: recording the message once it is back");
        logged = true;
        await pause(STORE_RETRY_INTERVAL_MS, this.closing.signal);
      }
    }
  }

  private track(task: Promise<unknown>): void {
    const tracked = task.catch((error: unknown) => this.deps.logger.error({ error }, "background task failed"));
    this.background.add(tracked);
    void tracked.finally(() => this.background.delete(tracked));
  }
}
