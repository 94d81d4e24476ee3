/**
 * In-memory RequestStore for a single relay instance (no REDIS_URL). Same
 * contract as the Redis store; state is lost when the process exits.
 *
 * Each request is kept as its record's JSON text, as the Redis store keeps
 * it, and parsed afresh on every read: no caller ever holds an object the
 * store holds, as a structured clone on every read and write ensured before,
 * with less heap per request (2,000-request heap snapshots: the record's
 * objects, strings and numbers about 1,080 bytes, the text and its entry
 * about 770), and a parse costs less than a structured clone. Beside
 * the text, the entry has the fields the store's own steps read across many
 * requests (the expiry sweep, listing, a token's pending cap), so those never
 * parse.
 */
import { randomUUID } from "node:crypto";
import type { SlackRef } from "../protocol/request-view.js";
import type { RequestRecord } from "../requests/model.js";
import { RequestStatus } from "../protocol/request-view.js";
import { TooManyPendingError } from "../requests/errors.js";
import {
  DEFAULT_RETENTION_MS,
  MAX_REMEMBERED_CANCELS,
  UPDATE_GRACE_MS,
  type ApproveResult,
  type CreateOptions,
  type CreateResult,
  type ExtendResult,
  type RequestStore,
  type Transition,
  type TransitionResult,
} from "../requests/store.js";
import { compareStrings } from "./leased-queue.js";
import { MemoryQueues } from "./memory-queues.js";
import { applyApproval, applyTransition } from "./transition.js";

export interface MemoryStoreOptions {
  /** How long an ended request stays readable (ms). */
  retentionMs?: number;
  /** Unix time in milliseconds. */
  now?: () => number;
}

/** A request as the store keeps it: the record's JSON text and what the store looks at without parsing it. */
interface Kept {
  readonly text: string;
  readonly status: RequestStatus;
  readonly tokenName: string;
  readonly createdAt: number;
  readonly expiresAt: number;
}

/** The status as the enum's own string, so an entry does not keep a parsed copy of it. */
const statusOf = (status: RequestStatus): RequestStatus => RequestStatus.options.find((known) => known === status) ?? status;

