/**
 * What only the Redis sign-in store has (the shared sign-in store contract
 * runs on it, on one server and on a cluster, in
 * rule-and-sign-in-stores.test.ts), on a real Redis server: the key layout
 * (one key per entry, named by the digest, never the secret, and the kind's
 * index, both with a TTL to the entry's end), entries shared by stores on
 * separate connections (two relay instances), a single use and a bound that
 * hold across them, an entry that does not parse, and a Redis that never
 * answers.
 */
import { describe, expect, it } from "vitest";
import { StoreUnavailableError } from "../../../src/requests/errors.js";
import { signInDigest } from "../../../src/requests/sign-ins.js";
import { storeKeys } from "../../../src/store/keys.js";
import { connectRedisSignInStore, createRedisSignInStore, UnreadableSignInError } from "../../../src/store/redis-sign-ins.js";
import { keysUnder, REDIS_TEST_URL, silentRedis, useTestRedis } from "../../helpers/redis.js";
import { digestOf, sessionOf } from "../../helpers/sign-in-store-contract.js";

const testRedis = useTestRedis();

describe("redis sign-in store specifics", () => {
  it("keeps an entry as one key <prefix>:console:<kind>:<digest>, with no secret in it, and its digest in <prefix>:console:<kind>:live, both expiring at the entry's end", async () => {
    const redis = testRedis.redis();
    const prefix = testRedis.prefix();
    const store = createRedisSignInStore({ redis, prefix });
    const secret = "the-session-cookie-value";
    const digest = signInDigest(secret);
    const now = Date.now();
    await store.put("session", digest, sessionOf({ expiresAt: now + 60_000 }), now);
    const [key, live] = [`${prefix}:console:session:${digest}`, `${prefix}:console:session:live`];
    expect(storeKeys(prefix).signIns("session")).toMatchObject({ live });
    expect(storeKeys(prefix).signIns("session").entry(digest)).toBe(key);
    // On a cluster a kind's keys share a hash tag: a script touches both.
    expect(storeKeys(prefix, 16).signIns("session").entry(digest)).toBe(`${prefix}:{${prefix}:console:session}:${digest}`);
    expect(storeKeys(prefix, 16).signIns("session").live).toBe(`${prefix}:{${prefix}:console:session}:live`);
    expect((await keysUnder(redis, prefix)).sort()).toStrictEqual([key, live].sort());
    expect(await redis.get(key)).not.toContain(secret);
    expect(await redis.zrange(live, "0", "-1", "WITHSCORES")).toStrictEqual([digest, String(now + 60_000)]);
    for (const name of [key, live]) {
      const ttl = await redis.pttl(name);
      expect(ttl, name).toBeGreaterThan(55_000);
      expect(ttl, name).toBeLessThanOrEqual(60_000);
    }
  });

  it("taking a link leaves no key behind, and so does a sign-out", async () => {
    const redis = testRedis.redis();
    const prefix = testRedis.prefix();
    const store = createRedisSignInStore({ redis, prefix });
    const now = Date.now();
    const [link, session] = [digestOf(), digestOf()];
    await store.put("link", link, { person: { id: "local" }, expiresAt: now + 60_000 }, now);
    await store.put("session", session, sessionOf({ expiresAt: now + 60_000 }), now);
    await store.take("link", link, now);
    await store.remove("session", session);
    expect(await keysUnder(redis, prefix)).toStrictEqual([]);
  });

  it("shares entries between stores on separate connections: a link kept by one is taken once over both; a session removed on one is gone on the other; the bound counts both", async () => {
    const prefix = testRedis.prefix();
    const one = connectRedisSignInStore(REDIS_TEST_URL, { prefix, maxPerKind: 3 });
    const two = connectRedisSignInStore(REDIS_TEST_URL, { prefix, maxPerKind: 3 });
    try {
      const now = Date.now();
      const [link, session] = [digestOf(), digestOf()];
      await one.put("link", link, { person: { id: "local" }, expiresAt: now + 60_000 }, now);
      const takes = await Promise.all([one.take("link", link, now), two.take("link", link, now), two.take("link", link, now)]);
      expect(takes.filter((taken) => taken !== undefined)).toHaveLength(1);
      await two.put("session", session, sessionOf({ expiresAt: now + 60_000 }), now);
      expect(await one.get("session", session, now)).toBeDefined();
      await one.remove("session", session);
      expect(await two.get("session", session, now)).toBeUndefined();
      const started = { nonce: "n", expiresAt: now + 60_000 };
      const puts = await Promise.all([one, two, one, two, one, two].map((store) => store.put("slack", digestOf(), started, now)));
      expect(puts.filter(Boolean)).toHaveLength(3);
    } finally {
      await Promise.all([one.close(), two.close()]);
    }
  });

  it("refuses to read an entry that does not parse, naming its key", async () => {
    const redis = testRedis.redis();
    const prefix = testRedis.prefix();
    const store = createRedisSignInStore({ redis, prefix });
    const digest = digestOf();
    const key = storeKeys(prefix).signIns("session").entry(digest);
    await redis.set(key, JSON.stringify({ ...sessionOf(), role: "owner" }));
    await expect(store.get("session", digest, 0)).rejects.toThrow(UnreadableSignInError);
    await redis.set(key, "{not json");
    await expect(store.take("session", digest, 0)).rejects.toThrow(key);
  });

  it("throws StoreUnavailableError within its bound when Redis never answers", async () => {
    const silent = await silentRedis();
    const store = connectRedisSignInStore(silent.url, { timeoutMs: 300 });
    try {
      const started = Date.now();
      await expect(store.get("session", digestOf(), started)).rejects.toThrow(StoreUnavailableError);
      expect(Date.now() - started).toBeLessThan(2_000);
    } finally {
      await store.close();
      await silent.close();
    }
  });
});
