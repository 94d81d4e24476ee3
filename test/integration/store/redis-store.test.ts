/**
 * The Redis store against the shared store contract on a real Redis server,
 * (in the one-shard layout, and in the sharded layout of Redis Cluster),
 * plus what only Redis has: the key layout, TTLs, connection ownership,
 * corrupt data and an unreachable server.
 */
import { randomUUID } from "node:crypto";
import { createServer, type AddressInfo } from "node:net";
import { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { StoreUnavailableError } from "../../../src/requests/errors.js";
import type { RequestRecord } from "../../../src/requests/model.js";
import { UnreadableRecordError } from "../../../src/store/redis-record.js";
import { connectRedisStore, createRedisStore } from "../../../src/store/redis-store.js";
import { loadScripts } from "../../../src/store/scripts.js";
import { CLUSTER_SHARDS } from "../../../src/store/keys.js";
import { connectTestRedis, deleteKeysUnder, keysUnder, REDIS_TEST_URL, uniquePrefix } from "../../helpers/redis.js";
import { runStoreContract } from "../../helpers/store-contract.js";
import { entryKey } from "../../../src/requests/store.js";
import { claimedKeys } from "../../helpers/queue-entries.js";
import { ALICE, BOB, DAVE } from "../../fixtures/people.js";
import { sleep, until } from "../../helpers/until.js";

let redis: Redis;
const prefixes: string[] = [];

beforeAll(() => {
  redis = connectTestRedis();
});
afterEach(async () => {
  await Promise.all(prefixes.splice(0).map((prefix) => deleteKeysUnder(redis, prefix)));
});
afterAll(async () => {
  await redis.quit();
});

runStoreContract("redis", async ({ now, retentionMs }) => {
  const prefix = uniquePrefix();
  prefixes.push(prefix);
  const store = createRedisStore({ redis, prefix, now, retentionMs });
  await store.ready();
  return { store, elapse: sleep };
});

// The cluster's key layout (16 shards, each script on one shard's keys) on one server: redis-cluster.test.ts runs it on a real cluster.
runStoreContract("redis, sharded layout", async ({ now, retentionMs }) => {
  const prefix = uniquePrefix();
  prefixes.push(prefix);
  const store = createRedisStore({ redis, prefix, now, retentionMs, shards: CLUSTER_SHARDS });
  await store.ready();
  return { store, elapse: sleep };
});

describe("redis store specifics", () => {
  const opened: Array<{ close(): Promise<void> }> = [];
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((store) => store.close()));
  });

  const T0 = 1_800_000_000_000;
  function open(options: Partial<Parameters<typeof createRedisStore>[0]> = {}) {
    const prefix = uniquePrefix();
    prefixes.push(prefix);
    const store = createRedisStore({ redis, prefix, now: () => T0, retentionMs: 10_000, ...options });
    opened.push(store);
    return { store, prefix };
  }
  const pending = (id = randomUUID(), expiresAt = T0 + 60_000): RequestRecord => ({
    id,
    status: "pending",
    tokenName: "ci",
    channel: "C0123456789",
    body: { kind: "step_gate", toolName: "Bash", input: { list: [], command: "ls" } },
    createdAt: T0,
    expiresAt,
  });
  const slack = { channel: "C0123456789", ts: "1712345678.000100" };

  it("keeps each request in a hash of opaque strings under its hash-tagged key, next to the global keys", async () => {
    const { store, prefix } = open();
    const request = pending();
    await store.create(request, { idempotencyKey: "ci:key-1" });
    await store.setSlackMessage(request.id, slack);
    expect((await keysUnder(redis, prefix)).sort()).toStrictEqual(
      [
        `${prefix}:{${request.id}}:data`,
        `${prefix}:deadlines`,
        `${prefix}:recent`,
        `${prefix}:idem:ci:key-1`,
        `${prefix}:msg:${slack.channel}:${slack.ts}`,
      ].sort(),
    );
    const hash = await redis.hgetall(`${prefix}:{${request.id}}:data`);
    expect(hash).toMatchObject({
      status: "pending",
      body: JSON.stringify(request.body),
      expiresAt: String(request.expiresAt),
      slack: JSON.stringify(slack),
    });
    expect(JSON.parse(hash.meta!)).toStrictEqual({ id: request.id, tokenName: "ci", channel: "C0123456789", createdAt: T0 });
    expect(await redis.get(`${prefix}:idem:ci:key-1`)).toBe(request.id);
    expect(await redis.zscore(`${prefix}:deadlines`, request.id)).toBe(String(request.expiresAt));
  });

  it("keeps a pending request until its deadline plus the retention at most", async () => {
    const { store, prefix } = open();
    const request = pending();
    await store.create(request, { idempotencyKey: "ci:key-2" });
    await store.setSlackMessage(request.id, slack);
    for (const key of [`${prefix}:{${request.id}}:data`, `${prefix}:idem:ci:key-2`, `${prefix}:msg:${slack.channel}:${slack.ts}`]) {
      const ttl = await redis.pttl(key);
      expect(ttl, key).toBeGreaterThan(70_000 - 1000);
      expect(ttl, key).toBeLessThanOrEqual(70_000);
    }
  });

  it("when a request ends, its deadline goes and all its keys keep only the retention", async () => {
    const { store, prefix } = open();
    const request = pending();
    await store.create(request, { idempotencyKey: "ci:key-3" });
    await store.setSlackMessage(request.id, slack);
    await store.transition(request.id, { status: "cancelled", at: T0, by: "agent" });
    expect(await redis.zscore(`${prefix}:deadlines`, request.id)).toBeNull();
    for (const key of [`${prefix}:{${request.id}}:data`, `${prefix}:idem:ci:key-3`, `${prefix}:msg:${slack.channel}:${slack.ts}`]) {
      const ttl = await redis.pttl(key);
      expect(ttl, key).toBeGreaterThan(10_000 - 1000);
      expect(ttl, key).toBeLessThanOrEqual(10_000);
    }
  });

  it("more time keeps a pending request's keys until its new deadline plus the retention, and moves its deadline score", async () => {
    const { store, prefix } = open();
    const request = pending();
    await store.create(request, { idempotencyKey: "ci:key-4" });
    await store.setSlackMessage(request.id, slack);
    await store.extend(request.id, request.expiresAt + 1_800_000);
    expect(await redis.zscore(`${prefix}:deadlines`, request.id)).toBe(String(request.expiresAt + 1_800_000));
    for (const key of [`${prefix}:{${request.id}}:data`, `${prefix}:idem:ci:key-4`, `${prefix}:msg:${slack.channel}:${slack.ts}`]) {
      const ttl = await redis.pttl(key);
      expect(ttl, key).toBeGreaterThan(1_870_000 - 1000);
      expect(ttl, key).toBeLessThanOrEqual(1_870_000);
    }
  });

  it("keeps the callback URL in the hash and queues the callback in the callbacks zset, scored by the end time", async () => {
    const { store, prefix } = open();
    const request = pending();
    request.body.callbackUrl = "https://hooks.example.com/relay?x=1";
    await store.create(request);
    expect(await redis.hget(`${prefix}:{${request.id}}:data`, "callbackUrl")).toBe(request.body.callbackUrl);
    expect(await store.get(request.id)).toStrictEqual(request);
    expect(await redis.exists(`${prefix}:callbacks`)).toBe(0);
    await store.transition(request.id, { status: "cancelled", at: T0 + 7 });
    expect(await redis.zscore(`${prefix}:callbacks`, request.id)).toBe(String(T0 + 7));
    await store.claim("callbacks", T0 + 7, 1000, 10);
    expect(await redis.zscore(`${prefix}:callbacks`, request.id)).toBe(String(T0 + 1007));
    await store.retry("callbacks", request.id, T0 + 5000, 3);
    expect(await redis.hget(`${prefix}:callback-attempts`, request.id)).toBe("3");
    await store.complete("callbacks", request.id);
    // It ended while still being posted: its message update is queued, to look for a post Slack took unrecorded.
    await store.complete("updates", request.id);
    expect((await keysUnder(redis, prefix)).sort()).toStrictEqual([`${prefix}:recent`, `${prefix}:{${request.id}}:data`].sort());
  });

  it("an expiry of a request whose keys are gone removes its stale deadline and posting entry", async () => {
    const { store, prefix } = open();
    const ghost = randomUUID();
    await redis.zadd(`${prefix}:deadlines`, T0 - 1, ghost);
    await redis.zadd(`${prefix}:posting`, T0 - 1, ghost);
    expect(await store.dueForExpiry(T0, 10)).toStrictEqual([ghost]);
    expect(await store.transition(ghost, { status: "expired", at: T0 })).toStrictEqual({ outcome: "not_found" });
    expect(await store.dueForExpiry(T0, 10)).toStrictEqual([]);
    expect(await redis.exists(`${prefix}:posting`)).toBe(0);
  });

  it("keeps an unposted request in the posting zset, scored by its lease end, until its message is recorded", async () => {
    const { store, prefix } = open();
    const request = pending();
    await store.create(request, { postLeaseUntil: T0 + 30_000 });
    expect(await redis.zscore(`${prefix}:posting`, request.id)).toBe(String(T0 + 30_000));
    await store.retry("posting", request.id, T0 + 45_000, 0);
    expect(await redis.zscore(`${prefix}:posting`, request.id)).toBe(String(T0 + 45_000));
    expect(await redis.exists(`${prefix}:posting-attempts`)).toBe(0);
    expect(await claimedKeys(store, "posting", T0 + 45_000, 1000, 10)).toStrictEqual([request.id]);
    expect(await redis.zscore(`${prefix}:posting`, request.id)).toBe(String(T0 + 46_000));
    await store.setSlackMessage(request.id, slack);
    expect(await redis.exists(`${prefix}:posting`)).toBe(0);
  });

  it("a create without a lease scores the posting entry with the store's now", async () => {
    const { store, prefix } = open();
    const request = pending();
    await store.create(request);
    expect(await redis.zscore(`${prefix}:posting`, request.id)).toBe(String(T0));
  });

  it("a posting entry whose request is gone is handed out, so a recovery pass can forget it", async () => {
    const { store, prefix } = open();
    const ghost = randomUUID();
    await redis.zadd(`${prefix}:posting`, T0 - 1, ghost);
    expect(await claimedKeys(store, "posting", T0, 1000, 10)).toStrictEqual([ghost]);
    expect(await store.get(ghost)).toBeUndefined();
    expect(await store.complete("posting", ghost)).toBe(true);
    expect(await redis.exists(`${prefix}:posting`)).toBe(0);
  });

  it("an idempotency key that names a request that is gone does not block a new create", async () => {
    const { store, prefix } = open();
    await redis.set(`${prefix}:idem:ci:key-4`, "vanished-id");
    const request = pending();
    expect(await store.create(request, { idempotencyKey: "ci:key-4" })).toStrictEqual({ record: request, created: true });
    expect(await redis.get(`${prefix}:idem:ci:key-4`)).toBe(request.id);
  });

  it("reports a stored record that fails the schema instead of returning it", async () => {
    const { store, prefix } = open();
    const request = pending();
    await store.create(request);
    const key = `${prefix}:{${request.id}}:data`;
    await redis.hset(key, "body", "{not json");
    await expect(store.get(request.id)).rejects.toThrow(UnreadableRecordError);
    await redis.hset(key, "body", JSON.stringify(request.body), "decision", JSON.stringify({ behavior: "maybe" }));
    await expect(store.get(request.id)).rejects.toThrow(/decision/);
    await expect(store.transition(request.id, { status: "expired", at: T0 })).rejects.toThrow(UnreadableRecordError);
  });

  it("keeps each approval in its own hash field, numbered in order, and the queued reminders in their zset until the request ends", async () => {
    const { store, prefix } = open();
    const request = pending();
    await store.create(request);
    await store.setSlackMessage(request.id, slack, {
      postedAt: T0 + 1,
      reminders: [
        { index: 0, dueAt: T0 + 300_000 },
        { index: 2, dueAt: T0 + 900_000 },
      ],
    });
    const final = { status: "answered", decision: { reply: "y" }, answeredBy: { id: BOB.id }, at: T0 } as const;
    const alice = { person: ALICE, at: T0 };
    const bob = { person: { id: BOB.id }, at: T0 };
    await store.approve(request.id, alice, 3, final);
    await store.approve(request.id, bob, 3, final);
    const key = `${prefix}:{${request.id}}:data`;
    expect(await redis.hmget(key, `approval:${ALICE.id}`, `approval:${BOB.id}`, "approvalCount", "postedAt", "reminders")).toStrictEqual([
      `1:${JSON.stringify(alice)}`,
      `2:${JSON.stringify(bob)}`,
      "2",
      String(T0 + 1),
      "0,2",
    ]);
    expect(await redis.zrange(`${prefix}:reminders`, "0", "-1", "WITHSCORES")).toStrictEqual([
      `${request.id}:0`,
      String(T0 + 300_000),
      `${request.id}:2`,
      String(T0 + 900_000),
    ]);
    await store.claim("reminders", T0 + 300_000, 1000, 10);
    await store.retry("reminders", entryKey(request.id, 0), T0 + 400_000, 1);
    expect(await redis.hget(`${prefix}:reminder-attempts`, `${request.id}:0`)).toBe("1");
    await store.transition(request.id, { status: "cancelled", at: T0 });
    expect(await redis.exists(`${prefix}:reminders`, `${prefix}:reminder-attempts`)).toBe(0);
  });

  it("repeats the requestedBy id in the hash, queues the notice parts as <id>:<part> scored by the end time, and marks them queued", async () => {
    const { store, prefix } = open();
    const request: RequestRecord = { ...pending(), slack, policy: { alwaysAllow: "tool", requestedBy: { id: DAVE.id } } };
    await store.create(request);
    const key = `${prefix}:{${request.id}}:data`;
    expect(await redis.hmget(key, "requestedBy", "noticesQueued")).toStrictEqual([DAVE.id, null]);
    await store.transition(request.id, { status: "cancelled", at: T0 + 7 });
    expect(await redis.hget(key, "noticesQueued")).toBe("1");
    expect(await redis.zrange(`${prefix}:notices`, "0", "-1", "WITHSCORES")).toStrictEqual([
      `${request.id}:dm`,
      String(T0 + 7),
      `${request.id}:thread`,
      String(T0 + 7),
    ]);
    await store.claim("notices", T0 + 7, 1000, 10);
    await store.retry("notices", entryKey(request.id, "dm"), T0 + 5000, 2);
    expect(await redis.hget(`${prefix}:notice-attempts`, `${request.id}:dm`)).toBe("2");
    await store.complete("notices", entryKey(request.id, "dm"));
    await store.complete("notices", entryKey(request.id, "thread"));
    expect(await redis.exists(`${prefix}:notices`, `${prefix}:notice-attempts`)).toBe(0);
    expect(await store.get(request.id)).toMatchObject({ status: "cancelled", policy: request.policy });
  });

  it("reads back a request stored with approvals and postedAt", async () => {
    const { store } = open();
    const request: RequestRecord = {
      ...pending(),
      slack,
      postedAt: T0 + 3,
      approvals: [
        { person: { id: BOB.id }, at: T0 + 9 },
        { person: { id: ALICE.id }, at: T0 + 4 },
      ],
    };
    await store.create(request);
    expect(await store.get(request.id)).toStrictEqual(request);
  });

  it("reports an approval field that is not numbered instead of reading it", async () => {
    const { store, prefix } = open();
    const request = pending();
    await store.create(request);
    await redis.hset(`${prefix}:{${request.id}}:data`, `approval:${ALICE.id}`, JSON.stringify({ person: { id: ALICE.id }, at: T0 }));
    await expect(store.get(request.id)).rejects.toThrow(UnreadableRecordError);
  });

  it("the recent index keeps the newest requests only, so older ended ones drop out of the listing while pending ones stay", async () => {
    const { store, prefix } = open({ recentLimit: 2 });
    const ended = (n: number): RequestRecord => ({ ...pending(), createdAt: T0 + n, status: "cancelled", endedAt: T0 + n });
    const oldPending = { ...pending(), createdAt: T0 - 1 };
    await store.create(oldPending);
    for (const n of [1, 2, 3]) await store.create(ended(n));
    expect(await redis.zcard(`${prefix}:recent`)).toBe(2);
    const listed = await store.listRequests({ limit: 10 });
    expect(listed.map((record) => record.createdAt)).toStrictEqual([T0 + 3, T0 + 2, T0 - 1]);
  });

  it("the pending listing walks the recent index newest first and reaches pending requests older than its trim through the deadlines", async () => {
    const { store, prefix } = open({ recentLimit: 2 });
    for (const n of [1, 2, 3, 4]) await store.create({ ...pending(), createdAt: T0 + n });
    expect(await redis.zcard(`${prefix}:recent`)).toBe(2);
    expect((await store.listRequests({ status: "pending", limit: 2 })).map((record) => record.createdAt)).toStrictEqual([T0 + 4, T0 + 3]);
    expect((await store.listRequests({ status: "pending", limit: 10 })).map((record) => record.createdAt)).toStrictEqual([T0 + 4, T0 + 3, T0 + 2, T0 + 1]);
  });

  it("the listing removes the entries of requests that are gone from the recent index", async () => {
    const { store, prefix } = open();
    const request = pending();
    await store.create(request);
    await redis.zadd(`${prefix}:recent`, T0 + 5, "vanished-id");
    expect(await store.listRequests({ status: "cancelled", limit: 10 })).toStrictEqual([]);
    expect(await redis.zrange(`${prefix}:recent`, "0", "-1")).toStrictEqual([request.id]);
  });

  it("an approval of a request whose keys are gone removes its stale deadline and posting entry", async () => {
    const { store, prefix } = open();
    const ghost = randomUUID();
    await redis.zadd(`${prefix}:deadlines`, T0 - 1, ghost);
    await redis.zadd(`${prefix}:posting`, T0 - 1, ghost);
    const final = { status: "answered", decision: { reply: "y" }, answeredBy: { id: ALICE.id }, at: T0 } as const;
    expect(await store.approve(ghost, { person: { id: ALICE.id }, at: T0 }, 2, final)).toStrictEqual({ outcome: "not_found" });
    expect(await redis.exists(`${prefix}:deadlines`, `${prefix}:posting`)).toBe(0);
  });

  it("works with a client that returns numbers as strings", async () => {
    const client = new Redis(REDIS_TEST_URL, { stringNumbers: true });
    try {
      const { store } = open({ redis: client });
      const request = pending();
      await store.create(request);
      const result = await store.transition(request.id, { status: "answered", decision: { reply: "y" }, answeredBy: { id: ALICE.id }, at: T0 });
      expect(result.outcome).toBe("applied");
    } finally {
      await client.quit();
    }
  });

  it("keeps calling the other listeners when one throws", async () => {
    const { store } = open();
    await store.ready();
    const seen: string[] = [];
    store.onEnded(() => {
      throw new Error("listener bug");
    });
    store.onEnded((id) => seen.push(id));
    const request = pending();
    await store.create(request);
    await store.transition(request.id, { status: "expired", at: T0 + 60_000 });
    await until(() => seen.includes(request.id), 2000, "the notification");
  });

  it("refuses an ioredis keyPrefix, the same connection as subscriber, a bad retention and a bad recent limit", () => {
    const prefixed = new Redis(REDIS_TEST_URL, { keyPrefix: "x:", lazyConnect: true });
    expect(() => createRedisStore({ redis: prefixed })).toThrow(/keyPrefix/);
    expect(() => createRedisStore({ redis, subscriber: redis })).toThrow(/separate subscriber/);
    expect(() => createRedisStore({ redis, retentionMs: 0 })).toThrow(/retentionMs/);
    expect(() => createRedisStore({ redis, recentLimit: 1.5 })).toThrow(/recentLimit/);
    expect(() => createRedisStore({ redis, prefix: "{x}" })).toThrow(/prefix/);
    prefixed.disconnect();
  });
});

