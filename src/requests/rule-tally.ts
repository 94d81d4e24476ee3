/**
 * The thread reply that counts a rule's uses ("Auto-approved 3 more Bash
 * calls under @alice's rule · until 12:15"), under the message the rule
 * was created on: posted at the first use, rewritten after each later one.
 * Side work, best effort: it runs after the agent has its answer, and a
 * failure is logged and left to the next use.
 *
 * One reply per rule across instances: the store records the reply's ts,
 * and only the instance holding the rule's tally lease (RuleStore
 * claimTally) posts while none is recorded; an instance that cannot claim
 * leaves the count to the poster, which reads the rule again once its ts is
 * recorded and rewrites the reply if more uses came meanwhile. Each
 * instance keeps one run per rule, which reads the count again after every
 * Slack call, so the last writer always writes the latest count it read.
 * In a race — a poster slower than its lease (TALLY_LEASE_MS), so a second
 * instance posts too — the first recorded ts wins, the other reply stays in
 * the thread with a count that no longer moves, and the race is logged.
 */
import type { Logger } from "../logger.js";
import type { RequestMessenger } from "./delivery.js";
import type { RuleStore } from "./rules.js";

/** How long the instance posting a rule's tally keeps others off it (ms): longer than waiting for a turn and one Slack call. */
export const TALLY_LEASE_MS = 30_000;

export interface RuleTallyDeps {
  store: Pick<RuleStore, "get" | "claimTally" | "setTally">;
  messenger: Pick<RequestMessenger, "postRuleTally" | "updateRuleTally">;
  logger: Logger;
  /** Unix time in milliseconds. */
  now: () => number;
}

interface Run {
  /** Set when another use came while the run was in flight: it reads the rule once more before it stops. */
  again: boolean;
  done: Promise<void>;
}

export class RuleTally {
  private readonly runs = new Map<string, Run>();

  constructor(private readonly deps: RuleTallyDeps) {}

  /** Brings rule `id`'s tally up to date, in the background; never throws. */
  show(id: string): void {
    const { messenger, logger } = this.deps;
    if (!messenger.postRuleTally || !messenger.updateRuleTally) return;
    const running = this.runs.get(id);
    if (running) {
      running.again = true;
      return;
    }
    const run: Run = { again: false, done: Promise.resolve() };
    this.runs.set(id, run);
    run.done = this.update(id, run)
      .catch((error: unknown) => logger.warn({ rule: id, error }, "rule tally not shown; the next use tries again"))
      .finally(() => this.runs.delete(id));
  }

  /** Resolves once every tally update started so far has settled. */
  async idle(): Promise<void> {
    while (this.runs.size > 0) await Promise.all([...this.runs.values()].map((run) => run.done));
  }

  private async update(id: string, run: Run): Promise<void> {
    const { store, messenger, logger, now } = this.deps;
    let shown = 0;
    for (;;) {
      run.again = false;
      const rule = await store.get(id, now());
      if (!rule?.message || rule.uses <= shown) {
        if (run.again) continue;
        return;
      }
      if (rule.tallyTs === undefined) {
        // Another instance is posting it: that one reads the count again once the reply is recorded.
        if (!(await store.claimTally(id, now(), now() + TALLY_LEASE_MS))) return;
        const ts = await messenger.postRuleTally!(rule);
        const recorded = await store.setTally(id, ts, now());
        if (recorded?.tallyTs !== undefined && recorded.tallyTs !== ts) {
          logger.warn({ rule: id, ts, kept: recorded.tallyTs }, "two instances posted a rule's tally; the first recorded one counts on");
          return;
        }
        if (!recorded) return;
      } else {
        await messenger.updateRuleTally!(rule);
      }
      shown = rule.uses;
    }
  }
}
