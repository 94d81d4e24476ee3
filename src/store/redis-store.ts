/**
 * RequestStore on Redis, shared by every relay instance. Each state change is
 * one Lua script (./lua, loaded by scripts.ts) that also keeps the posting
 * set, the recent index and the leased queues (callbacks, message updates,
 * reminders, outcome notices; their own methods are in redis-queues.ts, the listing in
 * redis-listing.ts), and publishes the id of every request that ends; each
 * store instance holds one subscription to that channel
 * (redis-notifications.ts), so a waiter on one instance wakes when a request
 * ends on another.
 *
 * On Redis Cluster the keys are sharded (./keys.ts): each script runs on the
 * keys of its request's shard, a create with an idempotency key takes an id
 * of that key's shard (newId), and what looks across requests (the expiry
 * sweep, the claims, counts, listing, the lookup by Slack message) asks
 * every shard and merges (redis-shards.ts, redis-queues.ts,
 * redis-listing.ts). The one-shard layout of one server is the same code
 * with one shard.
 *
 * Every method answers or throws StoreUnavailableError within `timeoutMs`
 * (./redis-connection.ts says how, and which ioredis options
 * `connectRedisStore` sets for it).
 *
 * Connections: `createRedisStore` never quits the `redis` client it is given
 * (the caller owns it and may share it); it quits the subscriber only when it
 * made it (`redis.duplicate()`). `connectRedisStore` makes both connections
 * from a URL, a Sentinel target or a cluster's seed nodes and quits both on
 * close().
 */
import { Cluster } from "ioredis";
import { silentLogger, type Logger } from "../logger.js";
import type { SlackRef } from "../protocol/request-view.js";
import { TooManyPendingError } from "../requests/errors.js";
import type { RequestRecord } from "../requests/model.js";
import type { ApproveResult, CreateOptions, CreateResult, RequestStore, SlackMessageOptions, Transition, TransitionResult } from "../requests/store.js";
import { DEFAULT_RETENTION_MS, DEFAULT_STORE_TIMEOUT_MS, UPDATE_GRACE_MS } from "../requests/store.js";
import { toApproveResult, toCreateReply, toExtendResult, toSlackResult, toTransitionResult } from "./codes.js";
import { CLUSTER_SHARDS, storeKeys, type StoreKeys } from "./keys.js";
import {
  bounded,
  commandConnectionOptions,
  keepConnected,
  redisCall,
  shutdown,
  SUBSCRIBER_OVERRIDES,
  watchConnection,
  within,
  type OutageListener,
} from "./redis-connection.js";
import { listRequests } from "./redis-listing.js";
import { shardMethods } from "./redis-shards.js";
import { queueMethods } from "./redis-queues.js";
import { approvalField, decodeRecord, encodeRecord, otherMessageField } from "./redis-record.js";
import { EndedNotifications } from "./redis-notifications.js";
import { loadScripts, registerScripts, type ScriptName, type Scripts, type ScriptSources } from "./scripts.js";
import { openRedis, toTarget, type RedisClient, type RedisTargetInput } from "./redis-target.js";

export interface RedisStoreOptions {
  /** Connection for commands and scripts (a Cluster client for Redis Cluster). Must not set ioredis `keyPrefix` (use `prefix`). */
  redis: RedisClient;
  /** Connection for the "ended" subscription; defaults to `redis.duplicate()`. */
  subscriber?: RedisClient;
  /** Prefix of every key and of the pub/sub channel. */
  prefix?: string;
  /** Shards of the tagged key layout (./keys.ts); unset → CLUSTER_SHARDS on a Cluster client, else the one-shard layout of one server. */
  shards?: number;
  /** How long an ended request stays readable (ms). */
  retentionMs?: number;
  /** Unix time in milliseconds. */
  now?: () => number;
  logger?: Logger;
  /** Longest a store call may take (ms) before it throws StoreUnavailableError. */
  timeoutMs?: number;
  /** Most requests the index of recent requests keeps, for listing ended ones (the newest; pending ones are always listed). */
  recentLimit?: number;
  /** Hears of every StoreUnavailableError a store method throws (the relay's metrics count them). */
  onUnavailable?: OutageListener;
}

