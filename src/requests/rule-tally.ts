/**
 * The thread reply that counts a rule's uses ("Auto-approved 3 more Bash
 * calls under @alice's rule · until 12:15"), under the message the rule
 * was created on: posted at the first use, rewritten after each later one.
 * Side work: it runs after the agent has its answer, and a failure never
 * reaches the agent.
 *
 * It is the `tallies` queue of the leased-queue worker (./queue-worker.ts),
 * one entry per rule (its id): `show` queues the rule after a use is counted
 * and works the queue at once. The claim is a lease, so one instance at a
 * time shows a rule's tally, and only the first post's ts is ever recorded
 * (RuleStore setTally). A use counted while the entry is in hand leaves the
 * queue as it is (enqueue keeps a claimed entry); the handler reads the
 * rule again once it has completed the entry and queues it once more when
 * the count moved meanwhile, so the last count always gets shown. The
 * lease is not renewed: it outlasts a turn's wait and a Slack call (in a
 * race — an attempt slower than its lease, so a second instance posts too —
 * the first recorded ts wins and the race is logged). A failed
 * Slack call is retried after Slack's Retry-After or the backoff (at least
 * TALLY_RETRY_MS / 2), until the rule's time is up; meanwhile later uses
 * only raise the count the retry shows.
 */
import type { Logger } from "../logger.js";
import type { RequestMessenger } from "./delivery.js";
import { TransientDeliveryError } from "./delivery.js";
import { StoreUnavailableError } from "./errors.js";
import type { Handled, QueueHandler, QueueWorker } from "./queue-worker.js";
import type { RuleStore } from "./rules.js";
import type { ClaimedEntry, RequestStore } from "./store.js";

/** How long the instance showing a rule's tally keeps others off it (ms): longer than waiting for a turn and one Slack call. */
export const TALLY_LEASE_MS = 30_000;

/** The first retry of a failed tally comes after half to all of this (ms), later ones after twice as long each, up to 5 minutes. */
export const TALLY_RETRY_MS = 30_000;

export interface RuleTalliesDeps {
  rules: Pick<RuleStore, "get" | "setTally">;
  store: Pick<RequestStore, "enqueue" | "complete">;
  worker: Pick<QueueWorker, "drain">;
  messenger: Required<Pick<RequestMessenger, "postRuleTally" | "updateRuleTally">>;
  logger: Logger;
  /** Unix time in milliseconds. */
  now: () => number;
}

/** The `tallies` queue's handler: brings one rule's tally up to date. */
export class RuleTallies implements QueueHandler {
  readonly queue = "tallies";
  readonly name = "rule tally";
  readonly leaseMs = TALLY_LEASE_MS;
  readonly batchSize = 20;
  readonly backoff = { baseMs: TALLY_RETRY_MS, maxMs: 5 * 60_000 };
  readonly parallel = false;
  readonly otherErrors = "retry";
  /** Never renewed: an attempt ends well within its lease, and no renewal can land after the handler queued the rule again. */
  readonly heartbeat = "once renewed";

  constructor(private readonly deps: RuleTalliesDeps) {}

  /** After a use of rule `id` was counted: queues its tally and works the queue until nothing is due. Never throws. */
  async show(id: string): Promise<void> {
    const { store, worker, logger, now } = this.deps;
    try {
      await store.enqueue("tallies", id, now());
      await worker.drain("tallies");
    } catch (error) {
      logger.warn({ rule: id, error }, "rule tally not shown; the next use or sweep tries again");
    }
  }

  async handle({ id, key }: ClaimedEntry): Promise<Handled> {
    const { rules, store, messenger, logger, now } = this.deps;
    const rule = await rules.get(id, now());
    if (!rule?.message) return { outcome: "skipped", why: "the rule is gone, past its time or has no message", expected: true };
    try {
      if (rule.tallyTs === undefined) {
        const ts = await messenger.postRuleTally(rule);
        const recorded = await rules.setTally(id, ts, now());
        if (recorded?.tallyTs !== undefined && recorded.tallyTs !== ts) {
          logger.warn({ rule: id, ts, kept: recorded.tallyTs }, "two instances posted a rule's tally; the first recorded one counts on");
        }
      } else {
        await messenger.updateRuleTally(rule);
      }
    } catch (error) {
      if (error instanceof StoreUnavailableError) throw error;
      return {
        outcome: "retry",
        reason: String(error),
        ...(error instanceof TransientDeliveryError && error.retryAfterMs !== undefined ? { retryAfterMs: error.retryAfterMs } : {}),
        giveUpAt: rule.expiresAt,
        giveUpWhy: "the rule's time is up",
        fields: { rule: id },
      };
    }
    await store.complete("tallies", key);
    // A use counted while the entry was in hand found it queued and left it: queue it again for that count.
    const after = await rules.get(id, now());
    if (after && after.uses > rule.uses) await store.enqueue("tallies", id, now());
    return { outcome: "settled" };
  }
}

/** The handler over `deps`, when its messenger shows tallies (Slack's does; none without Slack): else undefined. */
export function ruleTalliesOf(
  deps: Omit<RuleTalliesDeps, "messenger"> & { messenger: Pick<RequestMessenger, "postRuleTally" | "updateRuleTally"> },
): RuleTallies | undefined {
  const { postRuleTally, updateRuleTally } = deps.messenger;
  if (!postRuleTally || !updateRuleTally) return undefined;
  return new RuleTallies({ ...deps, messenger: { postRuleTally: postRuleTally.bind(deps.messenger), updateRuleTally: updateRuleTally.bind(deps.messenger) } });
}
