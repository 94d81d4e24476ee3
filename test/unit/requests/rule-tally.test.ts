/**
 * The `tallies` queue's handler (src/requests/rule-tally.ts) on the memory
 * request and rule stores with its own queue worker: what happens to a
 * rule's tally when its rule is gone, when Slack fails, and when a use is
 * counted in the instant between the handler's last read and its complete.
 */
import { describe, expect, it } from "vitest";
import { silentLogger } from "../../../src/logger.js";
import { TransientDeliveryError } from "../../../src/requests/delivery.js";
import { RuleTallies } from "../../../src/requests/rule-tally.js";
import type { Rule } from "../../../src/requests/rules.js";
import type { RequestStore } from "../../../src/requests/store.js";
import { createMemoryRuleStore } from "../../../src/store/memory-rules.js";
import { createMemoryStore } from "../../../src/store/memory-store.js";
import { ruleOf, T0 } from "../../helpers/rule-store-contract.js";
import { onWorker } from "../../helpers/queue-worker.js";

/** A rule created with no Slack message to count under. */
function ruleWithoutMessage(): Rule {
  const { message: _message, ...rule } = ruleOf();
  return rule;
}

/** A rule with a message, its tally handler on a worker, and the calls Slack got. */
async function setUp(rule: Rule = ruleOf(), store: RequestStore = createMemoryStore()) {
  let now = T0;
  const rules = createMemoryRuleStore();
  await rules.create(rule, now);
  const shown: Array<[string, number]> = [];
  const slack = { fail: undefined as Error | undefined };
  const messenger = {
    postRuleTally: async (shownRule: Rule) => {
      if (slack.fail) throw slack.fail;
      shown.push(["post", shownRule.uses]);
      return "1800000001.000200";
    },
    updateRuleTally: async (shownRule: Rule) => {
      if (slack.fail) throw slack.fail;
      shown.push(["update", shownRule.uses]);
    },
  };
  const worked = onWorker(
    store,
    () => now,
    (worker) => new RuleTallies({ rules, store, worker, messenger, logger: silentLogger, now: () => now }),
  );
  const use = async () => {
    await rules.use(rule.id, now);
    await worked.handler.show(rule.id);
  };
  return { rule, rules, store, shown, slack, worked, use, advance: (ms: number) => (now += ms) };
}

describe("a rule's tally", () => {
  it("is posted at the first use, its ts recorded, and rewritten at the next", async () => {
    const { rule, rules, shown, use } = await setUp();
    await use();
    await use();
    expect(shown).toStrictEqual([
      ["post", 1],
      ["update", 2],
    ]);
    expect((await rules.get(rule.id, T0))?.tallyTs).toBe("1800000001.000200");
  });

  it("is not shown for a rule without a message, nor for one revoked before its turn, and the entry goes", async () => {
    const bare = await setUp(ruleWithoutMessage());
    await bare.use();
    expect(bare.shown).toStrictEqual([]);
    expect(await bare.store.claim("tallies", T0 + 60_000, 1000, 10)).toStrictEqual([]);

    const revoked = await setUp();
    await revoked.rules.use(revoked.rule.id, T0);
    await revoked.store.enqueue("tallies", revoked.rule.id, T0);
    await revoked.rules.revoke(revoked.rule.id, T0);
    expect((await revoked.worked.worker.runOnce("tallies")).dropped).toBe(1);
    expect(revoked.shown).toStrictEqual([]);
  });

  it("that Slack refuses is retried after the backoff (or Slack's Retry-After) with the count as it then is, never before", async () => {
    const { shown, slack, use, advance, worked } = await setUp();
    slack.fail = new TransientDeliveryError("ratelimited", 45_000);
    await use();
    slack.fail = undefined;
    await use();
    expect(shown).toStrictEqual([]);
    advance(44_999);
    expect(await worked.runOnce()).toBe(0);
    advance(1);
    await worked.runOnce();
    expect(shown).toStrictEqual([["post", 2]]);
  });

  it("that keeps failing is given up once the rule's time is up", async () => {
    const { slack, use, advance, worked, store } = await setUp();
    slack.fail = new Error("channel_not_found");
    await use();
    for (let round = 0; round < 10; round += 1) {
      advance(5 * 60_000);
      await worked.runOnce();
    }
    expect(await store.claim("tallies", T0 + 100 * 60_000, 1000, 10)).toStrictEqual([]);
  });

  it("counts a use made between its last read and its complete: the rule is queued again and shown once more", async () => {
    const base = createMemoryStore();
    let sneak: (() => Promise<void>) | undefined;
    const store: RequestStore = {
      ...base,
      complete: async (queue, key) => {
        await sneak?.();
        sneak = undefined;
        return base.complete(queue, key);
      },
    };
    const { rule, rules, shown, use } = await setUp(undefined, store);
    sneak = async () => {
      await rules.use(rule.id, T0);
      await store.enqueue("tallies", rule.id, T0);
    };
    await use();
    expect(shown).toStrictEqual([
      ["post", 1],
      ["update", 2],
    ]);
  });
});
