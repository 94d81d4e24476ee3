/**
 * The memory store's leased queues (requests/store.ts QueueName), with the
 * RequestStore methods that claim, retry and complete their entries.
 * memory-store.ts fills them in the steps that create, post and end
 * requests, as the Redis scripts fill theirs.
 */
import { entryKey, entryOfKey, QUEUE_NAMES, type QueueName, type ReminderEntry } from "../requests/store.js";
import type { RequestRecord } from "../requests/model.js";
import { LeasedQueue, type QueueMethods } from "./leased-queue.js";

export class MemoryQueues {
  private readonly queues = new Map<QueueName, LeasedQueue>(QUEUE_NAMES.map((name) => [name, new LeasedQueue()]));
  /** The schedule indexes queued for each pending request, to drop them when it ends. */
  private readonly remindersOf = new Map<string, number[]>();
  /** Ids whose notices were queued once (lua/includes/common.lua's `noticesQueued`), until their request is forgotten. */
  private readonly noticed = new Set<string>();

  /** The queue named `name`. */
  of(name: QueueName): LeasedQueue {
    return this.queues.get(name)!;
  }

  /**
   * Part of a step that ends a request with a Slack message, or records the
   * message of one that had ended: its outcome notices, due at `dueAt`, once.
   */
  queueNotices(record: RequestRecord, dueAt: number): void {
    if (!record.slack || this.noticed.has(record.id)) return;
    this.noticed.add(record.id);
    this.of("notices").add(entryKey(record.id, "thread"), dueAt);
    if (record.policy?.requestedBy) this.of("notices").add(entryKey(record.id, "dm"), dueAt);
  }

  /** The request is forgotten: its mark goes with it (queued parts stay until completed, as in Redis). */
  forget(id: string): void {
    this.noticed.delete(id);
  }

  queueReminders(id: string, entries: readonly ReminderEntry[]): void {
    for (const { index, dueAt } of entries) this.of("reminders").add(entryKey(id, index), dueAt);
    if (entries.length > 0) this.remindersOf.set(id, [...(this.remindersOf.get(id) ?? []), ...entries.map(({ index }) => index)]);
  }

  /** Part of the step that ends a request: none of its reminders is handed out after it. */
  dropReminders(id: string): void {
    for (const index of this.remindersOf.get(id) ?? []) this.of("reminders").complete(entryKey(id, index));
    this.remindersOf.delete(id);
  }

  /** The store methods over these queues; `read` gives a request as it now is. */
  methods(read: (id: string) => RequestRecord | undefined): QueueMethods {
    const updates = this.of("updates");
    return {
      claim: async (queue, at, leaseMs, limit) =>
        this.of(queue)
          .claim(at, leaseMs, limit)
          .map(({ key, attempts }) => ({ key, id: entryOfKey(queue, key).id, attempts })),
      retry: async (queue, key, nextAt, attempts) => this.of(queue).retry(key, nextAt, attempts),
      complete: async (queue, key) => this.of(queue).complete(key),
      enqueue: async (queue, key, dueAt) => this.of(queue).addNew(key, dueAt),
      async completePendingUpdate(id, shownApprovals, retryAt, shownExpiresAt) {
        const record = read(id);
        const moved = shownExpiresAt !== undefined && record?.expiresAt !== shownExpiresAt;
        if (record && (record.status !== "pending" || (record.approvals?.length ?? 0) !== shownApprovals || moved)) {
          updates.add(id, retryAt);
          return false;
        }
        updates.complete(id);
        return true;
      },
    };
  }
}