export function createMemoryStore({ retentionMs = DEFAULT_RETENTION_MS, now = Date.now }: MemoryStoreOptions = {}): RequestStore {
  const records = new Map<string, Kept>();
  /** Ids of pending requests, so the expiry sweep never walks the ended ones kept for retention. */
  const pendingIds = new Set<string>();
  /** Each agent token's pending request ids (CreateOptions.maxPending). */
  const pendingOfToken = new Map<string, Set<string>>();
  /** CreateOptions.sameAs → the pending request it names, and back. */
  const sameAsIds = new Map<string, string>();
  const sameAsOf = new Map<string, string>();
  const idempotency = new Map<string, string>();
  /** The idempotency key each request was created with, to forget it with the request. */
  const idempotencyKeyOf = new Map<string, string>();
  const messages = new Map<string, string>();
  const listeners = new Set<(id: string) => void>();
  const changeListeners = new Set<(id: string) => void>();
  const cancelListeners = new Set<(key: string) => void>();
  /** Cancelled call keys remembered (announceCancelledCall), in the order remembered → until when (Unix ms). */
  const cancelledCalls = new Map<string, number>();
  const queues = new MemoryQueues();
  const callbacks = queues.of("callbacks");
  const updates = queues.of("updates");
  const posting = queues.of("posting");
  /** Ended ids with the time they may be forgotten, oldest first. */
  const forget: Array<{ id: string; at: number }> = [];

  /** The record as it is now: an object of the caller's own. */
  const read = (kept: Kept): RequestRecord => JSON.parse(kept.text) as RequestRecord;
  const load = (id: string): RequestRecord | undefined => {
    const kept = records.get(id);
    return kept && read(kept);
  };
  /** Keeps `record` as it is now (later changes to the object do not reach the store); the token's name is shared with the entry before. */
  function save(record: RequestRecord): void {
    const before = records.get(record.id);
    records.set(record.id, {
      text: JSON.stringify(record),
      status: statusOf(record.status),
      tokenName: before?.tokenName === record.tokenName ? before.tokenName : record.tokenName,
      createdAt: record.createdAt,
      expiresAt: record.expiresAt,
    });
  }
  // join makes one flat string (a template literal this long is a string of pieces, about 120 bytes more a request).
  const messageKey = (slack: SlackRef) => [slack.channel, slack.ts].join(":");

  /** Remembers `key` until `until`, dropping what has expired and, past the bound, the oldest. */
  function rememberCancel(key: string, until: number): void {
    cancelledCalls.delete(key);
    cancelledCalls.set(key, until);
    for (const [oldest, end] of cancelledCalls) {
      if (end > now() && cancelledCalls.size <= MAX_REMEMBERED_CANCELS) break;
      cancelledCalls.delete(oldest);
    }
  }

  /** Forgets the requests whose retention has passed; runs on every access. */
  function prune(): void {
    const t = now();
    while (forget.length > 0 && forget[0]!.at <= t) {
      const { id } = forget.shift()!;
      const record = load(id);
      records.delete(id);
      if (record?.slack) messages.delete(messageKey(record.slack));
      for (const other of record?.otherMessages ?? []) messages.delete(messageKey(other));
      const key = idempotencyKeyOf.get(id);
      if (key !== undefined && idempotency.get(key) === id) idempotency.delete(key);
      idempotencyKeyOf.delete(id);
      queues.forget(id);
    }
  }

  /** Keeps `forget` sorted by time even when transitions arrive with out-of-order `at`. */
  function forgetAt(id: string, at: number): void {
    let index = forget.length;
    while (index > 0 && forget[index - 1]!.at > at) index -= 1;
    forget.splice(index, 0, { id, at });
  }

  /** A request left `pending`: it no longer counts for its token, nor may a create join it. */
  function notPending({ id, tokenName }: RequestRecord): void {
    const mine = pendingOfToken.get(tokenName);
    mine?.delete(id);
    if (mine?.size === 0) pendingOfToken.delete(tokenName);
    const sameAs = sameAsOf.get(id);
    if (sameAs !== undefined && sameAsIds.get(sameAs) === id) sameAsIds.delete(sameAs);
    sameAsOf.delete(id);
  }

  /** Part of the step that ends a request, as in the Redis scripts. */
  function queueCallback(record: RequestRecord, at: number): void {
    if (record.body.callbackUrl !== undefined) callbacks.add(record.id, at);
  }

  /** The bookkeeping of every step that ends a request (lua/includes/common.lua's `finish`). */
  function finish(record: RequestRecord, at: number): void {
    const id = record.id;
    save(record);
    pendingIds.delete(id);
    notPending(record);
    // Still being posted: its post may have reached Slack unrecorded, and the update looks for it.
    const unposted = posting.has(id);
    posting.complete(id);
    queues.dropReminders(id);
    forgetAt(id, at + retentionMs);
    queueCallback(record, at);
    if (record.slack || unposted) updates.add(id, at + UPDATE_GRACE_MS);
    queues.queueNotices(record, at);
    // After this step returns, as Redis's notification comes after its reply: the service wakes its own waiters with the record first.
    queueMicrotask(() => listeners.forEach((listener) => listener(id)));
  }

  return {
    newId: () => randomUUID(),

    async create(record: RequestRecord, { idempotencyKey, postLeaseUntil, maxPending, sameAs }: CreateOptions = {}): Promise<CreateResult> {
      prune();
      if (idempotencyKey !== undefined) {
        const existing = idempotency.get(idempotencyKey);
        const found = existing === undefined ? undefined : load(existing);
        if (found) return { record: found, created: false };
      }
      const joined = sameAs === undefined ? undefined : sameAsIds.get(sameAs);
      if (joined !== undefined) return { record: load(joined)!, created: false, joined: true };
      if (records.has(record.id)) throw new Error(`a request with id ${record.id} already exists`);
      const mine = pendingOfToken.get(record.tokenName) ?? new Set<string>();
      if (record.status === "pending" && maxPending !== undefined && mine.size >= maxPending) {
        const earliestEnd = Math.min(...[...mine].map((id) => records.get(id)!.expiresAt));
        throw new TooManyPendingError(mine.size, maxPending, earliestEnd, now());
      }
      if (idempotencyKey !== undefined) {
        idempotency.set(idempotencyKey, record.id);
        idempotencyKeyOf.set(record.id, idempotencyKey);
      }
      save(record);
      if (record.status === "pending") {
        pendingIds.add(record.id);
        pendingOfToken.set(record.tokenName, mine.add(record.id));
        if (sameAs !== undefined) {
          sameAsIds.set(sameAs, record.id);
          sameAsOf.set(record.id, sameAs);
        }
      }
      if (record.status === "pending" && !record.slack) posting.add(record.id, postLeaseUntil ?? now());
      if (record.status !== "pending") {
        forgetAt(record.id, (record.endedAt ?? now()) + retentionMs);
        queueCallback(record, now());
        queueMicrotask(() => listeners.forEach((listener) => listener(record.id)));
      }
      return { record: read(records.get(record.id)!), created: true };
    },

    async get(id) {
      prune();
      return load(id);
    },

    async setSlackMessage(id, slack, options = {}) {
      prune();
      const record = load(id);
      if (!record) return undefined;
      record.slack = { channel: slack.channel, ts: slack.ts };
      messages.set(messageKey(slack), id);
      posting.complete(id);
      if (record.status !== "pending") {
        updates.add(id, now() + UPDATE_GRACE_MS);
        queues.queueNotices(record, now());
      } else if (record.postedAt === undefined) {
        record.postedAt = options.postedAt ?? now();
        queues.queueReminders(id, options.reminders ?? []);
      }
      save(record);
      return record;
    },

    async addOtherMessage(id, slack) {
      prune();
      const record = load(id);
      if (!record) return undefined;
      const ref = { channel: slack.channel, ts: slack.ts };
      const others = (record.otherMessages ?? []).filter((other) => other.channel !== ref.channel || other.ts !== ref.ts);
      record.otherMessages = [...others, ref].sort((a, b) => a.ts.localeCompare(b.ts));
      messages.set(messageKey(ref), id);
      if (record.status !== "pending") updates.add(id, now() + UPDATE_GRACE_MS);
      save(record);
      return record;
    },

    async findBySlackMessage(slack) {
      prune();
      return messages.get(messageKey(slack));
    },

    async transition(id: string, change: Transition): Promise<TransitionResult> {
      prune();
      const record = load(id);
      if (!record) return { outcome: "not_found" };
      const result = applyTransition(record, change);
      if (result.outcome !== "applied") return { outcome: result.outcome, record };
      finish(result.record, change.at);
      return { outcome: "applied", record: result.record };
    },

    async approve(id, approval, quorum, final): Promise<ApproveResult> {
      prune();
      const record = load(id);
      if (!record) return { outcome: "not_found" };
      const result = applyApproval(record, approval, quorum, final);
      if (!("record" in result)) return { outcome: result.outcome, record };
      if (result.outcome === "applied") finish(result.record, final.at);
      else {
        save(result.record);
        if (result.record.slack) updates.add(id, approval.at + UPDATE_GRACE_MS);
      }
      return { outcome: result.outcome, record: result.record };
    },

    async extend(id, expiresAt): Promise<ExtendResult> {
      prune();
      const record = load(id);
      if (!record) return { outcome: "not_found" };
      if (record.status !== "pending") return { outcome: "already_ended", record };
      record.expiresAt = Math.max(record.expiresAt, expiresAt);
      save(record);
      if (record.slack) updates.add(id, now() + UPDATE_GRACE_MS);
      return { outcome: "applied", record };
    },

    async listRequests({ status, tokenName, limit }) {
      prune();
      const matching = [...records].filter(
        ([, kept]) => (status === undefined || kept.status === status) && (tokenName === undefined || kept.tokenName === tokenName),
      );
      matching.sort(([aId, a], [bId, b]) => b.createdAt - a.createdAt || compareStrings(bId, aId));
      return matching.slice(0, Math.max(limit, 0)).map(([, kept]) => read(kept));
    },

    async dueForExpiry(at, limit) {
      prune();
      const due: string[] = [];
      for (const id of pendingIds) {
        if (due.length >= limit) break;
        const record = records.get(id);
        if (record && record.expiresAt <= at) due.push(id);
      }
      return due;
    },

    counts: async () => ({ pending: pendingIds.size, callbacks: callbacks.size }),

    ...queues.methods((id) => {
      prune();
      return load(id);
    }),

    onEnded(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },

    announce(id) {
      queueMicrotask(() => changeListeners.forEach((listener) => listener(id)));
    },

    onChanged(listener) {
      changeListeners.add(listener);
      return () => changeListeners.delete(listener);
    },

    async announceCancelledCall(key, rememberMs) {
      if (rememberMs !== undefined) rememberCancel(key, now() + rememberMs);
      queueMicrotask(() => cancelListeners.forEach((listener) => listener(key)));
    },

    async wasCallCancelled(key) {
      return (cancelledCalls.get(key) ?? -Infinity) > now();
    },

    onCancelledCall(listener) {
      cancelListeners.add(listener);
      return () => cancelListeners.delete(listener);
    },

    // Memory never loses its notifications: nothing to resync.
    onResync: () => () => undefined,

    async ready() {},
    async ping() {
      return true;
    },
    async close() {
      listeners.clear();
      changeListeners.clear();
      cancelListeners.clear();
      cancelledCalls.clear();
    },
  };
}
