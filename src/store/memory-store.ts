/**
 * In-memory RequestStore for a single relay instance (no REDIS_URL). Same
 * contract as the Redis store; state is lost when the process exits.
 */
import { randomUUID } from "node:crypto";
import type { SlackRef } from "../protocol/request-view.js";
import type { RequestRecord } from "../requests/model.js";
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

export function createMemoryStore({ retentionMs = DEFAULT_RETENTION_MS, now = Date.now }: MemoryStoreOptions = {}): RequestStore {
  const records = new Map<string, RequestRecord>();
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

  const clone = (record: RequestRecord): RequestRecord => structuredClone(record);
  const messageKey = (slack: SlackRef) => `${slack.channel}:${slack.ts}`;

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
      const record = records.get(id);
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
    records.set(id, record);
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
        const found = existing === undefined ? undefined : records.get(existing);
        if (found) return { record: clone(found), created: false };
      }
      const joined = sameAs === undefined ? undefined : sameAsIds.get(sameAs);
      if (joined !== undefined) return { record: clone(records.get(joined)!), created: false, joined: true };
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
      records.set(record.id, clone(record));
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
      return { record: clone(record), created: true };
    },

    async get(id) {
      prune();
      const record = records.get(id);
      return record && clone(record);
    },

    async setSlackMessage(id, slack, options = {}) {
      prune();
      const record = records.get(id);
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
      return clone(record);
    },

    async addOtherMessage(id, slack) {
      prune();
      const record = records.get(id);
      if (!record) return undefined;
      const ref = { channel: slack.channel, ts: slack.ts };
      const others = (record.otherMessages ?? []).filter((other) => other.channel !== ref.channel || other.ts !== ref.ts);
      record.otherMessages = [...others, ref].sort((a, b) => a.ts.localeCompare(b.ts));
      messages.set(messageKey(ref), id);
      if (record.status !== "pending") updates.add(id, now() + UPDATE_GRACE_MS);
      return clone(record);
    },

    async findBySlackMessage(slack) {
      prune();
      return messages.get(messageKey(slack));
    },

    async transition(id: string, change: Transition): Promise<TransitionResult> {
      prune();
      const record = records.get(id);
      if (!record) return { outcome: "not_found" };
      const result = applyTransition(record, change);
      if (result.outcome !== "applied") return { outcome: result.outcome, record: clone(record) };
      finish(result.record, change.at);
      return { outcome: "applied", record: clone(result.record) };
    },

    async approve(id, approval, quorum, final): Promise<ApproveResult> {
      prune();
      const record = records.get(id);
      if (!record) return { outcome: "not_found" };
      const result = applyApproval(record, approval, quorum, final);
      if (!("record" in result)) return { outcome: result.outcome, record: clone(record) };
      if (result.outcome === "applied") finish(result.record, final.at);
      else {
        records.set(id, result.record);
        if (result.record.slack) updates.add(id, approval.at + UPDATE_GRACE_MS);
      }
      return { outcome: result.outcome, record: clone(result.record) };
    },

    async extend(id, expiresAt): Promise<ExtendResult> {
      prune();
      const record = records.get(id);
      if (!record) return { outcome: "not_found" };
      if (record.status !== "pending") return { outcome: "already_ended", record: clone(record) };
      record.expiresAt = Math.max(record.expiresAt, expiresAt);
      if (record.slack) updates.add(id, now() + UPDATE_GRACE_MS);
      return { outcome: "applied", record: clone(record) };
    },

    async listRequests({ status, tokenName, limit }) {
      prune();
      const matching = [...records.values()].filter(
        (record) => (status === undefined || record.status === status) && (tokenName === undefined || record.tokenName === tokenName),
      );
      matching.sort((a, b) => b.createdAt - a.createdAt || compareStrings(b.id, a.id));
      return matching.slice(0, Math.max(limit, 0)).map(clone);
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
      return records.get(id);
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
