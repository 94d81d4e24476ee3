/**
 * The RequestStore contract: what the domain needs from storage, owned here
 * and implemented by the Redis and memory stores (src/store). Every
 * method is one atomic step; the first transition out of `pending` wins and
 * every later one gets the stored record back unchanged.
 *
 * A request with a callback URL has its callback queued by the very step that
 * ends it (the applied transition, or a create of an already ended request),
 * so no crash can end a request and lose its callback.
 *
 * Likewise a pending request enters the posting set by the very step that
 * creates it and leaves it by the step that records its Slack message or ends
 * it, so no crash between storing a request and posting it can leave it
 * unposted: once the poster's lease runs out, any instance claims it and
 * posts it (src/requests/delivery.ts).
 *
 * So too the outcome notices of a request with a Slack message (a reply in
 * its thread and, when it has a requestedBy, a DM to that person): queued by
 * the step that ends it, or by the step that records the message of a
 * request that had already ended, one entry per part, never before it ended;
 * any instance claims, retries and completes each part.
 *
 * Every such queue is a leased queue (QueueName), claimed, retried and
 * completed by name through the same three methods. One queue no step of
 * this store fills, a rule's tally (its uses live in the RuleStore), is
 * filled by its caller (`enqueue`).
 *
 * A store backed by a service that can be down (Redis) answers every call,
 * or throws StoreUnavailableError, within its bound (DEFAULT_STORE_TIMEOUT_MS):
 * an outage never holds a caller. A call that failed this way may or may not
 * have taken effect (a command can time out after Redis ran it); every call
 * is safe to repeat: transitions keep the first outcome, creates with an
 * idempotency key return the first request.
 */
import type { Decision } from "../protocol/decisions.js";
import type { Person, RequestStatus, SlackRef } from "../protocol/request-view.js";
import type { Approval, RequestRecord } from "./model.js";

export interface CreateOptions {
  /** A second create with the same key returns the first request and `created: false`. */
  idempotencyKey?: string;
  /**
   * Unix time in milliseconds until which the creator alone posts the new
   * request: a claim of the `posting` queue hands it out only after that. Default: the
   * store's now (any instance may claim it at once).
   */
  postLeaseUntil?: number;
  /**
   * Most pending requests the record's agent token may hold once a pending
   * record is stored: past it the create throws TooManyPendingError (../requests/errors.ts) and
   * stores nothing, counted atomically with the create (across every
   * instance on a shared store). Absent: no cap. A create that returns an
   * existing request (idempotency key, `sameAs`) is never refused.
   */
  maxPending?: number;
  /**
   * What the request asks (./idempotency.ts `askKey`): a create whose key
   * names a request that is still pending returns that one (`created:
   * false`, `joined: true`) and stores nothing; one that stores its record
   * makes the key name it while it is pending.
   */
  sameAs?: string;
}

/**
 * Longest a store call may take by default (ms, RELAY_STORE_TIMEOUT_MS): a
 * store that has not answered by then throws StoreUnavailableError
 * (./errors.ts) instead of holding its caller.
 */
export const DEFAULT_STORE_TIMEOUT_MS = 2_000;

/** How often a caller that holds on through a store outage (a long-poll, a hook call) tries the store again (ms). */
export const STORE_RETRY_INTERVAL_MS = 1_000;

/** How long an ended request stays readable by default (ms): a day. */
export const DEFAULT_RETENTION_MS = 24 * 3600_000;

export interface CreateResult {
  record: RequestRecord;
  /** false when the idempotency key, or `sameAs`, named an existing request. */
  created: boolean;
  /** true when `sameAs` named a pending request, which `record` is. */
  joined?: boolean;
}

/**
 * How long after a request ends its queued message update becomes due
 * (ms): the instance that ended it tries at once and has this long to itself
 * before any other instance's sweep claims the update.
 */
export const UPDATE_GRACE_MS = 30_000;

/** Most cancelled call keys the memory store remembers at once (RequestStore.announceCancelledCall): the oldest goes first. */
export const MAX_REMEMBERED_CANCELS = 10_000;

/** What a transition out of `pending` carries. */
export type Transition =
  | { status: "answered"; decision: Decision; answeredBy: Person; at: number }
  /**
   * `unpostedError`: the error recorded when the request was never posted to
   * Slack. `decision`: what the request ends with all the same, stored with
   * it in the same step (a route's `onTimeout: halt`, see
   * requests/timeout.ts); absent → no decision.
   */
  | { status: "expired"; at: number; unpostedError?: string; decision?: Decision }
  | { status: "cancelled"; at: number; by?: string; reason?: string }
  | { status: "failed"; at: number; error: string };