describe("lua scripts", () => {
  it("each opens with a comment naming its KEYS, ARGV (or that it takes none) and replies, and uses exactly the keys its file name counts", () => {
    for (const [name, { lua, numberOfKeys }] of Object.entries(loadScripts())) {
      expect(lua.startsWith("--[["), name).toBe(true);
      expect(lua, name).toMatch(/KEYS\[1\][\s\S]*ARGV(\[1\]| +none\n)[\s\S]*Returns/);
      expect(lua, name).not.toContain("@include");
      const used = [...lua.matchAll(/KEYS\[(\d+)\]/g)].map((match) => Number(match[1]));
      expect(Math.max(...used), name).toBe(numberOfKeys);
    }
  });
});

describe("redis store connections", () => {
  it("close() leaves the caller's client working and quits the subscriber it made", async () => {
    const client = connectTestRedis();
    const subscriberOf = spyOnDuplicate(client);
    const store = createRedisStore({ redis: client, prefix: uniquePrefix() });
    await store.ready();
    expect(await store.ping()).toBe(true);
    await store.close();
    expect(await client.ping()).toBe("PONG");
    await until(() => subscriberOf()?.status === "end", 2000, "the store's subscriber to close");
    await client.quit();
  });

  it("close() unsubscribes a caller's subscriber but leaves it connected", async () => {
    const subscriber = connectTestRedis();
    const prefix = uniquePrefix();
    const store = createRedisStore({ redis, subscriber, prefix });
    await store.ready();
    expect(await redis.pubsub("NUMSUB", `${prefix}:ended`)).toStrictEqual([`${prefix}:ended`, 1]);
    await store.close();
    expect(await redis.pubsub("NUMSUB", `${prefix}:ended`)).toStrictEqual([`${prefix}:ended`, 0]);
    expect(subscriber.status).toBe("ready");
    await subscriber.quit();
  });

  it("a store connected from a URL quits both of its connections on close()", async () => {
    const prefix = uniquePrefix();
    const store = connectRedisStore(REDIS_TEST_URL, { prefix });
    await store.ready();
    expect(await store.ping()).toBe(true);
    expect(await redis.pubsub("NUMSUB", `${prefix}:ended`)).toStrictEqual([`${prefix}:ended`, 1]);
    await store.close();
    expect(await store.ping()).toBe(false);
    await until(async () => (await redis.pubsub("NUMSUB", `${prefix}:ended`))[1] === 0, 2000, "the subscription to close");
  });

  it("ping() answers false within about a second when Redis does not answer", async () => {
    const port = await closedPort();
    const store = connectRedisStore(`redis://127.0.0.1:${port}`, { prefix: uniquePrefix() });
    const started = Date.now();
    expect(await store.ping()).toBe(false);
    expect(Date.now() - started).toBeLessThan(1500);
    await store.close();
    expect(Date.now() - started).toBeLessThan(1500);
  });

  it("every call of the approval, reminder and listing methods throws StoreUnavailableError within the bound when Redis never answers", async () => {
    const silent = createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    const { port } = silent.address() as AddressInfo;
    const store = connectRedisStore(`redis://127.0.0.1:${port}`, { prefix: uniquePrefix(), timeoutMs: 300 });
    const final = { status: "answered", decision: { reply: "y" }, answeredBy: { id: ALICE.id }, at: 0 } as const;
    const calls: Array<[string, () => Promise<unknown>]> = [
      ["approve", () => store.approve("id", { person: { id: ALICE.id }, at: 0 }, 2, final)],
      ["setSlackMessage", () => store.setSlackMessage("id", { channel: "C0123456789", ts: "1.1" }, { reminders: [{ index: 0, dueAt: 0 }] })],
      ["claim reminders", () => store.claim("reminders", 0, 1000, 10)],
      ["retry reminders", () => store.retry("reminders", entryKey("id", 0), 0, 1)],
      ["complete reminders", () => store.complete("reminders", entryKey("id", 0))],
      ["completePendingUpdate", () => store.completePendingUpdate("id", 1, 0)],
      ["extend", () => store.extend("id", 0)],
      ["listRequests", () => store.listRequests({ limit: 10 })],
      ["listRequests pending", () => store.listRequests({ status: "pending", limit: 10 })],
    ];
    try {
      for (const [name, run] of calls) {
        const started = Date.now();
        await expect(run(), name).rejects.toThrow(StoreUnavailableError);
        expect(Date.now() - started, name).toBeLessThan(800);
      }
    } finally {
      await store.close();
      silent.close();
    }
  });

  it("tells onUnavailable of each outage a call ends with, once, and of nothing when Redis answers", async () => {
    const heard: StoreUnavailableError[] = [];
    const onUnavailable = (error: StoreUnavailableError) => heard.push(error);
    const working = connectRedisStore(REDIS_TEST_URL, { prefix: uniquePrefix(), onUnavailable });
    await working.ready();
    expect(await working.counts()).toStrictEqual({ pending: 0, callbacks: 0 });
    await working.close();
    expect(heard).toStrictEqual([]);

    const refused = connectRedisStore(`redis://127.0.0.1:${await closedPort()}`, { prefix: uniquePrefix(), onUnavailable });
    await expect(refused.counts()).rejects.toThrow(StoreUnavailableError);
    await expect(refused.get("id")).rejects.toThrow(StoreUnavailableError);
    await refused.close();
    expect(heard).toHaveLength(2);
  });

  it("ping() answers false when the subscription connection is down", async () => {
    const subscriber = connectTestRedis();
    const store = createRedisStore({ redis, subscriber, prefix: uniquePrefix() });
    await store.ready();
    const ended = new Promise((resolve) => subscriber.once("end", resolve));
    subscriber.disconnect();
    await ended;
    expect(await store.ping()).toBe(false);
    await store.close();
  });
});

/** Captures the connection `redis.duplicate()` hands out. */
function spyOnDuplicate(client: Redis): () => Redis | undefined {
  let made: Redis | undefined;
  const original = client.duplicate.bind(client);
  client.duplicate = ((override?: Parameters<Redis["duplicate"]>[0]) => (made = original(override))) as Redis["duplicate"];
  return () => made;
}

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
