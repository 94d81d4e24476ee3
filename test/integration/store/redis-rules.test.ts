/**
 * What only the Redis rule store has (the shared rule store contract runs
 * on it in rule-and-sign-in-stores.test.ts), on a real Redis server: the key layout and TTLs (a hash
 * per rule and a scope key expiring with it, the listing zset), rules shared
 * by two stores on separate connections, a hash that does not parse, and a
 * Redis that never answers.
 */
import { describe, expect, it } from "vitest";
import { StoreUnavailableError } from "../../../src/requests/errors.js";
import { connectRedisRuleStore, createRedisRuleStore, UnreadableRuleError } from "../../../src/store/redis-rules.js";
import { storeKeys } from "../../../src/store/keys.js";
import { keysUnder, REDIS_TEST_URL, silentRedis, useTestRedis } from "../../helpers/redis.js";
import { ruleOf, T0 } from "../../helpers/rule-store-contract.js";

const testRedis = useTestRedis();

describe("redis rule store specifics", () => {
  it("keeps a rule as a hash and its scope as a key, both expiring with the rule, and lists it in <prefix>:rules by expiry", async () => {
    const redis = testRedis.redis();
    const prefix = testRedis.prefix();
    const store = createRedisRuleStore({ redis, prefix });
    const rule = ruleOf();
    await store.create(rule, rule.expiresAt - 60_000);
    const keys = storeKeys(prefix);
    expect((await keysUnder(redis, prefix)).sort()).toStrictEqual([keys.rule(rule.id), keys.ruleScope(rule), keys.rules].sort());
    for (const key of [keys.rule(rule.id), keys.ruleScope(rule)]) {
      const ttl = await redis.pttl(key);
      expect(ttl, key).toBeGreaterThan(55_000);
      expect(ttl, key).toBeLessThanOrEqual(60_000);
    }
    expect(await redis.get(keys.ruleScope(rule))).toBe(rule.id);
    expect(await redis.zscore(keys.rules, rule.id)).toBe(String(rule.expiresAt));
    expect(await redis.hget(keys.rule(rule.id), "uses")).toBe("0");
  });

  it("revoking leaves no key behind", async () => {
    const redis = testRedis.redis();
    const prefix = testRedis.prefix();
    const store = createRedisRuleStore({ redis, prefix });
    const rule = ruleOf();
    await store.create(rule, T0);
    await store.revoke(rule.id, T0 + 1);
    expect(await keysUnder(redis, prefix)).toStrictEqual([]);
  });

  it("shares rules between stores on separate connections: created on one, found, counted and revoked on the other", async () => {
    const prefix = testRedis.prefix();
    const one = connectRedisRuleStore(REDIS_TEST_URL, { prefix });
    const two = connectRedisRuleStore(REDIS_TEST_URL, { prefix });
    try {
      const rule = ruleOf();
      await one.create(rule, T0);
      expect((await two.find(rule, T0 + 1))?.id).toBe(rule.id);
      expect((await two.use(rule.id, T0 + 1))?.uses).toBe(1);
      expect((await one.get(rule.id, T0 + 1))?.uses).toBe(1);
      expect((await two.revoke(rule.id, T0 + 2))?.id).toBe(rule.id);
      expect(await one.find(rule, T0 + 3)).toBeUndefined();
    } finally {
      await Promise.all([one.close(), two.close()]);
    }
  });

  it("refuses to read a rule hash that does not parse, naming its key", async () => {
    const redis = testRedis.redis();
    const prefix = testRedis.prefix();
    const store = createRedisRuleStore({ redis, prefix });
    const rule = ruleOf();
    await store.create(rule, T0);
    await redis.hset(storeKeys(prefix).rule(rule.id), "createdBy", "{not json");
    await expect(store.get(rule.id, T0 + 1)).rejects.toThrow(UnreadableRuleError);
    await expect(store.get(rule.id, T0 + 1)).rejects.toThrow(storeKeys(prefix).rule(rule.id));
  });

  it("throws StoreUnavailableError within its bound when Redis never answers", async () => {
    const silent = await silentRedis();
    const store = connectRedisRuleStore(silent.url, { timeoutMs: 300 });
    try {
      const started = Date.now();
      await expect(store.find(ruleOf(), T0)).rejects.toThrow(StoreUnavailableError);
      expect(Date.now() - started).toBeLessThan(2_000);
    } finally {
      await store.close();
      await silent.close();
    }
  });
});