export type ConnectRedisStoreOptions = Omit<RedisStoreOptions, "redis" | "subscriber" | "shards">;

const PING_TIMEOUT_MS = 1000;
/** Requests the recent index keeps by default (RedisStoreOptions.recentLimit). */
export const DEFAULT_RECENT_LIMIT = 10_000;
/** A create retries at most this often when its idempotency key names a request that is gone. */
const STALE_RETRIES = 3;

const SCRIPT_FOR = { answered: "answer", expired: "expire", cancelled: "cancel", failed: "fail" } as const;

/** What each transition script takes after its common arguments. */
function changeArgs(change: Transition): string[] {
  switch (change.status) {
    case "answered":
      return [JSON.stringify(change.decision), JSON.stringify(change.answeredBy)];
    case "expired":
      return [change.unpostedError ?? "", change.decision === undefined ? "" : JSON.stringify(change.decision)];
    case "cancelled":
      return [...(change.by === undefined ? [] : ["cancelledBy", change.by]), ...(change.reason === undefined ? [] : ["error", change.reason])];
    case "failed":
      return [change.error];
  }
}

export function createRedisStore(options: RedisStoreOptions): RequestStore {
  const { redis } = options;
  if (redis.options.keyPrefix) throw new Error("the Redis store builds its own keys: use its `prefix` option, not ioredis keyPrefix");
  if (options.subscriber === redis) throw new Error("the Redis store needs a separate subscriber connection");
  const settings = settle(options, options.shards ?? (redis instanceof Cluster ? CLUSTER_SHARDS : undefined));
  // The two clients' duplicate() differ in signature, so each is called as its own.
  const subscriber = options.subscriber ?? (redis instanceof Cluster ? redis.duplicate() : redis.duplicate());
  return buildStore(redis, subscriber, settings, { redis: false, subscriber: options.subscriber === undefined });
}

/** A store that owns its connections to `input`: a redis:// or rediss:// URL, Sentinel's master, or a Redis Cluster (./redis-target.ts). */
export function connectRedisStore(input: RedisTargetInput, options: ConnectRedisStoreOptions = {}): RequestStore {
  const target = toTarget(input);
  const settings = settle(options, target.mode === "cluster" ? CLUSTER_SHARDS : undefined);
  const redis = openRedis(target, commandConnectionOptions(settings.timeoutMs));
  const subscriber = openRedis(target, { ...commandConnectionOptions(settings.timeoutMs), ...SUBSCRIBER_OVERRIDES });
  keepConnected(redis);
  keepConnected(subscriber);
  return buildStore(redis, subscriber, settings, { redis: true, subscriber: true });
}

interface Settings {
  keys: StoreKeys;
  sources: ScriptSources;
  retentionMs: number;
  now: () => number;
  logger: Logger;
  timeoutMs: number;
  recentLimit: number;
  onUnavailable?: OutageListener;
}

/** Checks the options before any connection is made. */
function settle(
  {
    prefix = "relay",
    retentionMs = DEFAULT_RETENTION_MS,
    now = Date.now,
    logger = silentLogger,
    timeoutMs = DEFAULT_STORE_TIMEOUT_MS,
    recentLimit = DEFAULT_RECENT_LIMIT,
    onUnavailable,
  }: ConnectRedisStoreOptions,
  shards: number | undefined,
): Settings {
  for (const [name, value] of Object.entries({ retentionMs, timeoutMs, recentLimit })) {
    if (!Number.isSafeInteger(value) || value <= 0) throw new Error(`${name} must be a positive integer`);
  }
  return {
    keys: storeKeys(prefix, shards),
    sources: loadScripts(),
    retentionMs,
    now,
    logger,
    timeoutMs,
    recentLimit,
    ...(onUnavailable ? { onUnavailable } : {}),
  };
}

