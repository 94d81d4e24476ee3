/**
 * RequestStore on Redis, shared by every relay instance. Each state change is
 * one Lua script (./lua, loaded by scripts.ts) that also keeps the posting
 * set and the callback queue, and publishes the id of every request that
 * ends; each store instance holds one subscription to that channel, so a
 * waiter on one instance wakes when a request ends on another.
 *
 * Every method answers or throws StoreUnavailableError within `timeoutMs`
 * (./redis-connection.ts says how, and which ioredis options
 * `connectRedisStore` sets for it).
 *
 * Connections: `createRedisStore` never quits the `redis` client it is given
 * (the caller owns it and may share it); it quits the subscriber only when it
 * made it (`redis.duplicate()`). `connectRedisStore` makes both connections
 * from a URL and quits both on close().
 */
import { Redis } from "ioredis";
import { silentLogger, type Logger } from "../logger.js";
import type { SlackRef } from "../protocol/request-view.js";
import { settleBefore } from "../protocol/timing.js";
import type { RequestRecord } from "../requests/model.js";
import type { ClaimedCallback, ClaimedUpdate, CreateOptions, CreateResult, RequestStore, Transition, TransitionResult } from "../requests/store.js";
import { DEFAULT_RETENTION_MS, DEFAULT_STORE_TIMEOUT_MS, UPDATE_GRACE_MS } from "../requests/store.js";
import { toClaimedCallbacks, toClaimedIds, toCreateReply, toQueuedResult, toSlackResult, toTransitionResult } from "./codes.js";
import { storeKeys, type StoreKeys } from "./keys.js";
import { bounded, commandConnectionOptions, redisCall, SUBSCRIBER_OVERRIDES } from "./redis-connection.js";
import { decodeRecord, encodeRecord, otherMessageField } from "./redis-record.js";
import { loadScripts, registerScripts, type ScriptName, type Scripts, type ScriptSources } from "./scripts.js";

export interface RedisStoreOptions {
  /** Connection for commands and scripts. Must not set ioredis `keyPrefix` (use `prefix`). */
  redis: Redis;
  /** Connection for the "ended" subscription; defaults to `redis.duplicate()`. */
  subscriber?: Redis;
  /** Prefix of every key and of the pub/sub channel. */
  prefix?: string;
  /** How long an ended request stays readable (ms). */
  retentionMs?: number;
  /** Unix time in milliseconds. */
  now?: () => number;
  logger?: Logger;
  /** Longest a store call may take (ms) before it throws StoreUnavailableError. */
  timeoutMs?: number;
}

export type ConnectRedisStoreOptions = Omit<RedisStoreOptions, "redis" | "subscriber">;

const PING_TIMEOUT_MS = 1000;
/** How long close() waits for Redis to acknowledge QUIT or UNSUBSCRIBE. */
const CLOSE_TIMEOUT_MS = 1000;
/** A create retries at most this often when its idempotency key names a request that is gone. */
const STALE_RETRIES = 3;

const SCRIPT_FOR = { answered: "answer", expired: "expire", cancelled: "cancel", failed: "fail" } as const;

