/**
 * The domain service: create, answer, wait, cancel and expire requests. The
 * HTTP routes and Slack listeners call it; it alone talks to the store and
 * tells Slack (through a RequestMessenger, driven by ./delivery.ts) when a
 * message must be posted or must change.
 */
import { CreateLimits } from "./limits.js";
import { silentLogger, type Logger } from "../logger.js";
import type { CreateResult, RequestStore, Transition, TransitionResult } from "./store.js";
import { decisionMatchesKind } from "./decisions.js";
import { type Decision } from "../protocol/decisions.js";
import { RelayError, shuttingDown } from "./errors.js";
import { Delivery, NO_SLACK } from "./delivery.js";
import { startSweeper } from "./sweeper.js";
import { OutageLog } from "./outage-log.js";
import { QueueWorker } from "./queue-worker.js";
import type { SlackRef } from "../protocol/request-view.js";
import type { RequestRecord } from "./model.js";
import { UpdateOutbox } from "./update-outbox.js";
import { Waiters, type LeaveSignal } from "./waiters.js";
import { answerPending, type AnswerResult } from "./answering.js";
import { NO_AUDIT, type AuditRecorder } from "./audit-entries.js";
import { RequestChanges } from "./changes.js";
import { Ending } from "./ending.js";
import { holdUntilEnded, type LongPollDeps } from "./long-poll.js";
import { NO_DIRECTORY, type PeopleDirectory } from "./directory.js";
import { refusalFor, type Answerer, type Refusal } from "./policy.js";
import { Reminders } from "./reminders.js";
import { NO_METRICS, type RequestMetrics } from "./metrics.js";
import { extendPending, type MoreTimeResult } from "./more-time.js";
import { expiryOf } from "./timeout.js";
import { OutcomeNotices } from "./outcome-notices.js";

import { RuleBook, type RuleGrant } from "./rule-book.js";
import { ruleTalliesOf } from "./rule-tally.js";
import { createRequest, type CreatingContext } from "./creating.js";
import { DEFAULT_POST_LEASE_MS, type CreateInput, type RequestServiceDeps } from "./service-deps.js";
import { ruleDecision, takesRules } from "./rule-matching.js";
import { isRequestMessage, unknownCopy, type FromMessage, type FromMessageResult } from "./from-message.js";

/**
 * The longest between two expiry sweeps (ms): a request is seen expired, its
 * callback sent and its message updated at most this long after its
 * deadline (one read of the deadlines per shard, per instance, each time).
 * The relay's expiry promise is "by the deadline plus a small grace", and on
 * a loaded machine, or with one instance left during a rolling restart, a
 * whole second here was most of what a late callback was late by.
 */
export const EXPIRY_SWEEP_MS = 250;
export { PermanentDeliveryError, TransientDeliveryError, type PostedMessage, type PostOptions, type RequestMessenger } from "./delivery.js";
export type { AnswerResult } from "./answering.js";
export type { MoreTimeResult } from "./more-time.js";
export type { RuleGrant } from "./rule-book.js";

export { DEFAULT_POLICY, DEFAULT_POST_LEASE_MS, type CreateInput, type RequestServiceDeps } from "./service-deps.js";
export { RELAY_PERSON } from "./new-record.js";

export class RequestService {
  private readonly store: RequestStore;
  private readonly logger: Logger;
  private readonly now: () => number;
  private readonly newId: (tokenName?: string) => string;
  private readonly waiters: Waiters;
  private readonly ending: Ending;
  private readonly delivery: Delivery;
  private readonly updates: UpdateOutbox;
  /** Every leased queue but the callbacks: posting, message updates, reminders, outcome notices, rule tallies. */
  private readonly worker: QueueWorker;
  private readonly outage: OutageLog;
  /** Settles once the worker started by startSweeper has stopped. */
  private workerStopped: Promise<void> = Promise.resolve();
  private readonly directory: PeopleDirectory;
  private readonly audit: AuditRecorder;
  private readonly limits: CreateLimits;
  private readonly metrics: RequestMetrics;
  /** "Allow for a while" rules: listed and revoked through here (HTTP, App Home); undefined without a rule store. */
  readonly rules: RuleBook | undefined;
  private readonly creating: CreatingContext;
  private readonly unsubscribe: () => void;
  private readonly unsubscribeResync: () => void;
  private closed = false;
  private draining = false;
  /** Told the id of every request created here or ended anywhere (the web console's live queue). */
  private readonly changes: RequestChanges;
  private readonly announcer: Pick<RequestChanges, "tell">;

