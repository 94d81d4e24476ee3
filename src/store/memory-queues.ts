/**
 * The memory store's queues: callbacks, message updates, reminders, outcome
 * notices and the posting set, with the RequestStore methods that claim,
 * retry and complete their entries. memory-store.ts fills them in the steps that create, post
 * and end requests, as the Redis scripts fill theirs.
 */
import type { ReminderEntry } from "../requests/store.js";
import type { RequestRecord } from "../requests/model.js";
import { earliestDue, LeasedQueue, noticeKey, noticeOfKey, reminderKey, reminderOfKey, type QueueMethods } from "./leased-queue.js";

export class MemoryQueues {
  /** Queued callbacks by request id. */
  readonly callbacks = new LeasedQueue();
  /** Queued message updates by request id. */
  readonly updates = new LeasedQueue();
  /** Pending requests whose Slack message is not recorded yet, by id: when their poster's lease ends (Unix ms). */
  readonly posting = new Map<string, number>();
  /** Queued reminders and escalations by reminderKey(id, index). */
  private readonly reminders = new LeasedQueue();
  /** The schedule indexes queued for each pending request, to drop them when it ends. */
  private readonly remindersOf = new Map<string, number[]>();
  /** Queued outcome notice parts by noticeKey(id, part). */
  private readonly notices = new LeasedQueue();
  /** Ids whose notices were queued once (lua/includes/common.lua's `noticesQueued`), until their request is forgotten. */
  private readonly noticed = new Set<string>();

  /**
   * Part of a step that ends a request with a Slack message, or records the
   * message of one that had ended: its outcome notices, due at `dueAt`, once.
   */
  queueNotices(record: RequestRecord, dueAt: number): void {
    if (!record.slack || this.noticed.has(record.id)) return;
    this.noticed.add(record.id);
    this.notices.add(noticeKey(record.id, "thread"), dueAt);
    if (record.policy?.requestedBy) this.notices.add(noticeKey(record.id, "dm"), dueAt);
  }

  /** The request is forgotten: its mark goes with it (queued parts stay until completed, as in Redis). */
  forget(id: string): void {
    this.noticed.delete(id);
  }

  queueReminders(id: string, entries: readonly ReminderEntry[]): void {
    for (const { index, dueAt } of entries) this.reminders.add(reminderKey(id, index), dueAt);
    if (entries.length > 0) this.remindersOf.set(id, [...(this.remindersOf.get(id) ?? []), ...entries.map(({ index }) => index)]);
  }

  /** Part of the step that ends a request: none of its reminders is handed out after it. */
  dropReminders(id: string): void {
    for (const index of this.remindersOf.get(id) ?? []) this.reminders.complete(reminderKey(id, index));
    this.remindersOf.delete(id);
  }

  /** The store methods over these queues; `read` gives a request as it now is. */
  methods(read: (id: string) => RequestRecord | undefined): QueueMethods {
    const { callbacks, updates, reminders, notices, posting } = this;
    const asIds = (claimed: Array<{ key: string; attempts: number }>) => claimed.map(({ key, attempts }) => ({ id: key, attempts }));
    return {
      claimCallbacks: async (at, leaseMs, limit) => asIds(callbacks.claim(at, leaseMs, limit)),
      retryCallback: async (id, nextAt, attempts) => callbacks.retry(id, nextAt, attempts),
      completeCallback: async (id) => callbacks.complete(id),

      claimUpdates: async (at, leaseMs, limit) => asIds(updates.claim(at, leaseMs, limit)),
      retryUpdate: async (id, nextAt, attempts) => updates.retry(id, nextAt, attempts),
      completeUpdate: async (id) => updates.complete(id),
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

      claimReminders: async (at, leaseMs, limit) => reminders.claim(at, leaseMs, limit).map(({ key, attempts }) => ({ ...reminderOfKey(key)!, attempts })),
      retryReminder: async (id, index, nextAt, attempts) => reminders.retry(reminderKey(id, index), nextAt, attempts),
      completeReminder: async (id, index) => reminders.complete(reminderKey(id, index)),

      claimNotices: async (at, leaseMs, limit) => notices.claim(at, leaseMs, limit).map(({ key, attempts }) => ({ ...noticeOfKey(key)!, attempts })),
      retryNotice: async (id, part, nextAt, attempts) => notices.retry(noticeKey(id, part), nextAt, attempts),
      completeNotice: async (id, part) => notices.complete(noticeKey(id, part)),

      claimUnposted: async (at, leaseMs, limit) =>
        earliestDue(posting, at, limit).map((id) => {
          posting.set(id, at + leaseMs);
          return id;
        }),
      async renewPostLease(id, until) {
        if (!posting.has(id)) return false;
        posting.set(id, until);
        return true;
      },
      forgetUnposted: async (id) => posting.delete(id),
    };
  }
}
