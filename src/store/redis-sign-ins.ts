/**
 * SignInStore on Redis, shared by every relay instance on the same Redis and
 * prefix: a sign-in link printed by one instance opens a session on another,
 * that session is known to all of them, and a sign-out on one ends it on
 * all. Each entry is one STRING (./keys.ts `signIns`: `<prefix>:console:<kind>:
 * <SHA-256 of its secret>`) holding the entry's JSON, set with a PX TTL to
 * its end, so Redis drops what nobody uses; a ZSET per kind
 * (`<prefix>:console:<kind>:live`) holds every entry's digest scored by its
 * end, and bounds the kind's live entries over every instance, as the
 * memory store bounds its own (`maxPerKind`): a flood of Sign in with Slack
 * starts fills neither. Keeping an entry (lua/put-sign-in-2.lua: count and
 * write) and using it up or removing it (lua/take-sign-in-2.lua: read and
 * delete) are one Lua script each, so a link opens one session however many
 * instances it is posted to at once, and instances that put at once never
 * pass the bound together. On Redis Cluster a kind's keys share a hash tag,
 * so each script touches one slot (and all of a kind sit on one master).
 *
 * Every entry is parsed with its schema on read (a trust boundary), and
 * judged alive by the caller's clock as well as by its TTL; every call
 * answers or throws StoreUnavailableError within `timeoutMs`
 * (./redis-connection.ts).
 */
import { Cluster } from "ioredis";
import { z } from "zod";
import { silentLogger, type Logger } from "../logger.js";
import { MAX_SIGN_INS_PER_KIND, parseSignInEntry, signInLives, type SignInEntry, type SignInKind, type SignInStore } from "../requests/sign-ins.js";
import { DEFAULT_STORE_TIMEOUT_MS } from "../requests/store.js";
import { parseScriptReply, ScriptCode, ScriptReplyError } from "./codes.js";
import { CLUSTER_SHARDS, storeKeys } from "./keys.js";
import { boundedCalls, openCommandConnection, redisCall, shutdown } from "./redis-connection.js";
import type { RedisClient, RedisTargetInput } from "./redis-target.js";
import { loadScripts, registerScripts } from "./scripts.js";

export interface RedisSignInStoreOptions {
  /** Connection for commands and scripts; the caller owns it (close() leaves it open). Must not set ioredis `keyPrefix`. */
  redis: RedisClient;
  /** Prefix of every key (the request store's REDIS_PREFIX). */
  prefix?: string;
  /** Longest a call may take (ms) before it throws StoreUnavailableError. */
  timeoutMs?: number;
  /** Most live entries of one kind, over every instance on this Redis and prefix; default MAX_SIGN_INS_PER_KIND. */
  maxPerKind?: number;
}

export type ConnectRedisSignInStoreOptions = Omit<RedisSignInStoreOptions, "redis"> & { logger?: Logger };

export function createRedisSignInStore(options: RedisSignInStoreOptions): SignInStore {
  return buildSignInStore(options, false);
}

/** A store that owns its connection to `target` (a redis:// or rediss:// URL, Sentinel's master, or a Redis Cluster), with the request store's bounded-call options; close() quits it. */
export function connectRedisSignInStore(target: RedisTargetInput, options: ConnectRedisSignInStoreOptions = {}): SignInStore {
  const redis = openCommandConnection(target, options.timeoutMs ?? DEFAULT_STORE_TIMEOUT_MS, "sign-ins", options.logger ?? silentLogger);
  return buildSignInStore({ ...options, redis }, true);
}

export class UnreadableSignInError extends Error {
  constructor(key: string, reason: string) {
    super(`stored console sign-in ${key} is unreadable: ${reason}`);
    this.name = "UnreadableSignInError";
  }
}

function buildSignInStore(
  { redis, prefix = "relay", timeoutMs = DEFAULT_STORE_TIMEOUT_MS, maxPerKind = MAX_SIGN_INS_PER_KIND }: RedisSignInStoreOptions,
  owned: boolean,
): SignInStore {
  if (redis.options.keyPrefix) throw new Error("the Redis sign-in store builds its own keys: use its `prefix` option, not ioredis keyPrefix");
  if (!Number.isSafeInteger(timeoutMs) || timeoutMs <= 0) throw new Error("timeoutMs must be a positive integer");
  if (!Number.isSafeInteger(maxPerKind) || maxPerKind <= 0) throw new Error("maxPerKind must be a positive integer");
  const keys = storeKeys(prefix, redis instanceof Cluster ? CLUSTER_SHARDS : undefined);
  const scripts = registerScripts(redis, loadScripts());
  const call = boundedCalls(redis, owned, "sign-ins", timeoutMs);

  /** The kept JSON as the live entry at `now`, or undefined. */
  function decode<K extends SignInKind>(kind: K, key: string, json: string | null | undefined, now: number): SignInEntry<K> | undefined {
    if (json === null || json === undefined) return undefined;
    let entry: SignInEntry<K>;
    try {
      entry = parseSignInEntry(kind, JSON.parse(json));
    } catch (error) {
      throw new UnreadableSignInError(key, error instanceof z.ZodError ? z.prettifyError(error) : String(error));
    }
    return signInLives(entry, now) ? entry : undefined;
  }

  /** Removes the entry with its place in the index; its JSON as it was kept, or undefined. */
  async function takeRaw(kind: SignInKind, digest: string): Promise<string | undefined> {
    const { entry, live } = keys.signIns(kind);
    const raw = await redisCall("script takeSignIn", scripts.takeSignIn([entry(digest), live], [digest]));
    const { code, rest } = parseScriptReply("takeSignIn", raw);
    if (code === ScriptCode.NotFound) return undefined;
    if (code !== ScriptCode.Applied || rest.length !== 1) throw new ScriptReplyError("takeSignIn", raw);
    return rest[0];
  }

  async function take<K extends SignInKind>(kind: K, digest: string, now: number): Promise<SignInEntry<K> | undefined> {
    return decode(kind, keys.signIns(kind).entry(digest), await takeRaw(kind, digest), now);
  }

  return {
    put: (kind, digest, entry, now) =>
      call("put", async () => {
        const json = JSON.stringify(parseSignInEntry(kind, entry));
        const { entry: key, live } = keys.signIns(kind);
        const raw = await redisCall("script putSignIn", scripts.putSignIn([key(digest), live], [digest, json, entry.expiresAt, now, maxPerKind]));
        const { code } = parseScriptReply("putSignIn", raw);
        if (code !== ScriptCode.Applied && code !== ScriptCode.TooMany) throw new ScriptReplyError("putSignIn", raw);
        return code === ScriptCode.Applied;
      }),

    get: (kind, digest, now) =>
      call("get", async () => {
        const key = keys.signIns(kind).entry(digest);
        return decode(kind, key, await redisCall("GET", redis.get(key)), now);
      }),

    take: (kind, digest, now) => call("take", async () => take(kind, digest, now)),

    remove: (kind, digest) =>
      call("remove", async () => {
        await takeRaw(kind, digest);
      }),

    async close() {
      if (owned) await shutdown(redis);
    },
  };
}