/** What each transition script takes after its common arguments. */
function changeArgs(change: Transition): string[] {
  switch (change.status) {
    case "answered":
      return [JSON.stringify(change.decision), JSON.stringify(change.answeredBy)];
    case "expired":
      return change.unpostedError === undefined ? [] : [change.unpostedError];
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
  const settings = settle(options);
  const subscriber = options.subscriber ?? redis.duplicate();
  return buildStore(redis, subscriber, settings, { redis: false, subscriber: options.subscriber === undefined });
}

/** A store that owns its connections to `url` (redis:// or rediss://). */
export function connectRedisStore(url: string, options: ConnectRedisStoreOptions = {}): RequestStore {
  const settings = settle(options);
  const redis = new Redis(url, commandConnectionOptions(settings.timeoutMs));
  return buildStore(redis, redis.duplicate(SUBSCRIBER_OVERRIDES), settings, { redis: true, subscriber: true });
}

interface Settings {
  keys: StoreKeys;
  sources: ScriptSources;
  retentionMs: number;
  now: () => number;
  logger: Logger;
  timeoutMs: number;
}

/** Checks the options before any connection is made. */
function settle({
  prefix = "relay",
  retentionMs = DEFAULT_RETENTION_MS,
  now = Date.now,
  logger = silentLogger,
  timeoutMs = DEFAULT_STORE_TIMEOUT_MS,
}: ConnectRedisStoreOptions): Settings {
  if (!Number.isSafeInteger(retentionMs) || retentionMs <= 0) throw new Error("retentionMs must be a positive integer");
  if (!Number.isSafeInteger(timeoutMs) || timeoutMs <= 0) throw new Error("timeoutMs must be a positive integer");
  return { keys: storeKeys(prefix), sources: loadScripts(), retentionMs, now, logger, timeoutMs };
}

function buildStore(redis: Redis, subscriber: Redis, settings: Settings, owned: { redis: boolean; subscriber: boolean }): RequestStore {
  const { keys, retentionMs, now, logger, timeoutMs } = settings;
  const scripts = boundScripts(registerScripts(redis, settings.sources));
  const listeners = new Set<(id: string) => void>();
  const resyncListeners = new Set<() => void>();
  let closed = false;

  if (owned.redis) watchConnection(redis, "commands", logger);
  if (owned.subscriber) watchConnection(subscriber, "subscriber", logger);

  const onMessage = (channel: string, id: string) => {
    if (channel !== keys.ended) return;
    notify(listeners, id, logger);
  };
  subscriber.on("message", onMessage);
  let resubscribes = false;
  const subscribed = subscriber.subscribe(keys.ended).then(() => {
    resubscribes = true;
  });
  subscribed.catch((error: unknown) => logger.error({ channel: keys.ended, error }, "redis subscribe failed"));
  // Back after a gap: notifications published meanwhile are lost. Once the subscription is live again, listeners re-read.
  const onSubscriberReady = () => {
    if (!resubscribes || closed) return;
    subscriber.subscribe(keys.ended).then(
      () => notify(resyncListeners, undefined, logger),
      (error: unknown) => logger.warn({ channel: keys.ended, error }, "redis resubscribe failed"),
    );
  };
  subscriber.on("ready", onSubscriberReady);
  // With no offline queue (connectRedisStore), commands fail until the connection is ready.
  const connected = owned.redis && redis.status !== "ready" ? new Promise<void>((resolve) => redis.once("ready", () => resolve())) : Promise.resolve();

  /** One store method: bounded, its outages turned into StoreUnavailableError. */
  const call = <T>(operation: string, run: () => Promise<T>): Promise<T> => bounded(operation, timeoutMs, run());

  async function read(id: string): Promise<RequestRecord | undefined> {
    const key = keys.data(id);
    const hash = await redisCall("HGETALL", redis.hgetall(key));
    return Object.keys(hash).length === 0 ? undefined : decodeRecord(key, hash);
  }

  return {
    create: (record: RequestRecord, { idempotencyKey, postLeaseUntil }: CreateOptions = {}): Promise<CreateResult> =>
      call("create", async () => {
        const key = keys.data(record.id);
        const idemKey = idempotencyKey === undefined ? "" : keys.idempotency(idempotencyKey);
        const fields = encodeRecord(record);
        const createKeys = [key, keys.deadlines, idemKey, keys.callbacks, keys.posting];
        let staleId = "";
        for (let attempt = 0; attempt <= STALE_RETRIES; attempt += 1) {
          const at = now();
          const raw = await scripts.create(createKeys, [record.id, keys.ended, at, retentionMs, staleId, postLeaseUntil ?? at, ...fields]);
          const reply = toCreateReply(key, raw);
          // The stored hash is exactly encodeRecord(record): no need to read it back and parse it again.
          if (reply.outcome === "created") return { record, created: true };
          const existing = await read(reply.existingId);
          if (existing) return { record: existing, created: false };
          staleId = reply.existingId;
        }
        throw new Error(`idempotency key ${idemKey} keeps naming requests that are gone`);
      }),

    get: (id: string) => call("get", () => read(id)),

    setSlackMessage: (id: string, slack: SlackRef) =>
      call("setSlackMessage", async () => {
        const key = keys.data(id);
        const ref = JSON.stringify({ channel: slack.channel, ts: slack.ts });
        const raw = await scripts.setSlack([key, keys.message(slack), keys.posting, keys.updates], [id, ref, now() + UPDATE_GRACE_MS]);
        return toSlackResult(key, raw);
      }),

    addOtherMessage: (id: string, slack: SlackRef) =>
      call("addOtherMessage", async () => {
        const key = keys.data(id);
        const ref = { channel: slack.channel, ts: slack.ts };
        const args = [id, otherMessageField(ref), JSON.stringify(ref), now() + UPDATE_GRACE_MS];
        return toSlackResult(key, await scripts.addOtherMessage([key, keys.message(slack), keys.updates], args));
      }),

    findBySlackMessage: (slack: SlackRef) => call("findBySlackMessage", async () => (await redisCall("GET", redis.get(keys.message(slack)))) ?? undefined),

    transition: (id: string, change: Transition): Promise<TransitionResult> =>
      call("transition", async () => {
        const key = keys.data(id);
        const script = SCRIPT_FOR[change.status];
        const args = [id, keys.ended, String(change.at), retentionMs, change.at + UPDATE_GRACE_MS, ...changeArgs(change)];
        return toTransitionResult(script, key, await scripts[script]([key, keys.deadlines, keys.callbacks, keys.posting, keys.updates], args));
      }),

    // Issue 8 store work in progress (approvals, reminders, listing): replaced before it lands.
    approve: () => Promise.reject(new Error("approve: not built yet")),
    claimReminders: () => Promise.reject(new Error("claimReminders: not built yet")),
    retryReminder: () => Promise.reject(new Error("retryReminder: not built yet")),
    completeReminder: () => Promise.reject(new Error("completeReminder: not built yet")),
    listRequests: () => Promise.reject(new Error("listRequests: not built yet")),

    dueForExpiry: (at: number, limit: number) =>
      call("dueForExpiry", async () => (limit <= 0 ? [] : redisCall("ZRANGEBYSCORE", redis.zrangebyscore(keys.deadlines, "-inf", at, "LIMIT", 0, limit)))),

    claimCallbacks: (at: number, leaseMs: number, limit: number): Promise<ClaimedCallback[]> =>
      call("claimCallbacks", async () =>
        limit <= 0 ? [] : toClaimedCallbacks(await scripts.claimCallbacks([keys.callbacks, keys.callbackAttempts], [at, leaseMs, limit])),
      ),

    retryCallback: (id: string, nextAt: number, attempts: number) =>
      call("retryCallback", async () =>
        toQueuedResult("retry-callback", await scripts.retryCallback([keys.callbacks, keys.callbackAttempts], [id, nextAt, attempts])),
      ),

    completeCallback: (id: string) =>
      call("completeCallback", async () => toQueuedResult("complete-callback", await scripts.completeCallback([keys.callbacks, keys.callbackAttempts], [id]))),

    // The message-update outbox is a leased queue like the callbacks': the same scripts, its own keys.
    claimUpdates: (at: number, leaseMs: number, limit: number): Promise<ClaimedUpdate[]> =>
      call("claimUpdates", async () =>
        limit <= 0 ? [] : toClaimedCallbacks(await scripts.claimCallbacks([keys.updates, keys.updateAttempts], [at, leaseMs, limit])),
      ),

    retryUpdate: (id: string, nextAt: number, attempts: number) =>
      call("retryUpdate", async () => toQueuedResult("retry-update", await scripts.retryCallback([keys.updates, keys.updateAttempts], [id, nextAt, attempts]))),

    completeUpdate: (id: string) =>
      call("completeUpdate", async () => toQueuedResult("complete-update", await scripts.completeCallback([keys.updates, keys.updateAttempts], [id]))),

    claimUnposted: (at: number, leaseMs: number, limit: number): Promise<string[]> =>
      call("claimUnposted", async () => (limit <= 0 ? [] : toClaimedIds(await scripts.claimUnposted([keys.posting], [at, leaseMs, limit])))),

    renewPostLease: (id: string, until: number) =>
      call("renewPostLease", async () => toQueuedResult("renew-post-lease", await scripts.renewPostLease([keys.posting], [id, until]))),

    forgetUnposted: (id: string) => call("forgetUnposted", async () => Number(await redisCall("ZREM", redis.zrem(keys.posting, id))) > 0),

    onEnded(listener) {
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
      };
    },

    onResync(listener) {
      resyncListeners.add(listener);
      return () => {
        resyncListeners.delete(listener);
      };
    },

    ready: () => Promise.all([subscribed, connected]).then(() => undefined),

    async ping() {
      const reply = await within(PING_TIMEOUT_MS, redis.ping());
      return reply === "PONG" && subscriber.status === "ready";
    },

    async close() {
      if (closed) return;
      closed = true;
      listeners.clear();
      resyncListeners.clear();
      subscriber.off("message", onMessage);
      subscriber.off("ready", onSubscriberReady);
      if (owned.subscriber) await shutdown(subscriber);
      else await within(CLOSE_TIMEOUT_MS, subscriber.unsubscribe(keys.ended));
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

/** Calls each listener, so that one that throws does not stop the others. */
function notify<A extends string | undefined>(listeners: ReadonlySet<(arg: A) => void>, arg: A, logger: Logger): void {
  for (const listener of listeners) {
    try {
      listener(arg);
    } catch (error) {
      logger.error({ id: arg, error }, "store listener failed");
    }
  }
}

/**
 * Logs a connection going down once (not every reconnect attempt of a long
 * outage) and its coming back; its own connections only (a caller's client is
 * the caller's to watch).
 */
function watchConnection(connection: Redis, name: string, logger: Logger): void {
  let down = false;
  connection.on("error", (error: unknown) => {
    if (down) return logger.debug({ connection: name, error }, "redis connection error");
    down = true;
    logger.warn({ connection: name, error }, "redis connection lost: store calls fail with 503 relay_store_unavailable until it is back");
  });
  connection.on("ready", () => {
    if (!down) return;
    down = false;
    logger.info({ connection: name }, "redis connection is back");
  });
}

/** Quits gracefully when connected, else (or when QUIT hangs) drops the connection. */
async function shutdown(connection: Redis): Promise<void> {
  if (connection.status === "ready" && (await within(CLOSE_TIMEOUT_MS, connection.quit())) === "OK") return;
  connection.disconnect();
}

/** `task`'s value, or undefined when it fails or takes longer than `ms`. */
function within<T>(ms: number, task: Promise<T>): Promise<T | undefined> {
  return settleBefore(
    task.catch(() => undefined),
    { ms },
    () => undefined,
  );
}
