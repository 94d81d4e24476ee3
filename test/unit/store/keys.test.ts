/**
 * The Redis key layouts (src/store/keys.ts): the one-shard layout keeps the
 * names earlier versions used, so an upgrade finds its requests; in the
 * tagged layout every key a script takes together carries one hash tag (one
 * Redis Cluster slot), ids spread evenly over the shards, and every key of
 * one agent token sits on that token's shard.
 */
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { CLUSTER_SHARDS, storeKeys, type ShardKeys } from "../../../src/store/keys.js";

const SLACK = { channel: "C0123456789", ts: "1712345678.000100" };
const SCOPE = { token: "ci", sessionId: "s1", toolName: "Bash" };

/** The hash tag Redis Cluster hashes a key by: the text between its first `{` and the next `}`. */
function tagOf(key: string): string {
  const open = key.indexOf("{");
  const close = key.indexOf("}", open + 1);
  return open >= 0 && close > open + 1 ? key.slice(open + 1, close) : key;
}

const shardKeyNames = (shard: ShardKeys) => [
  shard.deadlines,
  shard.idempotency("ci:key"),
  shard.message(SLACK),
  shard.queues.callbacks.due,
  shard.queues.callbacks.attempts,
  shard.queues.updates.due,
  shard.queues.updates.attempts,
  shard.queues.posting.due,
  shard.queues.posting.attempts,
  shard.queues.reminders.due,
  shard.queues.reminders.attempts,
  shard.queues.notices.due,
  shard.queues.notices.attempts,
  shard.recent,
  shard.pendingOf("ci"),
  shard.sameAs("0f".repeat(32)),
];

describe("the one-shard layout (one server, Sentinel)", () => {
  it("keeps the key names of earlier versions", () => {
    const keys = storeKeys("relay");
    const id = randomUUID();
    expect(keys.shards).toHaveLength(1);
    expect(shardKeyNames(keys.shards[0]!)).toStrictEqual([
      "relay:deadlines",
      "relay:idem:ci:key",
      `relay:msg:${SLACK.channel}:${SLACK.ts}`,
      "relay:callbacks",
      "relay:callback-attempts",
      "relay:updates",
      "relay:update-attempts",
      "relay:posting",
      "relay:posting-attempts",
      "relay:reminders",
      "relay:reminder-attempts",
      "relay:notices",
      "relay:notice-attempts",
      "relay:recent",
      "relay:pending:ci",
      `relay:same:${"0f".repeat(32)}`,
    ]);
    expect([keys.data(id), keys.ended, keys.audit, keys.rule(id), keys.rules]).toStrictEqual([
      `relay:{${id}}:data`,
      "relay:ended",
      "relay:audit",
      `relay:rule:{${id}}`,
      "relay:rules",
    ]);
    expect(keys.ruleScope(SCOPE)).toMatch(/^relay:rule-scope:[0-9a-f]{64}$/);
    expect([keys.shardOf(id), keys.shardOfToken("ci")]).toStrictEqual([0, 0]);
  });
});

describe("the tagged layout (Redis Cluster)", () => {
  const keys = storeKeys("relay", CLUSTER_SHARDS);

  it("gives every key of a shard, and the hash of each request on it, the shard's one tag; the tags differ between shards", () => {
    const tags = keys.shards.map((shard) => {
      const names = shardKeyNames(shard);
      expect(names.every((name) => name.startsWith("relay:"))).toBe(true);
      expect(new Set(names.map(tagOf)).size).toBe(1);
      return tagOf(names[0]!);
    });
    expect(new Set(tags).size).toBe(CLUSTER_SHARDS);
    for (let i = 0; i < 100; i += 1) {
      const id = randomUUID();
      expect(tagOf(keys.data(id))).toBe(tags[keys.shardOf(id)]);
    }
  });

  it("keeps the rule keys under one tag of their own, and the audit stream and the channel under the prefix", () => {
    const id = randomUUID();
    expect(new Set([keys.rule(id), keys.rule(randomUUID()), keys.ruleScope(SCOPE), keys.rules].map(tagOf))).toStrictEqual(new Set(["relay:rules"]));
    expect([keys.audit, keys.ended]).toStrictEqual(["relay:audit", "relay:ended"]);
  });

  it("puts the audit drops hash and every token's share on the audit stream's slot, one key per token", () => {
    const tags = [keys.audit, keys.auditDrops, keys.auditShare("ci-bot"), keys.auditShare("{laptop}:x")].map(tagOf);
    expect(new Set(tags)).toStrictEqual(new Set(["relay:audit"]));
    expect(keys.auditShare("ci-bot")).not.toBe(keys.auditShare("laptop"));
  });

  it("places agent tokens on different shards, each always on the same one", () => {
    const shards = new Set(Array.from({ length: 64 }, (_, i) => keys.shardOfToken(`agent-${i}`)));
    expect(shards.size).toBeGreaterThan(CLUSTER_SHARDS / 2);
    expect(keys.shardOfToken("ci")).toBe(keys.shardOfToken("ci"));
  });

  it("spreads ids evenly over the shards", () => {
    const counts = new Array<number>(CLUSTER_SHARDS).fill(0);
    for (let i = 0; i < 16_000; i += 1) counts[keys.shardOf(randomUUID())]! += 1;
    for (const count of counts) expect(count).toBeGreaterThan(800);
    for (const count of counts) expect(count).toBeLessThan(1200);
  });

  it("refuses a prefix with braces (it would move the hash tag) and a shard count that is not a positive integer", () => {
    expect(() => storeKeys("re{lay}", CLUSTER_SHARDS)).toThrow("must be non-empty and contain no braces");
    expect(() => storeKeys("relay", 0)).toThrow("shards must be a positive integer");
    expect(() => storeKeys("relay", 1.5)).toThrow("shards must be a positive integer");
  });
});
