/**
 * The Redis store's leased queues — callbacks, message updates, reminders,
 * outcome notices — and its posting set: the RequestStore methods that
 * claim, retry and complete their entries. The steps that fill them (create,
 * set-slack, approve, every transition) are in redis-store.ts; all four queues share
 * the claim / retry / complete scripts, each on its own zset and attempts
 * hash (./keys.ts).
 */
import type { Redis } from "ioredis";
import { toClaimedCallbacks, toClaimedIds, toClaimedNotices, toClaimedReminders, toPendingUpdateResult, toQueuedResult } from "./codes.js";
import type { StoreKeys } from "./keys.js";
import { noticeKey, reminderKey, type QueueMethods } from "./leased-queue.js";
import { redisCall } from "./redis-connection.js";
import type { Scripts } from "./scripts.js";

export interface RedisContext {
  redis: Redis;
  keys: StoreKeys;
  /** Every script, its outages already turned into StoreUnavailableError. */
  scripts: Scripts;
  /** One store method: bounded, its outages turned into StoreUnavailableError. */
  call: <T>(operation: string, run: () => Promise<T>) => Promise<T>;
}

export function queueMethods({ redis, keys, scripts, call }: RedisContext): QueueMethods {
  const callbacks = [keys.callbacks, keys.callbackAttempts];
  const updates = [keys.updates, keys.updateAttempts];
  const reminders = [keys.reminders, keys.reminderAttempts];
  const notices = [keys.notices, keys.noticeAttempts];
  const claim = (queue: string[], at: number, leaseMs: number, limit: number) => scripts.claimCallbacks(queue, [at, leaseMs, limit]);
  const retry = async (script: string, queue: string[], member: string, nextAt: number, attempts: number) =>
    toQueuedResult(script, await scripts.retryCallback(queue, [member, nextAt, attempts]));
  const complete = async (script: string, queue: string[], member: string) => toQueuedResult(script, await scripts.completeCallback(queue, [member]));

  return {
    claimCallbacks: (at, leaseMs, limit) =>
      call("claimCallbacks", async () => (limit <= 0 ? [] : toClaimedCallbacks(await claim(callbacks, at, leaseMs, limit)))),
    retryCallback: (id, nextAt, attempts) => call("retryCallback", () => retry("retry-callback", callbacks, id, nextAt, attempts)),
    completeCallback: (id) => call("completeCallback", () => complete("complete-callback", callbacks, id)),

    claimUpdates: (at, leaseMs, limit) => call("claimUpdates", async () => (limit <= 0 ? [] : toClaimedCallbacks(await claim(updates, at, leaseMs, limit)))),
    retryUpdate: (id, nextAt, attempts) => call("retryUpdate", () => retry("retry-update", updates, id, nextAt, attempts)),
    completeUpdate: (id) => call("completeUpdate", () => complete("complete-update", updates, id)),
    completePendingUpdate: (id, shownApprovals, retryAt, shownExpiresAt) =>
      call("completePendingUpdate", async () => {
        const args = [id, shownApprovals, retryAt, ...(shownExpiresAt === undefined ? [] : [shownExpiresAt])];
        return toPendingUpdateResult(await scripts.completePendingUpdate([keys.data(id), ...updates], args));
      }),

    claimReminders: (at, leaseMs, limit) =>
      call("claimReminders", async () => (limit <= 0 ? [] : toClaimedReminders(await claim(reminders, at, leaseMs, limit)))),
    retryReminder: (id, index, nextAt, attempts) => call("retryReminder", () => retry("retry-reminder", reminders, reminderKey(id, index), nextAt, attempts)),
    completeReminder: (id, index) => call("completeReminder", () => complete("complete-reminder", reminders, reminderKey(id, index))),

    claimNotices: (at, leaseMs, limit) => call("claimNotices", async () => (limit <= 0 ? [] : toClaimedNotices(await claim(notices, at, leaseMs, limit)))),
    retryNotice: (id, part, nextAt, attempts) => call("retryNotice", () => retry("retry-notice", notices, noticeKey(id, part), nextAt, attempts)),
    completeNotice: (id, part) => call("completeNotice", () => complete("complete-notice", notices, noticeKey(id, part))),

    claimUnposted: (at, leaseMs, limit) =>
      call("claimUnposted", async () => (limit <= 0 ? [] : toClaimedIds(await scripts.claimUnposted([keys.posting], [at, leaseMs, limit])))),
    renewPostLease: (id, until) =>
      call("renewPostLease", async () => toQueuedResult("renew-post-lease", await scripts.renewPostLease([keys.posting], [id, until]))),
    forgetUnposted: (id) => call("forgetUnposted", async () => Number(await redisCall("ZREM", redis.zrem(keys.posting, id))) > 0),
  };
}
