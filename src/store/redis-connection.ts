/**
 * Bounded Redis calls: every store call answers, or fails with
 * StoreUnavailableError, within about `timeoutMs` (default 2 s,
 * RELAY_STORE_TIMEOUT_MS), whatever Redis does: refuses connections, is
 * restarting, hangs, or sits behind a network that drops packets.
 *
 * ioredis's defaults hang instead: a command sent while the connection is
 * down waits in the offline queue and is retried on each of 20 reconnects
 * (`maxRetriesPerRequest: 20`), so a 2-minute outage held every API call for
 * 71–107 s before a MaxRetriesPerRequestError. The options chosen here, and
 * why, for the connection that runs commands and scripts:
 *
 * - `enableOfflineQueue: false`: while disconnected a command fails at once
 *   ("Stream isn't writeable"), so the API answers 503 at once rather than
 *   after the bound; nothing queued can run later, after its caller was told
 *   it failed. The price: a command is refused during the few milliseconds
 *   of a reconnect, which the caller sees as a 503 with Retry-After.
 * - `commandTimeout: timeoutMs`: a command written to a connection that
 *   never answers (Redis hung, packets dropped, a failover in progress) is
 *   rejected after the bound instead of waiting for TCP to notice.
 * - `maxRetriesPerRequest: 0` and `autoResendUnfulfilledCommands: false`: a
 *   command in flight when the connection drops fails at once and is never
 *   sent again on reconnect. Re-sending would run a transition (an answer, a
 *   create) after its caller had already been told it failed.
 * - `connectTimeout: CONNECT_TIMEOUT_MS` (ioredis's own 10 s is for slow
 *   networks; a store that takes longer than this to accept a connection is
 *   down for our purposes) and a reconnect schedule of 50 ms more each time,
 *   at most 2 s apart (`reconnectDelay`; ioredis 6's own doubles up to 5 s),
 *   so calls succeed again within about 2 s of Redis coming back, or of
 *   Sentinel promoting a new master (./redis-target.ts).
 *
 * The subscriber connection (ended-request notifications) keeps an offline
 * queue and no command timeout: it sends only SUBSCRIBE, at start and again by
 * itself on every reconnect (`autoResubscribe`), and nothing waits on it but
 * the start. Notifications published while it was down are lost; the store
 * tells its `onResync` listeners when it is back, so waiters re-read.
 *
 * On top of the per-command bound, each store method as a whole is raced
 * against the bound (a create may run several commands), and errors are
 * sorted: an outage (connection errors, timeouts, LOADING, BUSY, READONLY,
 * MASTERDOWN, CLUSTERDOWN, TRYAGAIN, OOM …) becomes StoreUnavailableError;
 * anything else (a script bug, an unreadable record) stays what it is, a 500.
 *
 * Also here: the connections' life (their outages logged once, a close
 * that never hangs, no end but that close).
 */
import type { RedisOptions } from "ioredis";
import type { Logger } from "../logger.js";
import { settleBefore } from "../protocol/timing.js";
import { StoreUnavailableError } from "../requests/errors.js";
import { openRedis, type RedisClient, type RedisTargetInput } from "./redis-target.js";

/** How long a new connection to Redis may take to open (ms). */
export const CONNECT_TIMEOUT_MS = 5_000;

/** Longest pause between two reconnect attempts (ms). */
const MAX_RECONNECT_DELAY_MS = 2_000;

/** Milliseconds before reconnect attempt `attempt` (1, 2, …): 50 ms more each time, at most 2 s. */
export function reconnectDelay(attempt: number): number {
  return Math.min(attempt * 50, MAX_RECONNECT_DELAY_MS);
}

/** Options of the connection that runs commands and scripts (see the module header). */
export function commandConnectionOptions(timeoutMs: number): RedisOptions {
  return {
    enableOfflineQueue: false,
    commandTimeout: timeoutMs,
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
    connectTimeout: CONNECT_TIMEOUT_MS,
    retryStrategy: reconnectDelay,
  };
}

/** Overrides for the subscriber made with `duplicate()` from the command connection. */
export const SUBSCRIBER_OVERRIDES: RedisOptions = {
  enableOfflineQueue: true,
  commandTimeout: undefined,
  maxRetriesPerRequest: 20,
  autoResendUnfulfilledCommands: true,
};

/** Redis error replies that mean "not now" rather than "never": the server is loading, busy, read-only, failing over or out of memory. */
const TRANSIENT_REPLY = /^(LOADING|BUSY|READONLY|MASTERDOWN|CLUSTERDOWN|TRYAGAIN|OOM|NOREPLICAS|MISCONF)\b/;

/**
 * What an error from an ioredis call means for the store's caller: an outage
 * (StoreUnavailableError), or itself. Redis's error replies are "ReplyError"s;
 * every other error ioredis gives (connection refused or closed, command
 * timed out, offline) is an outage.
 */
