/**
 * The Redis sign-in store against the shared sign-in store contract on a
 * real Redis server, plus what only Redis has: the key layout (one key per
 * entry, named by the digest, never the secret, with a TTL to its end),
 * entries shared by stores on separate connections (two relay instances),
 * a single use that holds across them, an entry that does not parse, and a
 * Redis that never answers.
 */
import { describe, expect, it } from "vitest";
import { StoreUnavailableError } from "../../../src/requests/errors.js";
import { signInDigest } from "../../../src/requests/sign-ins.js";
import { storeKeys } from "../../../src/store/keys.js";
import { connectRedisSignInStore, createRedisSignInStore, UnreadableSignInError } from "../../../src/store/redis-sign-ins.js";
import { keysUnder, REDIS_TEST_URL, silentRedis, useTestRedis } from "../../helpers/redis.js";
import { digestOf, runSignInStoreContract, sessionOf } from "../../helpers/sign-in-store-contract.js";

const testRedis = useTestRedis();

runSignInStoreContract("redis", async () => createRedisSignInStore({ redis: testRedis.redis(), prefix: testRedis.prefix() }));

describe("redis sign-in store specifics", () => {
  it("keeps an entry as one key <prefix>:console:<kind>:<digest>, with no secret in it, expiring at the entry's end", async () => {
    const redis = testRedis.redis();
    const prefix = testRedis.prefix();
    const store = createRedisSignInStore({ redis, prefix });
    const secret = "the-session-cookie-value";
    const now = Date.now();
    await store.put("session", signInDigest(secret), sessionOf({ expiresAt: now + 60_000 }), now);
    const key = `${prefix}:console:session:${signInDigest(secret)}`;
    expect(storeKeys(prefix).signIn("session", signInDigest(secret))).toBe(key);
    expect(storeKeys(prefix, 16).signIn("session", signInDigest(secret))).toBe(key);
    expect(await keysUnder(redis, prefix)).toStrictEqual([key]);
    expect(await redis.get(key)).not.toContain(secret);
    const ttl = await redis.pttl(key);
    expect(ttl).toBeGreaterThan(55_000);
    expect(ttl).toBeLessThanOrEqual(60_000);
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

  it("shares entries between stores on separate connections: a link kept by one is taken once over both; a session removed on one is gone on the other", async () => {
    const prefix = testRedis.prefix();
    const one = connectRedisSignInStore(REDIS_TEST_URL, { prefix });
    const two = connectRedisSignInStore(REDIS_TEST_URL, { prefix });
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
    } finally {
      await Promise.all([one.close(), two.close()]);
    }
  });

  it("refuses to read an entry that does not parse, naming its key", async () => {
    const redis = testRedis.redis();
    const prefix = testRedis.prefix();
    const store = createRedisSignInStore({ redis, prefix });
    const digest = digestOf();
    const key = storeKeys(prefix).signIn("session", digest);
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
