/**
 * The leased queues (requests/store.ts QueueName): entries due at a time
 * (Unix ms), handed out earliest first and made due again only when the
 * claim's lease runs out. LeasedQueue is the memory store's, and treats its
 * entries exactly as the Redis store's claim-entries / retry-entry /
 * complete-entry scripts treat their zset and attempts hash.
 */
import type { RequestStore } from "../requests/store.js";

/** The RequestStore methods over the queues (memory-queues.ts, redis-queues.ts). */
export type QueueMethods = Pick<RequestStore, "claim" | "retry" | "complete" | "enqueue" | "completePendingUpdate">;

export interface LeasedEntry {
  key: string;
  /** Attempts made before this claim (0 for the first). */
  attempts: number;
}

export class LeasedQueue {
  private readonly entries = new Map<string, { dueAt: number; attempts: number }>();

  /** Queues `key` due at `dueAt`; one already queued keeps the attempts made (as ZADD leaves the attempts hash). */
  add(key: string, dueAt: number): void {
    this.entries.set(key, { dueAt, attempts: this.entries.get(key)?.attempts ?? 0 });
  }

  /** Queues `key` due at `dueAt` unless it is queued already (as ZADD NX); true when it was added. */
  addNew(key: string, dueAt: number): boolean {
    if (this.entries.has(key)) return false;
    this.entries.set(key, { dueAt, attempts: 0 });
    return true;
  }

  has(key: string): boolean {
    return this.entries.has(key);
  }

  /** Entries queued, due or not. */
  get size(): number {
    return this.entries.size;
  }

  /** Up to `limit` entries due at or before `at`, earliest first, each leased until `at + leaseMs`. */
  claim(at: number, leaseMs: number, limit: number): LeasedEntry[] {
    const dueAt = new Map([...this.entries].map(([key, entry]) => [key, entry.dueAt]));
    return earliestDue(dueAt, at, limit).map((key) => {
      const entry = this.entries.get(key)!;
      entry.dueAt = at + leaseMs;
      return { key, attempts: entry.attempts };
    });
  }

  /** Makes a queued entry due at `nextAt` with `attempts` made; false when it is not queued. */
  retry(key: string, nextAt: number, attempts: number): boolean {
    if (!this.entries.has(key)) return false;
    this.entries.set(key, { dueAt: nextAt, attempts });
    return true;
  }

  /** Forgets an entry; false when it was not queued. */
  complete(key: string): boolean {
    return this.entries.delete(key);
  }
}

/** Up to `limit` keys due at or before `at`, earliest first and then by key, as a Redis ZRANGEBYSCORE lists them. */
export function earliestDue(dueAt: ReadonlyMap<string, number>, at: number, limit: number): string[] {
  const due = [...dueAt].filter(([, when]) => when <= at);
  due.sort(([keyA, a], [keyB, b]) => a - b || compareStrings(keyA, keyB));
  return due.slice(0, Math.max(limit, 0)).map(([key]) => key);
}

/** Byte order, as Redis sorts members of equal score (for ASCII ids). */
export function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