  constructor(private readonly deps: RequestServiceDeps) {
    this.store = deps.store;
    this.logger = deps.logger ?? silentLogger;
    this.now = deps.now ?? Date.now;
    this.newId = deps.newId ?? ((tokenName) => deps.store.newId(tokenName));
    this.waiters = new Waiters();
    this.longPolls = { waiters: this.waiters, get: (id) => this.getExpiringIfOverdue(id), now: this.now, closed: () => this.closed };
    this.directory = deps.directory ?? NO_DIRECTORY;
    this.audit = deps.audit ?? NO_AUDIT;
    this.metrics = deps.metrics ?? NO_METRICS;
    this.limits = new CreateLimits({ audit: this.audit, metrics: this.metrics, logger: this.logger, now: this.now });
    this.changes = new RequestChanges(this.logger);
    // Creates, posts, approvals and more time are announced through the store, so every instance's listeners hear them.
    this.announcer = { tell: (id) => this.store.announce(id) };
    // Without Slack no request gets a message, and only a request with one is updated, reminded or told about.
    const messenger = deps.messenger ?? NO_SLACK;
    this.outage = new OutageLog(this.logger, "background sweeps pause");
    this.worker = new QueueWorker({
      store: deps.store,
      logger: this.logger,
      now: this.now,
      outage: this.outage,
      ...(deps.queueMetrics ? { metrics: deps.queueMetrics } : {}),
    });
    this.updates = new UpdateOutbox({ store: deps.store, messenger, worker: this.worker, logger: this.logger, now: this.now });
    this.ending = new Ending({
      store: deps.store,
      waiters: this.waiters,
      updates: this.updates,
      audit: this.audit,
      metrics: this.metrics,
      logger: this.logger,
    });
    this.delivery = new Delivery({
      store: deps.store,
      worker: this.worker,
      messenger,
      logger: this.logger,
      now: this.now,
      postLeaseMs: deps.postLeaseMs ?? DEFAULT_POST_LEASE_MS,
      ending: this.ending,
      updates: this.updates,
      audit: this.audit,
      changes: this.announcer,
    });
    // Without Slack nothing is posted: the posting queue has no handler (recoverUnposted posts nothing).
    if (this.withSlack) this.worker.add(this.delivery);
    this.worker.add(this.updates);
    this.worker.add(new Reminders({ store: deps.store, messenger, audit: this.audit, logger: this.logger, now: this.now }));
    this.worker.add(new OutcomeNotices({ store: deps.store, messenger, logger: this.logger, now: this.now }));
    const tallies = deps.rules
      ? ruleTalliesOf({ rules: deps.rules, store: deps.store, worker: this.worker, messenger, logger: this.logger, now: this.now })
      : undefined;
    if (tallies) this.worker.add(tallies);
    this.rules = deps.rules
      ? new RuleBook({ store: deps.rules, directory: this.directory, audit: this.audit, ...(tallies ? { tallies } : {}), logger: this.logger, now: this.now })
      : undefined;
    this.creating = {
      deps,
      store: deps.store,
      rules: this.rules,
      now: this.now,
      newId: this.newId,
      delivery: this.delivery,
      audit: this.audit,
      metrics: this.metrics,
      changes: this.announcer,
      limits: this.limits,
      logger: this.logger,
    };
    const stopEnded = this.store.onEnded((id) => {
      // A request this instance is ending wakes its waiters from end(), with the record: no re-read.
      if (!this.ending.has(id)) this.waiters.wake(id);
      this.delivery.forget(id);
      this.changes.tell(id);
    });
    // Changes short of an end, announced by any instance (this one included).
    const stopChanged = this.store.onChanged((id) => this.changes.tell(id));
    this.unsubscribe = () => {
      stopEnded();
      stopChanged();
    };
    // Notifications lost while the store was away: every waiter reads its request again.
    this.unsubscribeResync = this.store.onResync(() => this.waiters.wakeAll());
  }

