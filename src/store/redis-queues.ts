/**
 * The Redis store's leased queues (requests/store.ts QueueName): the
 * RequestStore methods that claim, retry and complete their entries, one
 * Lua triad (claim-entries, retry-entry, complete-entry) for every queue,
 * each on the queue's own zset and attempts hash (./keys.ts). The steps that
 * fill them (create, set-slack, approve, every transition) are in
 * redis-store.ts; a queue its caller fills (`enqueue`: rule tallies) takes
 * one ZADD NX, atomic without a script.
 *
 * Each shard has its own queues, and an entry sits on its request's shard;
 * a claim over several shards (Redis Cluster) looks at every shard's due
 * entries and has each shard's claim script lease its share of the earliest
 * (redis-shards.ts): earliest due first over the whole store, as with one
 * shard, and nothing leased that the caller is not handed.
 */
import { entryOfKey, type QueueName } from "../requests/store.js";
import { toClaimedEntries, toPendingUpdateResult, toQueuedResult } from "./codes.js";
import type { StoreKeys } from "./keys.js";
import type { QueueMethods } from "./leased-queue.js";
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

export function queueMethods(context: RedisContext): QueueMethods {
  const { keys, scripts, call } = context;
  /** The zset and attempts hash of `queue` on the shard of the request `key` belongs to. */
  const queueKeys = (queue: QueueName, key: string) => {
    const { due, attempts } = keys.shards[keys.shardOf(entryOfKey(queue, key).id)]!.queues[queue];
    return [due, attempts];
  };

  return {
    claim: (queue, at, leaseMs, limit) =>
      call(`claim ${queue}`, () =>
        claimAcross(
          context,
          (shard) => shard.queues[queue].due,
          at,
          limit,
          async (shard, count) => {
            const { due, attempts } = shard.queues[queue];
            return toClaimedEntries(queue, await scripts.claimEntries([due, attempts], [at, leaseMs, count]));
          },
          ({ key }) => key,
        ),
      ),
    retry: (queue, key, nextAt, attempts) =>
      call(`retry ${queue}`, async () => toQueuedResult("retry-entry", await scripts.retryEntry(queueKeys(queue, key), [key, nextAt, attempts]))),
    complete: (queue, key) =>
      call(`complete ${queue}`, async () => toQueuedResult("complete-entry", await scripts.completeEntry(queueKeys(queue, key), [key]))),
    enqueue: (queue, key, dueAt) =>
      call(`enqueue ${queue}`, async () => {
        const [due] = queueKeys(queue, key);
        return (await redisCall("ZADD", context.redis.zadd(due!, "NX", dueAt, key))) === 1;
      }),
    completePendingUpdate: (id, shownApprovals, retryAt, shownExpiresAt) =>
      call("completePendingUpdate", async () => {
        const args = [id, shownApprovals, retryAt, ...(shownExpiresAt === undefined ? [] : [shownExpiresAt])];
        return toPendingUpdateResult(await scripts.completePendingUpdate([keys.data(id), ...queueKeys("updates", id)], args));
      }),
  };
}