export type TransitionResult =
  | { outcome: "applied"; record: RequestRecord }
  /** The request had already ended; `record` holds how. */
  | { outcome: "already_ended"; record: RequestRecord }
  /** Only for `expired`: the deadline has not passed yet. */
  | { outcome: "not_due"; record: RequestRecord }
  | { outcome: "not_found" };

export type ExtendResult =
  /** The deadline moved; `record` holds the request as it now is. */
  | { outcome: "applied"; record: RequestRecord }
  /** The request had already ended; `record` holds how. Nothing changed. */
  | { outcome: "already_ended"; record: RequestRecord }
  | { outcome: "not_found" };

/** The final step of an approval that completes its request's quorum. */
export type AnsweredTransition = Extract<Transition, { status: "answered" }>;

export type ApproveResult =
  | TransitionResult
  /** The approval was added and the request stays pending: fewer than `quorum` so far. `record` holds every approval. */
  | { outcome: "counted"; record: RequestRecord }
  /** This person's approval was already counted; nothing changed. */
  | { outcome: "duplicate"; record: RequestRecord };

/**
 * A reminder or escalation of a request (see requests/policy.ts
 * `reminderSchedule`): `index` into the request's schedule, due at `dueAt`
 * (Unix ms).
 */
export interface ReminderEntry {
  index: number;
  dueAt: number;
}

/**
 * A part of a request's outcome notice: the reply in its message's thread
 * (every ended request with a message), or the DM to the person it was made
 * for (a request with a requestedBy). Each part is queued, claimed, retried
 * and completed on its own, so a retry of one never repeats the other.
 */
export type NoticePart = "thread" | "dm";

/** The parts in the order they are sent. */
export const NOTICE_PARTS: readonly NoticePart[] = ["thread", "dm"];

export interface SlackMessageOptions {
  /** Unix ms to record as the record's `postedAt` (default: the store's now). */
  postedAt?: number;
  /** Reminders and escalations to queue with the message, while the request is pending. */
  reminders?: readonly ReminderEntry[];
}

export interface ListQuery {
  /** Only requests in this status; absent → any. */
  status?: RequestStatus;
  /** Only requests created with this agent token. */
  tokenName?: string;
  /** Most records returned. */
  limit: number;
}

/** How much of the shared store waits, as the relay's metrics show it (GET /metrics). */
export interface StoreCounts {
  /** Pending requests, on every instance sharing the store. */
  pending: number;
  /** Queued callbacks awaiting delivery (due, leased or waiting for a retry). */
  callbacks: number;
}

/**
 * The leased queues, by name. Each entry is due at a time (Unix ms); a claim
 * hands it to one caller and makes it due again only when the claim's lease
 * runs out, so whoever dies mid-work leaves it to be claimed again.
 *
 * - `posting`: pending requests whose Slack message is not recorded yet
 *   (entry: the request id; due when the poster's lease ends). Entered by
 *   create, left by the step that records the message or ends the request.
 * - `updates`: Slack messages to rewrite as their request now is (entry: the id).
 * - `reminders`: reminders and escalations (entry: `<id>:<index>` into the
 *   request's schedule, see requests/policy.ts `reminderSchedule`), queued with
 *   the message and dropped by the step that ends the request.
 * - `notices`: outcome notice parts (entry: `<id>:<part>`, see NoticePart).
 * - `callbacks`: callbacks to POST (entry: the id).
 * - `tallies`: "Allow for a while" rules whose thread tally is to show
 *   their uses again (entry: the rule's id; see requests/rule-tally.ts),
 *   queued by the caller that counted a use (`enqueue`).
 *
 * An entry stays queued until completed, even after its request (or rule)
 * is forgotten (then its handler finds nothing and completes it).
 */
export const QUEUE_NAMES = ["posting", "updates", "reminders", "notices", "callbacks", "tallies"] as const;
export type QueueName = (typeof QUEUE_NAMES)[number];

/** The queues a caller fills itself (`enqueue`); the store's own steps fill the others. */
export type CallerQueueName = Extract<QueueName, "tallies">;

/** A queued entry handed to one caller for the length of a lease. */
export interface ClaimedEntry {
  /** The entry as queued: its request's id, or `<id>:<index>` / `<id>:<part>` (see entryKey). */
  key: string;
  /** Id of the request the entry belongs to (of the rule, in `tallies`). */
  id: string;
  /** Attempts made before this claim (0 for the first); `retry` records them. */
  attempts: number;
}