  /**
   * Stores a new request under its route's policy (./creating.ts) and starts
   * posting it; throws relay_shutting_down (503) once the instance drains: a
   * new request belongs to an instance that stays.
   */
  async create(input: CreateInput): Promise<CreateResult> {
    if (this.draining) throw shuttingDown();
    return createRequest(this.creating, input);
  }

  /**
   * A create of the agent token `tokenName` was refused by the HTTP layer's
   * rate limit (RELAY_CREATE_RATE_LIMIT); `reference` is the HTTP request's
   * id. Counted and audited as ./limits.ts says.
   */
  rateLimited(tokenName: string, reference: string, perMinute: number): void {
    this.limits.refused(tokenName, "rate_limited", reference, `more than ${perMinute} creates a minute`);
  }

  /** The request as stored: a read, nothing written (one past its deadline stays pending until something expires it). */
  get(id: string): Promise<RequestRecord | undefined> {
    return this.store.get(id);
  }

  /**
   * The request as it is now, for a caller that shows it to an agent or a
   * person: one still pending past its deadline is expired first (a store
   * write), so it is seen ended at its deadline, not at the next sweep.
   */
  async getExpiringIfOverdue(id: string): Promise<RequestRecord | undefined> {
    const record = await this.store.get(id);
    if (record?.status === "pending" && record.expiresAt <= this.now()) {
      const result = await this.end(id, this.expiry(id, record));
      return "record" in result ? result.record : undefined;
    }
    return record;
  }

  /**
   * Records `slack` as another message of the request (one Slack confirmed
   * was posted for it, e.g. a copy a click came from); returns the record as
   * it now is. When the request has ended, the copy is updated too.
   */
  async adoptMessage(id: string, slack: SlackRef): Promise<RequestRecord | undefined> {
    const record = await this.store.addOtherMessage(id, slack);
    if (record) this.logger.warn({ id, channel: slack.channel, ts: slack.ts }, "another message of the request was found and recorded");
    if (record && record.status !== "pending") this.updates.show(record);
    return record;
  }

  /** The request a Slack message (channel + ts) belongs to, as `getExpiringIfOverdue` returns it. */
  async findBySlackMessage(slack: SlackRef): Promise<RequestRecord | undefined> {
    const id = await this.store.findBySlackMessage(slack);
    return id === undefined ? undefined : this.getExpiringIfOverdue(id);
  }

  /**
   * The request `id` names (or, without one, the request `message` belongs
   * to), as `getExpiringIfOverdue` returns it, when `message` is one of its
   * own (./from-message.ts); undefined otherwise. Throws when Slack cannot
   * say whether a copy the store does not know is the request's (its lookup
   * failing): the caller tells the person to try again rather than ignoring them.
   */
  async requestOnMessage(id: string | undefined, message: Partial<SlackRef>): Promise<RequestRecord | undefined> {
    const { channel, ts } = message;
    const record =
      id !== undefined
        ? await this.getExpiringIfOverdue(id)
        : channel !== undefined && ts !== undefined
          ? await this.findBySlackMessage({ channel, ts })
          : undefined;
    if (!record || isRequestMessage(record, message)) return record;
    const copy = unknownCopy(record, message);
    if (!copy || !this.deps.messageCopies || !(await this.deps.messageCopies.isRequestMessage(copy, record.id))) return undefined;
    return this.adoptMessage(record.id, copy);
  }

