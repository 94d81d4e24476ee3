/**
 * The Redis store's leased queues — callbacks, message updates, reminders,
 * outcome notices — and its posting set: the RequestStore methods that
 * claim, retry and complete their entries. The steps that fill them (create,
 * set-slack, approve, every transition) are in redis-store.ts; all four queues share
 * the claim / retry / complete scripts, each on its own zset and attempts
 * hash (./keys.ts).
 *
 * Each shard has its own queues, and an entry sits on its request's shard.
 * A claim over several shards (Redis Cluster) first looks at each shard's
 * due entries (a plain ZRANGEBYSCORE, pipelined to every shard at once),
 * picks the earliest `limit` of them all, and then has each shard's claim
 * script lease its share: earliest due first over the whole store, as with
 * one shard, and nothing leased that the caller is not handed. When other
 * claims took some of what it saw, it looks again for the rest.
 */
import type { ClaimedCallback } from "../requests/store.js";
import { toClaimedCallbacks, toClaimedIds, toClaimedNotices, toClaimedReminders, toPendingUpdateResult, toQueuedResult } from "./codes.js";
import type { ShardKeys, StoreKeys } from "./keys.js";
import { compareStrings, noticeKey, reminderKey, type QueueMethods } from "./leased-queue.js";
import { redisCall } from "./redis-connection.js";
import type { RedisClient } from "./redis-target.js";
import type { Scripts } from "./scripts.js";

export interface RedisContext {
  redis: RedisClient;
  keys: StoreKeys;
  /** Every script, its outages already turned into StoreUnavailableError. */
  scripts: Scripts;
  /** One store method: bounded, its outages turned into StoreUnavailableError. */
  call: <T>(operation: string, run: () => Promise<T>) => Promise<T>;
}

/** Most look-and-claim rounds of one claim over several shards. */
const MAX_CLAIM_ROUNDS = 8;

type Queue = (shard: ShardKeys) => [zset: string, attempts: string];
const CALLBACKS: Queue = (shard) => [shard.callbacks, shard.callbackAttempts];
const UPDATES: Queue = (shard) => [shard.updates, shard.updateAttempts];
const REMINDERS: Queue = (shard) => [shard.reminders, shard.reminderAttempts];
const NOTICES: Queue = (shard) => [shard.notices, shard.noticeAttempts];

