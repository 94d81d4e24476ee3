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
 * starts fills neither. A person's answering sessions are bounded too
 * (`maxSessionsPerPerson`, a ZSET per person, `…:session:of:<SHA-256 of
 * their id>`: lua/put-session-4.lua ends their oldest), so that one Slack
 * account cannot fill the sessions' bound for everyone. Keeping an entry
 * (lua/put-sign-in-2.lua: count and write) and using it up or removing it
 * (lua/take-sign-in-3.lua: read and delete, out of every index; a
 * session's person is read from it first) are one Lua script each, so a
 * link opens one session however many instances it is posted to at once,
 * and instances that put at once never pass the bound together. On Redis Cluster a kind's keys share a hash tag,
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
import {
  boundedByPerson,
  MAX_SESSIONS_PER_PERSON,
  MAX_SIGN_INS_PER_KIND,
  parseSignInEntry,
  signInLives,
  type SignInEntry,
  type SignInKind,
  type SignInStore,
} from "../requests/sign-ins.js";
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
  /** Most live sessions of one person, over every instance; default MAX_SESSIONS_PER_PERSON. */
  maxSessionsPerPerson?: number;
}

/** The person id a kept session names, or undefined (none kept, or unreadable: it is removed all the same). */
function sessionPerson(json: string | null): string | undefined {
  if (json === null) return undefined;
  try {
    return parseSignInEntry("session", JSON.parse(json)).person.id;
  } catch {
    return undefined;
  }
}

/** A session's put calls again at most this often when the person's first session changed between its calls. */
const PERSON_RETRIES = 4;

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
  {
    redis,
    prefix = "relay",
    timeoutMs = DEFAULT_STORE_TIMEOUT_MS,
    maxPerKind = MAX_SIGN_INS_PER_KIND,
    maxSessionsPerPerson = MAX_SESSIONS_PER_PERSON,
  }: RedisSignInStoreOptions,
  owned: boolean,
): SignInStore {
  if (redis.options.keyPrefix) throw new Error("the Redis sign-in store builds its own keys: use its `prefix` option, not ioredis keyPrefix");
  if (!Number.isSafeInteger(timeoutMs) || timeoutMs <= 0) throw new Error("timeoutMs must be a positive integer");
  for (const [name, bound] of Object.entries({ maxPerKind, maxSessionsPerPerson })) {
    if (!Number.isSafeInteger(bound) || bound <= 0) throw new Error(`${name} must be a positive integer`);
  }
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

  /** Removes the entry with its place in the indexes; its JSON as it was kept, or undefined. */
  async function takeRaw(kind: SignInKind, digest: string): Promise<string | undefined> {
    const { entry, live, ofPerson } = keys.signIns(kind);
    // A session's person (whose index holds it too) is in the session: read it first.
    const personId = kind === "session" ? sessionPerson(await redisCall("GET", redis.get(entry(digest)))) : undefined;
    const raw = await redisCall("script takeSignIn", scripts.takeSignIn([entry(digest), live, personId === undefined ? live : ofPerson(personId)], [digest]));
    const { code, rest } = parseScriptReply("takeSignIn", raw);
    if (code === ScriptCode.NotFound) return undefined;
    if (code !== ScriptCode.Applied || rest.length !== 1) throw new ScriptReplyError("takeSignIn", raw);
    return rest[0];
  }

  async function take<K extends SignInKind>(kind: K, digest: string, now: number): Promise<SignInEntry<K> | undefined> {
    return decode(kind, keys.signIns(kind).entry(digest), await takeRaw(kind, digest), now);
  }

  /** Whether a put script kept its entry (APPLIED) or found the kind full (TOO_MANY); throws for any other reply. */
  function kept(script: string, raw: unknown): boolean {
    const { code } = parseScriptReply(script, raw);
    if (code !== ScriptCode.Applied && code !== ScriptCode.TooMany) throw new ScriptReplyError(script, raw);
    return code === ScriptCode.Applied;
  }

  /** A session, ending the person's first when they are at their bound (named to the script, again when another ended first meanwhile). */
  async function putSession(digest: string, json: string, session: SignInEntry<"session">, now: number): Promise<boolean> {
    const { entry, live, ofPerson } = keys.signIns("session");
    let first = "";
    for (let attempt = 0; attempt < PERSON_RETRIES; attempt += 1) {
      const sessionKeys = [entry(digest), live, ofPerson(session.person.id), entry(first || digest)];
      const raw = await redisCall(
        "script putSession",
        scripts.putSession(sessionKeys, [digest, json, session.expiresAt, now, maxPerKind, maxSessionsPerPerson, first]),
      );
      const { code, rest } = parseScriptReply("putSession", raw);
      if (code !== ScriptCode.Changed) return kept("putSession", raw);
      if (rest.length !== 1) throw new ScriptReplyError("putSession", raw);
      first = rest[0]!;
    }
    throw new Error(`a person's sessions changed under ${PERSON_RETRIES} puts in a row`);
  }

  return {
    put: (kind, digest, entry, now) =>
      call("put", async () => {
        const parsed: SignInEntry<SignInKind> = parseSignInEntry(kind, entry);
        const json = JSON.stringify(parsed);
        if (boundedByPerson(kind, parsed)) return putSession(digest, json, parsed, now);
        const { entry: key, live } = keys.signIns(kind);
        return kept("putSignIn", await redisCall("script putSignIn", scripts.putSignIn([key(digest), live], [digest, json, entry.expiresAt, now, maxPerKind])));
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