  /**
   * A click, modal submission or thread reply on a Slack message, in one
   * call: it counts only on the request's own message (./from-message.ts);
   * `read` turns it into a decision on the request as stored, which is then
   * answered as `answer` does. `no_answer` when `read` made none.
   */
  async answerFromMessage<T>({ id, message, person, read }: FromMessage<T>): Promise<FromMessageResult<T>> {
    const record = await this.requestOnMessage(id, message);
    if (!record) return { outcome: "not_found" };
    const reading = read(record);
    if ("none" in reading) return { outcome: "no_answer", record, none: reading.none };
    return this.answerRecord(record, reading.decision, person);
  }

  /**
   * The newest pending requests, at most `limit`, newest first (the App
   * Home tab lists those a person may answer): as stored, so one past its
   * deadline is listed until the sweep expires it.
   */
  listPending(limit: number): Promise<RequestRecord[]> {
    return this.store.listRequests({ status: "pending", limit });
  }

  /**
   * Holds until the request is no longer pending, `waitMs` pass or `signal`
   * aborts, then returns it as it is (./long-poll.ts, store outages included).
   */
  wait(id: string, waitMs: number, signal?: LeaveSignal): Promise<RequestRecord | undefined> {
    return holdUntilEnded(this.longPolls, id, waitMs, signal);
  }

  /** What every long-poll holds: made once, not per wait (thousands may be held at once). */
  private readonly longPolls: LongPollDeps;

  /**
   * Records a person's answer under the request's policy (./answering.ts):
   * refused when they may not answer, counted towards a quorum, or the first
   * answer that wins; the store's atomic step decides who wins.
   */
  async answer(id: string, decision: Decision, person: Answerer): Promise<AnswerResult> {
    return this.answerRecord(await this.getExpiringIfOverdue(id), decision, person);
  }

  /** `answer` on the request as just read (pending past its deadline already expired). */
  private async answerRecord(record: RequestRecord | undefined, decision: Decision, person: Answerer): Promise<AnswerResult> {
    if (!record) return { outcome: "not_found" };
    if (record.status !== "pending") return { outcome: "already_ended", record };
    if (!decisionMatchesKind(record.body.kind, decision)) {
      throw new RelayError("relay_invalid_request", `A ${record.body.kind} request cannot take this decision.`);
    }
    const result = await answerPending(
      { store: this.store, directory: this.directory, audit: this.audit, now: this.now, ending: this.ending, updates: this.updates },
      record,
      decision,
      person,
    );
    // An approval towards a quorum: every instance's console shows it (an end is heard through the store's own notice).
    if (result.outcome === "counted") this.changed(record.id);
    return result;
  }

  /**
   * Gives the request more time (./more-time.ts): refused, as an answer
   * would be, when `person` may not answer it; none for a request whose
   * caller gives up at its deadline, or past the longest wait.
   */
  async extend(id: string, person: Answerer): Promise<MoreTimeResult> {
    return this.extendRecord(await this.getExpiringIfOverdue(id), person);
  }

  /** `extend` from a click on a Slack message: it counts only on the request's own message, as in `answerFromMessage`. */
  async extendFromMessage(id: string, message: Partial<SlackRef>, person: Answerer): Promise<MoreTimeResult> {
    return this.extendRecord(await this.requestOnMessage(id, message), person);
  }

  private async extendRecord(record: RequestRecord | undefined, person: Answerer): Promise<MoreTimeResult> {
    if (!record) return { outcome: "not_found" };
    if (record.status !== "pending") return { outcome: "already_ended", record };
    const result = await extendPending(
      { store: this.store, directory: this.directory, audit: this.audit, now: this.now, updates: this.updates },
      record,
      person,
    );
    if (result.outcome === "applied") this.changed(record.id);
    return result;
  }

