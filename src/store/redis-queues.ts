/**
 * The Redis store's leased queues — callbacks, message updates, reminders,
 * outcome notices — and its posting set: the RequestStore methods that
 * claim, retry and complete their entries. The steps that fill them (create,
 * set-slack, approve, every transition) are in redis-store.ts; all four queues share
 * the claim / retry / complete scripts, each on its own zset and attempts
 * hash (./keys.ts).
 *
 * Each shard has its own queues, and an entry sits on its request's shard;
 * a claim over several shards (Redis Cluster) looks at every shard's due
 * entries and has each shard's claim script lease its share of the earliest
 * (redis-shards.ts): earliest due first over the whole store, as with one
 * shard, and nothing leased that the caller is not handed.
 */
import type { ClaimedCallback } from "../requests/store.js";
import { toClaimedCallbacks, toClaimedIds, toClaimedNotices, toClaimedReminders, toPendingUpdateResult, toQueuedResult } from "./codes.js";
import type { ShardKeys, StoreKeys } from "./keys.js";
import { noticeKey, reminderKey, type QueueMethods } from "./leased-queue.js";
import { redisCall } from "./redis-connection.js";
import { claimAcross } from "./redis-shards.js";
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

type Queue = (shard: ShardKeys) => [zset: string, attempts: string];
const CALLBACKS: Queue = (shard) => [shard.callbacks, shard.callbackAttempts];
const UPDATES: Queue = (shard) => [shard.updates, shard.updateAttempts];
const REMINDERS: Queue = (shard) => [shard.reminders, shard.reminderAttempts];
const NOTICES: Queue = (shard) => [shard.notices, shard.noticeAttempts];

export function queueMethods(context: RedisContext): QueueMethods {
  const { redis, keys, scripts, call } = context;
  const shardOf = (id: string) => keys.shards[keys.shardOf(id)]!;

  const claim = (queue: Queue, at: number, leaseMs: number, limit: number): Promise<ClaimedCallback[]> =>
    claimAcross(
      context,
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
        claimAcross(
          context,
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
        claimAcross(
          context,
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
        claimAcross(
          context,
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