export function toStoreError(operation: string, error: unknown): unknown {
  if (error instanceof StoreUnavailableError) return error;
  const { name, message } = (error ?? {}) as { name?: unknown; message?: unknown };
  const text = typeof message === "string" ? message : String(error);
  if (name === "ReplyError" && !TRANSIENT_REPLY.test(text)) return error;
  return new StoreUnavailableError(`Redis ${operation} failed: ${text}`, { cause: error });
}

/** `task` (an ioredis call), with an outage turned into StoreUnavailableError. */
export function redisCall<T>(operation: string, task: Promise<T>): Promise<T> {
  return task.catch((error: unknown) => {
    throw toStoreError(operation, error);
  });
}

/** Hears of every outage a store call ends with (the relay's metrics count them): never throws or waits. */
export type OutageListener = (error: StoreUnavailableError) => void;

/**
 * `task` (a whole store method), or StoreUnavailableError once `timeoutMs`
 * pass without its answer. Every store method goes through here once, so
 * `onUnavailable` hears of each outage a caller sees, once.
 */
export function bounded<T>(operation: string, timeoutMs: number, task: Promise<T>, onUnavailable?: OutageListener): Promise<T> {
  const settled = settleBefore(task, { ms: timeoutMs }, () => {
    throw new StoreUnavailableError(`Redis did not answer ${operation} within ${timeoutMs} ms`);
  });
  if (!onUnavailable) return settled;
  return settled.catch((error: unknown) => {
    if (error instanceof StoreUnavailableError) onUnavailable(error);
    throw error;
  });
}

/** How long closing a connection waits for Redis to acknowledge QUIT (ms). */
const QUIT_TIMEOUT_MS = 1000;

/**
 * Logs a connection going down once (not every reconnect attempt of a long
 * outage) and its coming back; its own connections only (a caller's client is
 * the caller's to watch).
 */
export function watchConnection(connection: RedisClient, name: string, logger: Logger): void {
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

/** Connections being closed on purpose (shutdown()): the only ones keepConnected lets end. */
const closing = new WeakSet<RedisClient>();

/**
 * Connects again a connection that ioredis ended by itself. ioredis 6 ends a
 * Sentinel connection for good (status "end": every call fails with
 * "Connection is closed.") when its failover detector hears +switch-master
 * while the connection is reconnecting: the detector's disconnect cancels
 * the sentinel lookup in flight, and ioredis takes that for a close of its
 * own. Half of the tests' failovers of a dead master ended so.
 */
export function keepConnected(connection: RedisClient): void {
  let attempts = 0;
  connection.on("ready", () => (attempts = 0));
  connection.on("end", () => {
    if (closing.has(connection)) return;
    attempts += 1;
    setTimeout(() => {
      if (connection.status === "end" && !closing.has(connection)) connection.connect().catch(() => undefined);
    }, reconnectDelay(attempts)).unref();
  });
}

/** Quits gracefully when connected, else (or when QUIT hangs) drops the connection. */
export async function shutdown(connection: RedisClient): Promise<void> {
  closing.add(connection);
  if (connection.status === "ready" && (await within(QUIT_TIMEOUT_MS, connection.quit())) === "OK") return;
  connection.disconnect();
}

/** `task`'s value, or undefined when it fails or takes longer than `ms`. */
export function within<T>(ms: number, task: Promise<T>): Promise<T | undefined> {
  return settleBefore(
    task.catch(() => undefined),
    { ms },
    () => undefined,
  );
}

/** A store's own connection to `target` for commands and scripts (bounded by `timeoutMs`), kept connected and watched as `name`; the store quits it with shutdown(). */
export function openCommandConnection(target: RedisTargetInput, timeoutMs: number, name: string, logger: Logger): RedisClient {
  const redis = openRedis(target, commandConnectionOptions(timeoutMs));
  keepConnected(redis);
  watchConnection(redis, name, logger);
  return redis;
}

/**
 * A store's calls on `redis`, each bounded by `timeoutMs` (StoreUnavailableError
 * after, named `<scope> <operation>`). On a connection of the store's own
 * (`owned`: no offline queue, so commands fail until it is ready) each first
 * waits for it to be ready, within the same bound.
 */
export function boundedCalls(redis: RedisClient, owned: boolean, scope: string, timeoutMs: number) {
  const connected = owned && redis.status !== "ready" ? new Promise<void>((resolve) => redis.once("ready", () => resolve())) : Promise.resolve();
  connected.catch(() => undefined);
  return <T>(operation: string, run: () => Promise<T>): Promise<T> =>
    bounded(
      `${scope} ${operation}`,
      timeoutMs,
      connected.then(() => run()),
    );
}