  /**
   * A click on "Allow for a while": answers the request as the rule would
   * (permission: allow with the input unchanged; step_gate: y) exactly as
   * `answer` does, and only when that answer applied creates the rule
   * (./rule-book.ts: two ordered steps). `rule` settles once the rule is
   * stored, so a caller may reply before it does. The service reads the
   * request itself (one pending past its deadline is expired first), as
   * `answer` and `answerFromMessage` do.
   */
  async allowForAWhile(id: string, person: Answerer): Promise<RuleGrant> {
    const record = await this.getExpiringIfOverdue(id);
    if (!record) return { answer: { outcome: "not_found" } };
    if (record.status !== "pending") return { answer: { outcome: "already_ended", record } };
    if (!takesRules(record)) {
      throw new RelayError("relay_invalid_request", "This request takes no rule (its kind, its session, its policy or its quorum).");
    }
    const answer = await this.answerRecord(record, ruleDecision(record), person);
    if (answer.outcome !== "applied") return { answer };
    return { answer, rule: this.rules ? this.rules.create(answer.record, person) : Promise.resolve(undefined) };
  }

  /** Why `person` may not answer the request now (an answer would be refused), or undefined: e.g. before a modal opens. */
  refusalFor(record: RequestRecord, person: Answerer): Promise<Refusal | undefined> {
    return refusalFor(record, person, this.now(), this.directory);
  }

  async cancel(id: string, by?: string, reason?: string): Promise<TransitionResult> {
    const change: Transition = { status: "cancelled", at: this.now() };
    if (by !== undefined) change.by = by;
    if (reason !== undefined) change.reason = reason;
    return this.end(id, change);
  }

  /** Expires every request past its deadline; safe to run on every instance. */
  async expireDue(limit = 500): Promise<number> {
    const ids = await this.store.dueForExpiry(this.now(), limit);
    let expired = 0;
    for (const id of ids) {
      // Read first: what the expiry carries depends on the request's kind and route (./timeout.ts).
      const result = await this.end(id, this.expiry(id, await this.store.get(id)));
      if (result.outcome === "applied") expired += 1;
    }
    return expired;
  }

  /**
   * Posts the requests whose poster (on any instance) stopped before their
   * message was recorded, once its lease ran out; safe to run on every
   * instance. Returns how many posts it started.
   */
  async recoverUnposted(): Promise<number> {
    return this.withSlack ? (await this.worker.runOnce("posting")).done : 0;
  }

  /**
   * Rewrites the messages of ended requests whose update is due (a failed
   * attempt's retry, or one an instance left behind), on any instance; safe
   * to run on every instance. Returns how many it tried.
   */
  async sweepUpdates(): Promise<number> {
    const { done, retried, dropped, released } = await this.worker.runOnce("updates");
    return done + retried + dropped + released;
  }

  /**
   * Sends the reminders and escalations that are due, on any instance; safe
   * to run on every instance (each is claimed by one). Returns how many it sent.
   */
  async sweepReminders(): Promise<number> {
    return (await this.worker.runOnce("reminders")).done;
  }

  /**
   * Sends the outcome notices that are due (the thread reply and the
   * requester's DM of ended requests, ./outcome-notices.ts), on any
   * instance; safe to run on every instance (each part is claimed by one).
   * Returns how many parts it sent.
   */
  async sweepNotices(): Promise<number> {
    return (await this.worker.runOnce("notices")).done;
  }

  /**
   * Runs `expireDue` every `intervalMs`, or every EXPIRY_SWEEP_MS when that
   * is sooner (./sweeper.ts), and the queue worker (./queue-worker.ts:
   * posting recovery, message updates, reminders, outcome notices, rule
   * tallies), each queue looking every `intervalMs` when nothing is due;
   * returns a function that stops both (`idle` waits for the worker's stop).
   */
  startSweeper(intervalMs: number): () => void {
    const expiryMs = Math.min(intervalMs, EXPIRY_SWEEP_MS);
    const stopExpiry = startSweeper([{ name: "expiry sweep", run: () => this.expireDue() }], expiryMs, this.outage);
    this.worker.start(intervalMs);
    return () => {
      stopExpiry();
      this.workerStopped = this.worker.stop();
    };
  }

