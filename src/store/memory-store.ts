/**
 * In-memory RequestStore for a single relay instance (no REDIS_URL). Same
 * contract as the Redis store; state is lost when the process exits.
 */
import type { RequestRecord, SlackRef } from "../requests/model.js";
import type { CreateResult, RequestStore, Transition, TransitionResult } from "./store.js";
import { applyTransition } from "./transition.js";

export interface MemoryStoreOptions {
  /** How long an ended request stays readable (ms). */
  retentionMs?: number;
  /** Unix time in milliseconds. */
  now?: () => number;
}

export function createMemoryStore({ retentionMs = 24 * 3600_000, now = Date.now }: MemoryStoreOptions = {}): RequestStore {
  const records = new Map<string, RequestRecord>();
  const idempotency = new Map<string, string>();
  const messages = new Map<string, string>();
  const listeners = new Set<(id: string) => void>();
  /** Ended ids with the time they may be forgotten, oldest first. */
  const forget: Array<{ id: string; at: number }> = [];

  const clone = (record: RequestRecord): RequestRecord => structuredClone(record);
  const messageKey = (slack: SlackRef) => `${slack.channel}:${slack.ts}`;

  function prune(): void {
    const t = now();
    while (forget.length > 0 && forget[0]!.at <= t) {
      const { id } = forget.shift()!;
      const record = records.get(id);
      records.delete(id);
      if (record?.slack) messages.delete(messageKey(record.slack));
    }
    for (const [key, id] of idempotency) if (!records.has(id)) idempotency.delete(key);
  }

  return {
    async create(record: RequestRecord, idempotencyKey?: string): Promise<CreateResult> {
      if (idempotencyKey !== undefined) {
        const existing = idempotency.get(idempotencyKey);
        const found = existing === undefined ? undefined : records.get(existing);
        if (found) return { record: clone(found), created: false };
        idempotency.set(idempotencyKey, record.id);
      }
      records.set(record.id, clone(record));
      if (record.status !== "pending") {
        forget.push({ id: record.id, at: (record.endedAt ?? now()) + retentionMs });
        queueMicrotask(() => listeners.forEach((listener) => listener(record.id)));
      }
      return { record: clone(record), created: true };
    },

    async get(id) {
      const record = records.get(id);
      return record && clone(record);
    },

    async setSlackMessage(id, slack) {
      const record = records.get(id);
      if (!record) return undefined;
      record.slack = { ...slack };
      messages.set(messageKey(slack), id);
      return clone(record);
    },

    async findBySlackMessage(slack) {
      return messages.get(messageKey(slack));
    },

    async transition(id: string, change: Transition): Promise<TransitionResult> {
      const record = records.get(id);
      if (!record) return { outcome: "not_found" };
      const result = applyTransition(record, change);
      if (result.outcome !== "applied") return { outcome: result.outcome, record: clone(record) };
      records.set(id, result.record);
      forget.push({ id, at: change.at + retentionMs });
      listeners.forEach((listener) => listener(id));
      return { outcome: "applied", record: clone(result.record) };
    },

    async dueForExpiry(at, limit) {
      prune();
      const due: string[] = [];
      for (const record of records.values()) {
        if (due.length >= limit) break;
        if (record.status === "pending" && record.expiresAt <= at) due.push(record.id);
      }
      return due;
    },

    onEnded(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },

    async ready() {},
    async ping() {
      return true;
    },
    async close() {
      listeners.clear();
    },
  };
}
