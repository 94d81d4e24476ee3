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
 */
import type { Logger } from "../logger.js";
import { reminderEntry, type AuditRecorder } from "./audit-entries.js";
import { afterFailure, type RequestMessenger } from "./delivery.js";
import { reminderSchedule } from "./policy.js";
import { entryKey, entryOfKey, type RequestStore } from "./store.js";

export type ReminderStore = Pick<RequestStore, "get" | "claim" | "retry" | "complete">;

export interface RemindersDeps {
  store: ReminderStore;
  messenger: Pick<RequestMessenger, "remind">;
  audit: AuditRecorder;
  logger: Logger;
  /** Unix time in milliseconds. */
  now: () => number;
  /** In [0, 1), for backoff jitter. */
  random?: () => number;
  /** Milliseconds a claim keeps other instances off an entry; longer than a Slack call or two. */
  leaseMs?: number;
  /** Entries claimed per sweep. */
  batchSize?: number;
}

const BACKOFF = { baseMs: 2_000, maxMs: 60_000 } as const;

export class Reminders {
  private readonly leaseMs: number;
  private readonly batchSize: number;
  private readonly random: () => number;

  constructor(private readonly deps: RemindersDeps) {
    this.leaseMs = deps.leaseMs ?? 60_000;
    this.batchSize = deps.batchSize ?? 50;
    this.random = deps.random ?? Math.random;
  }

  /** Sends what is due, on any instance; returns how many were sent. */
  async runOnce(): Promise<number> {
    const { store, now } = this.deps;
    let sent = 0;
    for (const claimed of (await store.claim("reminders", now(), this.leaseMs, this.batchSize)).map(({ key, id, attempts }) => ({
      id,
      index: Number(entryOfKey("reminders", key).detail),
      attempts,
    }))) {
      if (await this.send(claimed)) sent += 1;
    }
    return sent;
  }

  private async send(claimed: { id: string; index: number; attempts: number }): Promise<boolean> {
    const { store, messenger, logger, now } = this.deps;
    const { id, index, attempts } = claimed;
    const record = await store.get(id);
    const entry = record ? reminderSchedule(record.policy)[index] : undefined;
    if (!record || !entry || record.status !== "pending" || !record.slack) {
      await store.complete("reminders", entryKey(id, index));
      return false;
    }
    try {
      await messenger.remind(record, entry, now());
    } catch (error) {
      const next = afterFailure(error, attempts, BACKOFF, this.random);
      if ("retryInMs" in next) {
        logger.warn({ id, index, reason: next.reason, attempts: attempts + 1 }, "reminder not sent; retrying later");
        await store.retry("reminders", entryKey(id, index), now() + next.retryInMs, attempts + 1);
      } else {
        logger.warn({ id, index, reason: next.giveUp }, "reminder refused by Slack; giving it up");
        await store.complete("reminders", entryKey(id, index));
      }
      return false;
    }
    await store.complete("reminders", entryKey(id, index));
    this.deps.audit.record(reminderEntry(record, entry, now()));
    logger.info({ id, type: entry.type, afterSeconds: entry.afterSeconds }, entry.type === "reminder" ? "reminder sent" : "escalation sent");
    return true;
  }
}