  /** Resolves when every background Slack call started so far has settled. */
  async idle(): Promise<void> {
    await this.delivery.idle();
    await this.updates.idle();
    await this.workerStopped;
    await this.worker.idle();
    await this.rules?.idle();
  }

  /**
   * Calls `listener` with the id of each request that is created, gets an
   * approval or more time, is posted, or ends, on any instance sharing the
   * store (its notifications: Redis pub/sub across instances); returns a
   * function that stops it.
   */
  onChange(listener: (id: string) => void): () => void {
    return this.changes.on(listener);
  }

  /** Tells every instance's change listeners (the console's streams) that request `id` changed short of an end. */
  changed(id: string): void {
    this.store.announce(id);
  }

  /**
   * Tells every instance sharing the store (this one included) that an agent
   * cancelled its held call `key`, which may be held on another instance (an
   * MCP tools/call over stateless HTTP); best effort. `onCallCancelled`
   * listeners hear it; the one holding the call lets it go. With
   * `rememberMs`, `wasCallCancelled` says so for that long, for a call that
   * comes after its cancel. Resolves once done (remembered, when it is), never rejects.
   */
  announceCancelledCall(key: string, rememberMs?: number): Promise<void> {
    return this.store.announceCancelledCall(key, rememberMs);
  }

  /** true when the call `key` was announced cancelled (with `rememberMs`) recently enough; false too when the store cannot say. */
  async wasCallCancelled(key: string): Promise<boolean> {
    return this.store.wasCallCancelled(key).catch(() => false);
  }

  /** Calls `listener` with the key of every call announced cancelled, on any instance; returns a function that stops it. */
  onCallCancelled(listener: (key: string) => void): () => void {
    return this.store.onCancelledCall(listener);
  }

  /** false when the relay runs without Slack (no messenger): requests are answered in the console only. */
  get withSlack(): boolean {
    return this.deps.messenger !== undefined;
  }

  /** Number of long-polls currently held open. */
  get waiting(): number {
    return this.waiters.size;
  }

  /**
   * Shutdown, first step: no new request is created here (create throws
   * relay_shutting_down); everything else goes on, so the calls already held
   * may still be answered (clicks are recorded, long-polls woken) until close().
   */
  drain(): void {
    this.draining = true;
  }

  /** true once drain() (or close()) was called. */
  get isDraining(): boolean {
    return this.draining || this.closed;
  }

  /**
   * Cancels every pending request, for a store that does not outlive this
   * process (memory): nobody could answer them after it, and their Slack
   * messages would keep live buttons. Returns how many it cancelled.
   */
  async cancelAllPending(by: string, reason: string, limit = 10_000): Promise<number> {
    const ids = await this.store.dueForExpiry(Number.MAX_SAFE_INTEGER, limit);
    let cancelled = 0;
    for (const id of ids) {
      const result = await this.cancel(id, by, reason);
      if (result.outcome === "applied") cancelled += 1;
    }
    return cancelled;
  }

  /** true once close() was called: long-polls return what they have. */
  get isClosed(): boolean {
    return this.closed;
  }

  /** Releases every held long-poll (they return the request as it is) and stops listening. */
  close(): void {
    this.draining = true;
    this.closed = true;
    this.unsubscribe();
    this.unsubscribeResync();
    this.delivery.close();
    this.waiters.wakeAll();
  }

  /** The expiry of a request now, with what its route's onTimeout makes it carry; the error says why when it never reached Slack. */
  private expiry(id: string, record: RequestRecord | undefined): Transition {
    return expiryOf(record, this.now(), this.withSlack ? this.delivery.unpostedError(id) : undefined);
  }

  /** Ends the request through this instance's one ending step (./ending.ts). */
  private end(id: string, change: Transition): Promise<TransitionResult> {
    return this.ending.end(id, change);
  }
}
