/**
 * Reminders and escalations (docs/architecture.md §7): at each reminder time the request's
 * thread mentions the approvers and says how long is left; at an escalation
 * its people and groups become approvers too (./policy.ts approversAt) and
 * are mentioned, and where it names a channel a message linking to the
 * request is posted there.
 *
 * The store queues every entry of a request's schedule in the step that
 * records its Slack message, and drops what is left in the step that ends
 * it. Every instance's sweep claims what is due (`runOnce`); a claim is a
 * lease, so exactly one instance sends each entry, and one that dies
 * mid-send leaves it to be claimed again once the lease runs out (with
 * Redis, a restart loses none). A request that ended is never reminded.
 * An escalation that names a channel is two entries, its thread reply and
 * its channel post, each retried on its own.
 */
import type { Logger } from "../logger.js";
import { reminderEntry, type AuditRecorder } from "./audit-entries.js";
import type { RequestMessenger } from "./delivery.js";
import { reminderSchedule } from "./policy.js";
import { byRequest, type Handled, type QueueHandler } from "./queue-worker.js";
import { entryOfKey, type ClaimedEntry, type RequestStore } from "./store.js";

export interface RemindersDeps {
  store: Pick<RequestStore, "get">;
  messenger: Pick<RequestMessenger, "remind">;
  audit: AuditRecorder;
  logger: Logger;
  /** Unix time in milliseconds. */
  now: () => number;
}

const LOGGED = { reminder: "reminder sent", escalation: "escalation sent", escalation_post: "escalation posted in its channel" } as const;

/** The `reminders` queue's handler: sends one reminder or escalation (a transient failure is retried, anything else given up). */
export class Reminders implements QueueHandler {
  readonly queue = "reminders";
  readonly name = "reminder";
  /** Longer than a Slack call or two. */
  readonly leaseMs = 60_000;
  readonly batchSize = 50;
  readonly backoff = { baseMs: 2_000, maxMs: 60_000 };
  readonly parallel = false;
  readonly otherErrors = "give up";
  readonly heartbeat = "at once";

  constructor(private readonly deps: RemindersDeps) {}

  /** Each request's entries in schedule order (an escalation's thread reply before its channel post), requests in the order claimed. */
  arrange(entries: ClaimedEntry[]): ClaimedEntry[] {
    return byRequest(entries, ({ key }) => Number(entryOfKey("reminders", key).detail));
  }

  async handle({ id, key }: ClaimedEntry): Promise<Handled> {
    const { store, messenger, logger, now } = this.deps;
    const index = Number(entryOfKey("reminders", key).detail);
    const record = await store.get(id);
    const entry = record ? reminderSchedule(record.policy)[index] : undefined;
    if (!record || !entry || record.status !== "pending" || !record.slack) {
      return { outcome: "skipped", why: "the request is gone, has ended or has no message", expected: true };
    }
    await messenger.remind(record, entry, now());
    // The escalation is audited with its thread reply (its reason names the channel it is also posted in).
    if (entry.type !== "escalation_post") this.deps.audit.record(reminderEntry(record, entry, now()));
    logger.info({ id, type: entry.type, afterSeconds: entry.afterSeconds }, LOGGED[entry.type]);
    return { outcome: "done" };
  }
}