function buildStore(redis: RedisClient, subscriber: RedisClient, settings: Settings, owned: { redis: boolean; subscriber: boolean }): RequestStore {
  const { keys, retentionMs, now, logger, timeoutMs, recentLimit, onUnavailable } = settings;
  const scripts = boundScripts(registerScripts(redis, settings.sources));
  let closed = false;

  if (owned.redis) watchConnection(redis, "commands", logger);
  if (owned.subscriber) watchConnection(subscriber, "subscriber", logger);
  const notifications = new EndedNotifications(subscriber, { ended: keys.ended, changed: keys.changed, cancelledCalls: keys.cancelledCalls }, logger);
  // With no offline queue (connectRedisStore), commands fail until the connection is ready.
  const connected = owned.redis && redis.status !== "ready" ? new Promise<void>((resolve) => redis.once("ready", () => resolve())) : Promise.resolve();

  /** One store method: bounded, its outages turned into StoreUnavailableError. */
  const call = <T>(operation: string, run: () => Promise<T>): Promise<T> => bounded(operation, timeoutMs, run(), onUnavailable);
  /** The keys of the shard a request's id places it on. */
  const shardOf = (id: string) => keys.shards[keys.shardOf(id)]!;
  const across = shardMethods({ redis, keys, call });
  /** KEYS of every script that can end a request ("Ending a request" in lua/includes/common.lua). */
  const endingKeys = (id: string) => {
    const shard = shardOf(id);
    const { callbacks, posting, updates, reminders, notices } = shard.queues;
    return [keys.data(id), shard.deadlines, callbacks.due, posting.due, updates.due, reminders.due, reminders.attempts, notices.due];
  };

  async function read(id: string): Promise<RequestRecord | undefined> {
    const key = keys.data(id);
    const hash = await redisCall("HGETALL", redis.hgetall(key));
    return Object.keys(hash).length === 0 ? undefined : decodeRecord(key, hash);
  }

  return {
    ...across,

    create: (given: RequestRecord, { idempotencyKey, postLeaseUntil, maxPending, sameAs }: CreateOptions = {}): Promise<CreateResult> =>
      call("create", async () => {
        // A create that uses its token's keys (idempotency, pending count, same ask) goes on the token's shard, so its id must be one of that shard's.
        const placed = idempotencyKey !== undefined || maxPending !== undefined || sameAs !== undefined;
        const fits = !placed || keys.shardOf(given.id) === keys.shardOfToken(given.tokenName);
        const record = fits ? given : { ...given, id: across.newId(given.tokenName) };
        const key = keys.data(record.id);
        const shard = shardOf(record.id);
        // No idempotency key or same-ask key: the script is given the request's own key in its place (see create-8.lua).
        const idemKey = idempotencyKey === undefined ? key : shard.idempotency(idempotencyKey);
        const sameKey = sameAs === undefined ? key : shard.sameAs(sameAs);
        const fields = encodeRecord(record);
        const createKeys = [
          key,
          shard.deadlines,
          idemKey,
          shard.queues.callbacks.due,
          shard.queues.posting.due,
          shard.recent,
          shard.pendingOf(record.tokenName),
          sameKey,
        ];
        const cap = maxPending === undefined || record.status !== "pending" ? "" : maxPending;
        let staleId = "";
        for (let attempt = 0; attempt <= STALE_RETRIES; attempt += 1) {
          const at = now();
          const args = [record.id, keys.ended, at, retentionMs, staleId, postLeaseUntil ?? at, record.createdAt, recentLimit, cap, ...fields];
          const raw = await scripts.create(createKeys, args);
          const reply = toCreateReply(key, raw);
          // The stored hash is exactly encodeRecord(record): no need to read it back and parse it again.
          if (reply.outcome === "created") return { record, created: true };
          if (reply.outcome === "too_many") throw new TooManyPendingError(reply.pending, Number(cap), reply.earliestEnd, at);
          const existing = await read(reply.existingId);
          if (existing) return { record: existing, created: false, ...(reply.joined ? { joined: true } : {}) };
          if (reply.joined) continue;
          staleId = reply.existingId;
        }
        throw new Error(`idempotency key ${idemKey} keeps naming requests that are gone`);
      }),

    get: (id: string) => call("get", () => read(id)),

    setSlackMessage: (id: string, slack: SlackRef, { postedAt, reminders = [] }: SlackMessageOptions = {}) =>
      call("setSlackMessage", async () => {
        const key = keys.data(id);
        const ref = JSON.stringify({ channel: slack.channel, ts: slack.ts });
        const at = now();
        const queued = reminders.flatMap(({ index, dueAt }) => [index, dueAt]);
        const shard = shardOf(id);
        const raw = await scripts.setSlack(
          [key, shard.message(slack), shard.queues.posting.due, shard.queues.updates.due, shard.queues.reminders.due, shard.queues.notices.due],
          [id, ref, at + UPDATE_GRACE_MS, postedAt ?? at, at, ...queued],
        );
        return toSlackResult(key, raw);
      }),

    addOtherMessage: (id: string, slack: SlackRef) =>
      call("addOtherMessage", async () => {
        const key = keys.data(id);
        const ref = { channel: slack.channel, ts: slack.ts };
        const args = [id, otherMessageField(ref), JSON.stringify(ref), now() + UPDATE_GRACE_MS];
        const shard = shardOf(id);
        return toSlackResult(key, await scripts.addOtherMessage([key, shard.message(slack), shard.queues.updates.due], args));
      }),

    transition: (id: string, change: Transition): Promise<TransitionResult> =>
      call("transition", async () => {
        const script = SCRIPT_FOR[change.status];
        const args = [id, keys.ended, String(change.at), retentionMs, change.at + UPDATE_GRACE_MS, ...changeArgs(change)];
        return toTransitionResult(script, keys.data(id), await scripts[script](endingKeys(id), args));
      }),

    approve: (id, approval, quorum, final): Promise<ApproveResult> =>
      call("approve", async () => {
        const { at, decision, answeredBy } = final;
        const args = [id, keys.ended, at, retentionMs, at + UPDATE_GRACE_MS, JSON.stringify(decision), JSON.stringify(answeredBy)];
        args.push(approvalField(approval.person.id), JSON.stringify(approval), quorum, approval.at + UPDATE_GRACE_MS);
        return toApproveResult(keys.data(id), await scripts.approve(endingKeys(id), args));
      }),

    extend: (id, expiresAt) =>
      call("extend", async () => {
        const at = now();
        const args = [id, expiresAt, at, retentionMs, at + UPDATE_GRACE_MS];
        const shard = shardOf(id);
        return toExtendResult(keys.data(id), await scripts.extend([keys.data(id), shard.deadlines, shard.queues.updates.due], args));
      }),

    listRequests: (query) => call("listRequests", () => listRequests({ redis, keys, read }, query)),

    ...queueMethods({ redis, keys, scripts, call }),

    onEnded: (listener) => notifications.onEnded(listener),
    onResync: (listener) => notifications.onResync(listener),
    onChanged: (listener) => notifications.onChanged(listener),
    announce: (id) => {
      redis.publish(keys.changed, id).catch((error: unknown) => logger.warn({ id, error }, "redis: announcing a change failed"));
    },
    onCancelledCall: (listener) => notifications.onCancelledCall(listener),
    announceCancelledCall: async (key, rememberMs) => {
      // Remembered before it is announced: a call that misses the key was listed before the announcement, so hears it.
      if (rememberMs !== undefined) {
        await redis
          .set(keys.cancelledCall(key), "1", "PX", rememberMs)
          .catch((error: unknown) => logger.warn({ error }, "redis: remembering a cancelled call failed"));
      }
      await redis.publish(keys.cancelledCalls, key).catch((error: unknown) => logger.warn({ error }, "redis: announcing a cancelled call failed"));
    },
    wasCallCancelled: (key) => call("wasCallCancelled", async () => (await redis.exists(keys.cancelledCall(key))) === 1),

    ready: () => Promise.all([notifications.subscribed, connected]).then(() => undefined),

    async ping() {
      const reply = await within(PING_TIMEOUT_MS, redis.ping());
      return reply === "PONG" && subscriber.status === "ready";
    },

    async close() {
      if (closed) return;
      closed = true;
      await notifications.close(owned.subscriber);
      if (owned.redis) await shutdown(redis);
    },
  };
}

/** Every script call with its outages turned into StoreUnavailableError. */
function boundScripts(scripts: Scripts): Scripts {
  const wrapped = {} as Scripts;
  for (const name of Object.keys(scripts) as ScriptName[]) wrapped[name] = (keys, args) => redisCall(`script ${name}`, scripts[name](keys, args));
  return wrapped;
}
