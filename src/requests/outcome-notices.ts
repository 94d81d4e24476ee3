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
import type { RequestMessenger } from "./delivery.js";
import type { RequestRecord } from "./model.js";
import { byRequest, type Handled, type QueueHandler } from "./queue-worker.js";
import { entryOfKey, NOTICE_PARTS, type ClaimedEntry, type NoticePart, type RequestStore } from "./store.js";

export interface OutcomeNoticesDeps {
  store: Pick<RequestStore, "get">;
  messenger: Pick<RequestMessenger, "tellOutcome">;
  logger: Logger;
  /** Unix time in milliseconds. */
  now: () => number;
}

/** The `notices` queue's handler: sends one part of an ended request's outcome notice. */
export class OutcomeNotices implements QueueHandler {
  readonly queue = "notices";
  readonly name = "outcome notice";
  /** Longer than a Slack call or two. */
  readonly leaseMs = 60_000;
  readonly batchSize = 50;
  readonly backoff = { baseMs: 2_000, maxMs: 5 * 60_000 };
  readonly parallel = false;
  readonly otherErrors = "give up";
  readonly heartbeat = "at once";

  constructor(private readonly deps: OutcomeNoticesDeps) {}

  /** Each request's thread reply before its DM, requests in the order claimed. */
  arrange(entries: ClaimedEntry[]): ClaimedEntry[] {
    return byRequest(entries, ({ key }) => NOTICE_PARTS.indexOf(partOf(key)!));
  }

  async handle({ id, key }: ClaimedEntry): Promise<Handled> {
    const { store, messenger, logger, now } = this.deps;
    const part = partOf(key);
    const record = await store.get(id);
    const skip = part === undefined ? "not a notice part" : whyNot(part, record);
    if (skip !== undefined || !record || !part) return { outcome: "skipped", why: skip ?? "the request is gone", expected: true, fields: { part } };
    await messenger.tellOutcome(record, part, now());
    logger.info({ id, part, status: record.status }, part === "thread" ? "outcome posted in the thread" : "outcome sent to the requester");
    return { outcome: "done" };
  }
}

function partOf(key: string): NoticePart | undefined {
  const detail = entryOfKey("notices", key).detail;
  return NOTICE_PARTS.find((part) => part === detail);
}

/** Why a claimed part is not to be sent (undefined: send it). */
function whyNot(part: NoticePart, record: RequestRecord | undefined): string | undefined {
  if (!record) return "the request is gone";
  if (record.status === "pending") return "the request has not ended";
  if (!record.slack) return "the request has no Slack message";
  if (part === "thread") return undefined;
  const requester = record.policy?.requestedBy?.id;
  if (requester === undefined) return "the request names no requestedBy";
  if (record.answeredBy?.id === requester) return "the requester decided it themselves";
  return undefined;
}
