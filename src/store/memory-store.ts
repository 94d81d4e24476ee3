/**
 * In-memory RequestStore for a single relay instance (no REDIS_URL). Same
 * contract as the Redis store; state is lost when the process exits.
 */
import type { SlackRef } from "../protocol/request-view.js";
import type { RequestRecord } from "../requests/model.js";
import {
  DEFAULT_RETENTION_MS,
  UPDATE_GRACE_MS,
  type ClaimedCallback,
  type ClaimedUpdate,
  type CreateOptions,
  type CreateResult,
  type RequestStore,
  type Transition,
  type TransitionResult,
} from "../requests/store.js";
import { applyTransition } from "./transition.js";

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
  const idempotency = new Map<string, string>();
  /** The idempotency key each request was created with, to forget it with the request. */
  const idempotencyKeyOf = new Map<string, string>();
  const messages = new Map<string, string>();
  const listeners = new Set<(id: string) => void>();
  /** Queued callbacks by request id: when each is due (Unix ms) and the attempts made. */
  const callbacks = new Map<string, { dueAt: number; attempts: number }>();
  /** Queued message updates of ended requests by id: when each is due (Unix ms) and the attempts made. */
  const updates = new Map<string, { dueAt: number; attempts: number }>();
  /** Pending requests whose Slack message is not recorded yet, by id: when their poster's lease ends (Unix ms). */
  const posting = new Map<string, number>();
  /** Ended ids with the time they may be forgotten, oldest first. */
  const forget: Array<{ id: string; at: number }> = [];

  const clone = (record: RequestRecord): RequestRecord => structuredClone(record);
  const messageKey = (slack: SlackRef) => `${slack.channel}:${slack.ts}`;

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
    }
  }

  /** Keeps `forget` sorted by time even when transitions arrive with out-of-order `at`. */
  function forgetAt(id: string, at: number): void {
    let index = forget.length;
    while (index > 0 && forget[index - 1]!.at > at) index -= 1;
    forget.splice(index, 0, { id, at });
  }

  /** Part of the step that ends a request, as in the Redis scripts. */
  function queueCallback(record: RequestRecord, at: number): void {
    if (record.body.callbackUrl !== undefined) callbacks.set(record.id, { dueAt: at, attempts: 0 });
  }

  return {
    async create(record: RequestRecord, { idempotencyKey, postLeaseUntil }: CreateOptions = {}): Promise<CreateResult> {
      prune();
      if (idempotencyKey !== undefined) {
        const existing = idempotency.get(idempotencyKey);
        const found = existing === undefined ? undefined : records.get(existing);
        if (found) return { record: clone(found), created: false };
      }
      if (records.has(record.id)) throw new Error(`a request with id ${record.id} already exists`);
      if (idempotencyKey !== undefined) {
        idempotency.set(idempotencyKey, record.id);
        idempotencyKeyOf.set(record.id, idempotencyKey);
      }
      records.set(record.id, clone(record));
      if (record.status === "pending") pendingIds.add(record.id);
      if (record.status === "pending" && !record.slack) posting.set(record.id, postLeaseUntil ?? now());
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

    async setSlackMessage(id, slack) {
      prune();
      const record = records.get(id);
      if (!record) return undefined;
      record.slack = { ...slack };
      messages.set(messageKey(slack), id);
      posting.delete(id);
      if (record.status !== "pending") updates.set(id, { dueAt: now() + UPDATE_GRACE_MS, attempts: 0 });
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
      if (record.status !== "pending") updates.set(id, { dueAt: now() + UPDATE_GRACE_MS, attempts: 0 });
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
      records.set(id, result.record);
      pendingIds.delete(id);
      posting.delete(id);
      forgetAt(id, change.at + retentionMs);
      queueCallback(result.record, change.at);
      if (result.record.slack) updates.set(id, { dueAt: change.at + UPDATE_GRACE_MS, attempts: 0 });
      // After this step returns, as Redis's notification comes after its reply: the service wakes its own waiters with the record first.
      queueMicrotask(() => listeners.forEach((listener) => listener(id)));
      return { outcome: "applied", record: clone(result.record) };
    },

    // Issue 8 store work in progress (approvals, reminders, listing): replaced before it lands.
    approve: () => Promise.reject(new Error("approve: not built yet")),
    claimReminders: () => Promise.reject(new Error("claimReminders: not built yet")),
    retryReminder: () => Promise.reject(new Error("retryReminder: not built yet")),
    completeReminder: () => Promise.reject(new Error("completeReminder: not built yet")),
    listRequests: () => Promise.reject(new Error("listRequests: not built yet")),

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

    async claimCallbacks(at, leaseMs, limit) {
      const dueAt = new Map([...callbacks].map(([id, entry]) => [id, entry.dueAt]));
      return earliestDue(dueAt, at, limit).map((id): ClaimedCallback => {
        const entry = callbacks.get(id)!;
        entry.dueAt = at + leaseMs;
        return { id, attempts: entry.attempts };
      });
    },

    async retryCallback(id, nextAt, attempts) {
      const entry = callbacks.get(id);
      if (!entry) return false;
      callbacks.set(id, { dueAt: nextAt, attempts });
      return true;
    },

    async completeCallback(id) {
      return callbacks.delete(id);
    },

    async claimUpdates(at, leaseMs, limit) {
      const dueAt = new Map([...updates].map(([id, entry]) => [id, entry.dueAt]));
      return earliestDue(dueAt, at, limit).map((id): ClaimedUpdate => {
        const entry = updates.get(id)!;
        entry.dueAt = at + leaseMs;
        return { id, attempts: entry.attempts };
      });
    },

    async retryUpdate(id, nextAt, attempts) {
      if (!updates.has(id)) return false;
      updates.set(id, { dueAt: nextAt, attempts });
      return true;
    },

    async completeUpdate(id) {
      return updates.delete(id);
    },

    async claimUnposted(at, leaseMs, limit) {
      return earliestDue(posting, at, limit).map((id) => {
        posting.set(id, at + leaseMs);
        return id;
      });
    },

    async renewPostLease(id, until) {
      if (!posting.has(id)) return false;
      posting.set(id, until);
      return true;
    },

    async forgetUnposted(id) {
      return posting.delete(id);
    },

    onEnded(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },

    // Memory never loses its notifications: nothing to resync.
    onResync: () => () => undefined,

    async ready() {},
    async ping() {
      return true;
    },
    async close() {
      listeners.clear();
    },
  };
}

/** Up to `limit` ids due at or before `at`, earliest first and then by id, as a Redis ZRANGEBYSCORE lists them. */
function earliestDue(dueAt: ReadonlyMap<string, number>, at: number, limit: number): string[] {
  const due = [...dueAt].filter(([, when]) => when <= at);
  due.sort(([idA, a], [idB, b]) => a - b || (idA < idB ? -1 : idA > idB ? 1 : 0));
  return due.slice(0, Math.max(limit, 0)).map(([id]) => id);
}