export function queueMethods({ redis, keys, scripts, call }: RedisContext): QueueMethods {
  const shardOf = (id: string) => keys.shards[keys.shardOf(id)]!;

  /** Up to `limit` members due at `at` over every shard, earliest first, each claimed by `claimOn` on its shard. */
  async function claimSharded<T>(
    zsetOf: (shard: ShardKeys) => string,
    at: number,
    limit: number,
    claimOn: (shard: ShardKeys, count: number) => Promise<T[]>,
    memberOf: (entry: T) => string,
  ): Promise<T[]> {
    if (limit <= 0) return [];
    if (keys.shards.length === 1) return claimOn(keys.shards[0]!, limit);
    const claimed: T[] = [];
    // Another instance may lease what this one looked at first: look again for the rest, until nothing is due (each round, someone's claim took what it saw).
    for (let round = 0; round < MAX_CLAIM_ROUNDS && claimed.length < limit; round += 1) {
      const wanted = limit - claimed.length;
      const looks = await Promise.all(
        keys.shards.map((shard) => redisCall("ZRANGEBYSCORE", redis.zrangebyscore(zsetOf(shard), "-inf", at, "WITHSCORES", "LIMIT", 0, wanted))),
      );
      const due = looks.flatMap((flat, k) => Array.from({ length: flat.length / 2 }, (_, i) => ({ k, member: flat[2 * i]!, dueAt: Number(flat[2 * i + 1]) })));
      if (due.length === 0) break;
      due.sort((a, b) => a.dueAt - b.dueAt || compareStrings(a.member, b.member));
      const picked = due.slice(0, wanted);
      const counts = new Map<number, number>();
      for (const { k } of picked) counts.set(k, (counts.get(k) ?? 0) + 1);
      const got = (await Promise.all([...counts].map(([k, count]) => claimOn(keys.shards[k]!, count)))).flat();
      const rank = new Map(picked.map(({ member }, i) => [member, i]));
      claimed.push(...got.sort((a, b) => (rank.get(memberOf(a)) ?? picked.length) - (rank.get(memberOf(b)) ?? picked.length)));
    }
    return claimed;
  }

  const claim = (queue: Queue, at: number, leaseMs: number, limit: number): Promise<ClaimedCallback[]> =>
    claimSharded(
      (shard) => queue(shard)[0],
      at,
      limit,
      async (shard, count) => toClaimedCallbacks(await scripts.claimCallbacks(queue(shard), [at, leaseMs, count])),
      ({ id }) => id,
    );
  const retry = async (script: string, queue: Queue, id: string, member: string, nextAt: number, attempts: number) =>
    toQueuedResult(script, await scripts.retryCallback(queue(shardOf(id)), [member, nextAt, attempts]));
  const complete = async (script: string, queue: Queue, id: string, member: string) =>
    toQueuedResult(script, await scripts.completeCallback(queue(shardOf(id)), [member]));
  const reminderMember = ({ id, index }: { id: string; index: number }) => reminderKey(id, index);

  return {
    claimCallbacks: (at, leaseMs, limit) => call("claimCallbacks", () => claim(CALLBACKS, at, leaseMs, limit)),
    retryCallback: (id, nextAt, attempts) => call("retryCallback", () => retry("retry-callback", CALLBACKS, id, id, nextAt, attempts)),
    completeCallback: (id) => call("completeCallback", () => complete("complete-callback", CALLBACKS, id, id)),

    claimUpdates: (at, leaseMs, limit) => call("claimUpdates", () => claim(UPDATES, at, leaseMs, limit)),
    retryUpdate: (id, nextAt, attempts) => call("retryUpdate", () => retry("retry-update", UPDATES, id, id, nextAt, attempts)),
    completeUpdate: (id) => call("completeUpdate", () => complete("complete-update", UPDATES, id, id)),
    completePendingUpdate: (id, shownApprovals, retryAt, shownExpiresAt) =>
      call("completePendingUpdate", async () => {
        const args = [id, shownApprovals, retryAt, ...(shownExpiresAt === undefined ? [] : [shownExpiresAt])];
        return toPendingUpdateResult(await scripts.completePendingUpdate([keys.data(id), ...UPDATES(shardOf(id))], args));
      }),

    claimReminders: (at, leaseMs, limit) =>
      call("claimReminders", () =>
        claimSharded(
          (shard) => shard.reminders,
          at,
          limit,
          async (shard, count) => toClaimedReminders(await scripts.claimCallbacks(REMINDERS(shard), [at, leaseMs, count])),
          reminderMember,
        ),
      ),
    retryReminder: (id, index, nextAt, attempts) =>
      call("retryReminder", () => retry("retry-reminder", REMINDERS, id, reminderKey(id, index), nextAt, attempts)),
    completeReminder: (id, index) => call("completeReminder", () => complete("complete-reminder", REMINDERS, id, reminderKey(id, index))),

    claimNotices: (at, leaseMs, limit) =>
      call("claimNotices", () =>
        claimSharded(
          (shard) => shard.notices,
          at,
          limit,
          async (shard, count) => toClaimedNotices(await scripts.claimCallbacks(NOTICES(shard), [at, leaseMs, count])),
          ({ id, part }) => noticeKey(id, part),
        ),
      ),
    retryNotice: (id, part, nextAt, attempts) => call("retryNotice", () => retry("retry-notice", NOTICES, id, noticeKey(id, part), nextAt, attempts)),
    completeNotice: (id, part) => call("completeNotice", () => complete("complete-notice", NOTICES, id, noticeKey(id, part))),

    claimUnposted: (at, leaseMs, limit) =>
      call("claimUnposted", () =>
        claimSharded(
          (shard) => shard.posting,
          at,
          limit,
          async (shard, count) => toClaimedIds(await scripts.claimUnposted([shard.posting], [at, leaseMs, count])),
          (id) => id,
        ),
      ),
    renewPostLease: (id, until) =>
      call("renewPostLease", async () => toQueuedResult("renew-post-lease", await scripts.renewPostLease([shardOf(id).posting], [id, until]))),
    forgetUnposted: (id) => call("forgetUnposted", async () => Number(await redisCall("ZREM", redis.zrem(shardOf(id).posting, id))) > 0),
  };
}
