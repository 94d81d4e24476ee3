/**
 * Everyone told (docs/architecture.md §7): when a request with a Slack message ends, a
 * reply in its thread records the outcome, who decided and when (so the
 * channel keeps the history; an expiry says so too), and the person it was
 * made for (its requestedBy) gets a DM with the outcome and a link to the
 * message. The message itself is rewritten in place by ./update-outbox.ts.
 *
 * Durable like the message update: the store queues each part (thread, dm)
 * in the very step that ends the request, never before, and every
 * instance's sweep claims what is due (`runOnce`), leased so one instance
 * sends each part; with Redis a restart loses none. Each part is retried on
 * its own, after Slack's Retry-After or a growing backoff, so a failed DM
 * sent again never repeats the thread reply. A permanent refusal (the
 * thread's message is gone, Slack cannot DM that person:
 * `channel_not_found`, `not_in_channel`, `user_not_found`…) is logged and
 * the part given up; so is a part whose request the store no longer has.
 * A DM is left out when the person it would go to decided themselves.
 */
import type { Logger } from "../logger.js";
import { afterFailure, type RequestMessenger } from "./delivery.js";
import type { RequestRecord } from "./model.js";
import { entryKey, entryOfKey, NOTICE_PARTS, type NoticePart, type RequestStore } from "./store.js";

export type NoticeStore = Pick<RequestStore, "get" | "claim" | "retry" | "complete">;

export interface OutcomeNoticesDeps {
  store: NoticeStore;
  messenger: Pick<RequestMessenger, "tellOutcome">;
  logger: Logger;
  /** Unix time in milliseconds. */
  now: () => number;
  /** In [0, 1), for backoff jitter. */
  random?: () => number;
  /** Milliseconds a claim keeps other instances off a part; longer than a Slack call or two. */
  leaseMs?: number;
  /** Parts claimed per sweep. */
  batchSize?: number;
}

const BACKOFF = { baseMs: 2_000, maxMs: 5 * 60_000 } as const;

export class OutcomeNotices {
  private readonly leaseMs: number;
  private readonly batchSize: number;
  private readonly random: () => number;

  constructor(private readonly deps: OutcomeNoticesDeps) {
    this.leaseMs = deps.leaseMs ?? 60_000;
    this.batchSize = deps.batchSize ?? 50;
    this.random = deps.random ?? Math.random;
  }

  /** Sends what is due, on any instance, each request's thread reply before its DM; returns how many parts were sent. */
  async runOnce(): Promise<number> {
    const { store, now } = this.deps;
    const claims = (await store.claim("notices", now(), this.leaseMs, this.batchSize)).map(({ key, id, attempts }) => ({
      id,
      part: entryOfKey("notices", key).detail as NoticePart,
      attempts,
    }));
    const first = new Map<string, number>();
    for (const { id } of claims) if (!first.has(id)) first.set(id, first.size);
    claims.sort((a, b) => first.get(a.id)! - first.get(b.id)! || NOTICE_PARTS.indexOf(a.part) - NOTICE_PARTS.indexOf(b.part));
    const records = new Map<string, Promise<RequestRecord | undefined>>();
    let sent = 0;
    for (const claim of claims) {
      if (!records.has(claim.id)) records.set(claim.id, store.get(claim.id));
      if (await this.send(claim, await records.get(claim.id)!)) sent += 1;
    }
    return sent;
  }

  private async send(claim: { id: string; part: NoticePart; attempts: number }, record: RequestRecord | undefined): Promise<boolean> {
    const { store, messenger, logger, now } = this.deps;
    const { id, part, attempts } = claim;
    const skip = whyNot(claim, record);
    if (skip !== undefined || !record) {
      logger.info({ id, part, reason: skip }, "outcome notice not sent");
      await store.complete("notices", entryKey(id, part));
      return false;
    }
    try {
      await messenger.tellOutcome(record, part, now());
    } catch (error) {
      const next = afterFailure(error, attempts, BACKOFF, this.random);
      if ("retryInMs" in next) {
        logger.warn({ id, part, reason: next.reason, attempts: attempts + 1, delayMs: next.retryInMs }, "outcome notice not sent; retrying later");
        await store.retry("notices", entryKey(id, part), now() + next.retryInMs, attempts + 1);
      } else {
        logger.warn({ id, part, reason: next.giveUp }, "outcome notice refused by Slack; giving it up");
        await store.complete("notices", entryKey(id, part));
      }
      return false;
    }
    await store.complete("notices", entryKey(id, part));
    logger.info({ id, part, status: record.status }, part === "thread" ? "outcome posted in the thread" : "outcome sent to the requester");
    return true;
  }
}

/** Why a claimed part is not to be sent (undefined: send it). */
function whyNot({ part }: { id: string; part: NoticePart; attempts: number }, record: RequestRecord | undefined): string | undefined {
  if (!record) return "the request is gone";
  if (record.status === "pending") return "the request has not ended";
  if (!record.slack) return "the request has no Slack message";
  if (part === "thread") return undefined;
  const requester = record.policy?.requestedBy?.id;
  if (requester === undefined) return "the request names no requestedBy";
  if (record.answeredBy?.id === requester) return "the requester decided it themselves";
  return undefined;
}