/** The entry key of a request's schedule `index` or notice `part`; the request id alone names its entry in the other queues. */
export function entryKey(id: string, detail?: number | NoticePart): string {
  return detail === undefined ? id : `${id}:${detail}`;
}

/** The request id an entry key of `queue` belongs to, and what follows it (a reminder's index, a notice part); lua/includes/common.lua builds them too. */
export function entryOfKey(queue: QueueName, key: string): { id: string; detail?: string } {
  if (queue !== "reminders" && queue !== "notices") return { id: key };
  const split = key.lastIndexOf(":");
  return split > 0 ? { id: key.slice(0, split), detail: key.slice(split + 1) } : { id: key };
}

export interface RequestStore {
  /**
   * Stores a new request. With `idempotencyKey`, a second create with the
   * same key returns the first request and `created: false`. A pending
   * request without a Slack message enters the posting set, leased to
   * `postLeaseUntil`. A sharded store (Redis Cluster) places a request made
   * with an idempotency key, `maxPending` or `sameAs` on its agent token's
   * shard (where those keys live), which its id names: it
   * stores the record under an id of that shard, the record's own when it
   * is one (`newId`'s are), a fresh UUID otherwise; the result holds the
   * record as stored. Throws TooManyPendingError past `maxPending`.
   */
  create(record: RequestRecord, options?: CreateOptions): Promise<CreateResult>;
  /** A fresh UUID for a new request of the agent token `tokenName`, one that a create stores as it is. */
  newId(tokenName?: string): string;
  get(id: string): Promise<RequestRecord | undefined>;
  /**
   * Records where the Slack message lives (and takes the request out of the
   * posting set); returns the record as it now is. When the request has
   * already ended, the update of that message is queued (the `updates` queue).
   * While the request is pending, the same step records `postedAt` and queues
   * `options.reminders` (the `reminders` queue), the first time only: a repeated
   * call keeps the first `postedAt` and queues nothing again (a reminder
   * already sent never comes back). When the request has already ended and
   * its outcome notices were never queued (it ended before its message was
   * recorded), they are queued now, due at once (the `notices` queue).
   */
  setSlackMessage(id: string, slack: SlackRef, options?: SlackMessageOptions): Promise<RequestRecord | undefined>;
  /**
   * Records another message posted for the request (not its main one; see
   * RequestRecord.otherMessages), indexed like the main one so a click on it
   * finds the request; when the request has already ended, the update of its
   * messages is queued. Returns the record as it now is; undefined for an
   * unknown id.
   */
  addOtherMessage(id: string, slack: SlackRef): Promise<RequestRecord | undefined>;
  /** Finds the request a Slack message (channel + ts) belongs to. */
  findBySlackMessage(slack: SlackRef): Promise<string | undefined>;
  /**
   * Moves a pending request to a final status (and out of the posting set);
   * atomic, first one wins. When the request has a Slack message, the same
   * step queues its update, due UPDATE_GRACE_MS after `change.at`, and its
   * outcome notices, due at `change.at`: the thread part, and the dm part
   * when its policy has a requestedBy.
   */
  transition(id: string, change: Transition): Promise<TransitionResult>;
  /**
   * Counts `approval` on a pending request that needs `quorum` distinct
   * approvals, atomically with the final step: a person already counted
   * gets `duplicate` (nothing changes); the approval that makes `quorum`
   * moves the request to answered with `final` exactly as `transition`
   * does (`applied`, the record's approvals include it); an earlier one is
   * `counted` and, when the request has a Slack message, queues its update
   * (the message shows the count) as a transition does. An ended request
   * gets `already_ended`, an unknown one `not_found`.
   */
  approve(id: string, approval: Approval, quorum: number, final: AnsweredTransition): Promise<ApproveResult>;
  /**
   * Gives a pending request more time: its deadline becomes `expiresAt`
   * (Unix ms), never earlier than it was (a smaller value leaves it as it
   * is), in one atomic step that also moves it in the expiry sweep
   * (dueForExpiry), keeps its keys until the new deadline plus the
   * retention and, when it has a Slack message, queues the update that
   * shows the new deadline (due UPDATE_GRACE_MS from now, as a counted
   * approval's). Reminders already queued stay as they are. An ended
   * request gets `already_ended`, an unknown one `not_found`; neither
   * changes.
   */
  extend(id: string, expiresAt: number): Promise<ExtendResult>;
  /**
   * Requests still kept (pending, or ended within the retention), newest
   * first (by createdAt). Every pending request is listed; of the ended
   * ones, a store may list only those among its most recently created
   * (Redis: RedisStoreOptions.recentLimit, 10,000 by default).
   */
  listRequests(query: ListQuery): Promise<RequestRecord[]>;
  /** Ids of pending requests whose deadline is at or before `now` (ms). */
  dueForExpiry(now: number, limit: number): Promise<string[]>;
  /** How many requests are pending and callbacks queued: cheap counts (no record is read), bounded like every call. */
  counts(): Promise<StoreCounts>;
  /**
   * Hands out up to `limit` entries of `queue` due at or before `now` (Unix
   * ms), earliest first, and makes each one due again only at `now + leaseMs`:
   * until then no other claim, on any instance, returns it.
   */
  claim(queue: QueueName, now: number, leaseMs: number, limit: number): Promise<ClaimedEntry[]>;
  /**
   * Makes a queued entry due at `nextAt` (Unix ms), `attempts` made so far
   * (also how a handler renews its lease: a later `nextAt`, the same
   * attempts); false when the entry is not queued (completed meanwhile, or
   * its request ended and took it out), and then nothing is queued.
   */
  retry(queue: QueueName, key: string, nextAt: number, attempts: number): Promise<boolean>;
  /** Forgets a queued entry (done, or given up); false when it was not queued. */
  complete(queue: QueueName, key: string): Promise<boolean>;
  /**
   * Queues `key` on a queue its caller fills (CallerQueueName), due at
   * `dueAt` (Unix ms), unless it is queued already: then it keeps its due
   * time, its lease and its attempts (a claim in hand is never cut short).
   * True when it was added.
   */
  enqueue(queue: CallerQueueName, key: string, dueAt: number): Promise<boolean>;
  /**
   * Forgets a queued message update after its message was shown pending
   * with `shownApprovals` approvals (and, when given, the deadline
   * `shownExpiresAt`, Unix ms), unless the request changed meanwhile (it
   * ended, counted another approval, or was given more time): then the update stays queued,
   * or is queued again when another instance completed it, due at
   * `retryAt` (Unix ms), and the answer is false: the message is to be
   * shown again as the request now is. True when it was forgotten (also
   * when the request is gone). So a pending render that lands late never
   * leaves a message showing less than the request is.
   */
  completePendingUpdate(id: string, shownApprovals: number, retryAt: number, shownExpiresAt?: number): Promise<boolean>;
  /**
   * Calls `listener` with the id of every request that ends, on any instance
   * sharing this store. Returns a function that removes the listener.
   */
  onEnded(listener: (id: string) => void): () => void;
  /**
   * Calls `listener` when `onEnded` notifications flow again after a gap (the
   * subscription was lost and is back): some requests may have ended unseen,
   * so whoever waits on one should read it again. Returns a function that
   * removes the listener.
   */
  onResync(listener: () => void): () => void;
  /**
   * Tells every instance sharing this store (this one included, through
   * `onChanged`) that request `id` changed without ending: created, an
   * approval counted, more time, its Slack message posted. Best effort:
   * never throws, and a notification lost in an outage is lost (the web
   * console's stream is what hears it).
   */
  announce(id: string): void;
  /** Calls `listener` with the id of every request announced (`announce`) on any instance sharing this store. */
  onChanged(listener: (id: string) => void): () => void;
  /**
   * Tells every instance sharing this store (this one included, through
   * `onCancelledCall`) that an agent cancelled the held call `key` (an MCP
   * tools/call, whose notifications/cancelled may reach another instance than
   * the one holding it). Best effort, as `announce`: resolves once done
   * (or failed, logged), never rejects.
   *
   * With `rememberMs`, the key is also remembered for that long, before the
   * announcement goes out (`wasCallCancelled`): a cancel that arrives before
   * its call (at any instance) still stops the call when it comes. The memory
   * store keeps at most MAX_REMEMBERED_CANCELS keys, dropping the oldest.
   */
  announceCancelledCall(key: string, rememberMs?: number): Promise<void>;
  /** true when `key` was announced cancelled with `rememberMs` less than that long ago. */
  wasCallCancelled(key: string): Promise<boolean>;
  /** Calls `listener` with the key of every call announced cancelled (`announceCancelledCall`) on any instance sharing this store. */
  onCancelledCall(listener: (key: string) => void): () => void;
  /** Resolves once `onEnded` notifications flow (e.g. the subscription is live). */
  ready(): Promise<void>;
  /** true when the backing service answers. */
  ping(): Promise<boolean>;
  close(): Promise<void>;
}
