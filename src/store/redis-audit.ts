/**
 * AuditLog on a Redis Stream (`keys.audit`), shared by every relay instance on
 * the same Redis and prefix. Each event is one entry whose single field
 * `event` holds the entry's JSON; the entry id Redis assigns (`<ms>-<seq>`, by
 * Redis's clock) is the event's id, so `since` and `after` are XRANGE bounds.
 *
 * Events leave the stream by age: each append (one Lua script,
 * lua/append-audit-3.lua) trims it with XTRIM's exact `MINID` at the
 * retention. An event that is no decision is not written at the cap, nor
 * past its token's share (src/requests/audit.ts says why), but counted in the
 * drops hash in the same script; decisions always are written. What a token
 * holds of its share is a list per token of its events' times (the ms of their
 * ids, in order as the stream's), popped from the front at the same retention:
 * about 10 bytes an event (measured), where a sorted set of ids takes about
 * 130. The hash and the lists carry the stream's hash tag (./keys.ts), so the
 * script runs on Redis Cluster too. Drops counted before
 * the shares existed (`<prefix>:audit:drops`) are read as the cap's.
 *
 * Every entry is parsed with the AuditEvent schema on read (a trust boundary).
 * One that fails it (written by a newer relay with an event type this one
 * does not know, or damaged) is left out and logged, not turned into a failed
 * read: one bad entry must not make the audit unreadable until it is trimmed.
 * A read for one request scans the stream in batches (a stream has no index
 * by field); it stays within the bound like every other call.
 *
 * Every call answers or throws StoreUnavailableError within `timeoutMs`, as
 * the request store's (./redis-connection.ts).
 */
import { silentLogger, type Logger } from "../logger.js";
import { z } from "zod";
import {
  AuditEntry,
  addDropCounts,
  AuditEvent,
  DEFAULT_AUDIT_RETENTION_MS,
  isDecision,
  type AuditDropCause,
  type AuditDropCount,
  type AuditDrops,
  type AuditLog,
  type AuditQuery,
} from "../requests/audit.js";
import { DEFAULT_STORE_TIMEOUT_MS } from "../requests/store.js";
import { readStart } from "./audit-ids.js";
import { storeKeys } from "./keys.js";
import { bounded, commandConnectionOptions, keepConnected, redisCall, shutdown, type OutageListener } from "./redis-connection.js";
import { openRedis, type RedisClient, type RedisTargetInput } from "./redis-target.js";
import { loadScripts, registerScripts } from "./scripts.js";

export interface RedisAuditLogOptions {
  /** Connection for commands; the caller owns it (close() leaves it open). Must not set ioredis `keyPrefix`. */
  redis: RedisClient;
  /** Prefix of the stream's key (the store's REDIS_PREFIX). */
  prefix?: string;
  /** Most events kept (RELAY_AUDIT_MAX_EVENTS): past it, only decisions are written. */
  maxEvents: number;
  /** Most events that are no decision one agent token may hold (src/requests/audit.ts tokenShareOf); default `maxEvents`. */
  tokenShare?: number;
  /** How long events are kept, in milliseconds (RELAY_AUDIT_RETENTION; default 90 days). */
  retentionMs?: number;
  /** Unix time in milliseconds, for the retention's cut-off and the drops' times. */
  now?: () => number;
  /** Longest a call may take (ms) before it throws StoreUnavailableError. */
  timeoutMs?: number;
  logger?: Logger;
  /** Hears of every StoreUnavailableError a call throws (the relay's metrics count them). */
  onUnavailable?: OutageListener;
}

export type ConnectRedisAuditLogOptions = Omit<RedisAuditLogOptions, "redis">;

/** The entry's one field. */
const FIELD = "event";
/** Entries one XRANGE of a read for one request asks for. */
const SCAN_BATCH = 500;

type StreamEntry = [id: string, fields: string[]];

export function createRedisAuditLog(options: RedisAuditLogOptions): AuditLog {
  return buildLog(options, false);
}

/** A log that owns its connection to `target` (a redis:// or rediss:// URL, Sentinel's master, or a Redis Cluster), with the store's bounded-call options; close() quits it. */
export function connectRedisAuditLog(target: RedisTargetInput, options: ConnectRedisAuditLogOptions): AuditLog {
  const redis = openRedis(target, commandConnectionOptions(options.timeoutMs ?? DEFAULT_STORE_TIMEOUT_MS));
  keepConnected(redis);
  // Outages are reported by the callers' StoreUnavailableErrors (the trail logs them); this keeps ioredis from printing them too.
  redis.on("error", (error: unknown) => (options.logger ?? silentLogger).debug({ connection: "audit", error }, "redis connection error"));
  return buildLog({ ...options, redis }, true);
}

function buildLog(
  {
    redis,
    prefix = "relay",
    maxEvents,
    tokenShare = maxEvents,
    retentionMs = DEFAULT_AUDIT_RETENTION_MS,
    now = Date.now,
    timeoutMs = DEFAULT_STORE_TIMEOUT_MS,
    logger = silentLogger,
    onUnavailable,
  }: RedisAuditLogOptions,
  owned: boolean,
): AuditLog {
  if (redis.options.keyPrefix) throw new Error("the Redis audit log builds its own keys: use its `prefix` option, not ioredis keyPrefix");
  if (!Number.isSafeInteger(maxEvents) || maxEvents < 1) throw new Error("maxEvents must be a positive integer");
  if (!Number.isSafeInteger(tokenShare) || tokenShare < 1) throw new Error("tokenShare must be a positive integer");
  if (!Number.isSafeInteger(timeoutMs) || timeoutMs <= 0) throw new Error("timeoutMs must be a positive integer");
  if (!Number.isSafeInteger(retentionMs) || retentionMs < 1) throw new Error("retentionMs must be a positive integer");
  const { audit: key, auditDrops, auditShare, auditDropsBefore } = storeKeys(prefix);
  const scripts = registerScripts(redis, loadScripts());
  // With no offline queue (connectRedisAuditLog), commands fail until the connection is ready.
  const connected = owned && redis.status !== "ready" ? new Promise<void>((resolve) => redis.once("ready", () => resolve())) : Promise.resolve();
  connected.catch(() => undefined);

  const range = (start: string, count: number) => redisCall("XRANGE", redis.xrange(key, start, "+", "COUNT", count));

  /** The entries' events, oldest first; an unreadable one is logged and left out. */
  function decode(entries: StreamEntry[]): AuditEvent[] {
    const events: AuditEvent[] = [];
    for (const [id, fields] of entries) {
      const event = parseEntry(id, fields);
      if (event) events.push(event);
      else logger.warn({ key, id }, "an audit stream entry does not parse as an audit event: left out of the read");
    }
    return events;
  }

  async function read(query: AuditQuery): Promise<AuditEvent[]> {
    if (query.limit <= 0) return [];
    const from = readStart(query);
    let start = from === undefined ? "-" : `${from.exclusive ? "(" : ""}${from.id}`;
    const found: AuditEvent[] = [];
    const batch = query.requestId === undefined ? query.limit : Math.max(SCAN_BATCH, query.limit);
    for (;;) {
      const entries = await range(start, batch);
      for (const event of decode(entries)) {
        if (query.requestId === undefined || event.requestId === query.requestId) found.push(event);
        if (found.length === query.limit) return found;
      }
      // Fewer than asked for: the end of the stream. (Unreadable entries count as read.)
      if (entries.length < batch) return found;
      start = `(${entries[entries.length - 1]![0]}`;
    }
  }

  return {
    append: (entry) =>
      bounded(
        "audit append",
        timeoutMs,
        (async () => {
          const parsed = AuditEntry.parse(entry);
          const at = Math.floor(now());
          await connected;
          const token = parsed.token ?? "";
          const share = parsed.token === undefined ? 0 : tokenShare;
          const args = [JSON.stringify(parsed), Math.max(0, at - retentionMs), maxEvents, isDecision(parsed) ? "1" : "0", share, token, at, retentionMs];
          await redisCall("EVALSHA append-audit-3.lua", scripts.appendAudit([key, auditDrops, auditShare(token)], args));
        })(),
        onUnavailable,
      ),

    read: (query) =>
      bounded(
        "audit read",
        timeoutMs,
        (async () => {
          await connected;
          return read(query);
        })(),
        onUnavailable,
      ),

    drops: () =>
      bounded(
        "audit drops",
        timeoutMs,
        (async () => {
          await connected;
          const [hash, before] = await Promise.all([redisCall("HGETALL", redis.hgetall(auditDrops)), redisCall("HGETALL", redis.hgetall(auditDropsBefore))]);
          return dropsOf(hash, before);
        })(),
        onUnavailable,
      ),

    async close() {
      if (owned) await shutdown(redis);
    },
  };
}

/** A count as the drops hash keeps it (strings); an absent one (nothing dropped) does not parse. */
const StoredCount = z.object({
  events: z.coerce.number().int().positive(),
  firstAt: z.coerce.number().int(),
  lastAt: z.coerce.number().int(),
});

/** `hash`'s count under `field` (events → `field("events")`, …), when it has one. */
function countIn(hash: Record<string, string>, field: (name: keyof AuditDropCount) => string): AuditDropCount | undefined {
  const parsed = StoredCount.safeParse({ events: hash[field("events")], firstAt: hash[field("firstAt")], lastAt: hash[field("lastAt")] });
  return parsed.success ? parsed.data : undefined;
}

const SHARE_EVENTS = "token_share:events:";

/** The drops hash (lua/append-audit-3.lua lays it out) as AuditDrops, with `before` (the earlier hash: the cap's only) added to the cap's. */
function dropsOf(hash: Record<string, string>, before: Record<string, string>): AuditDrops | undefined {
  const earlier = countIn(before, (name) => name);
  const causes: AuditDropCause[] = [];
  const capped = addDropCounts(
    countIn(hash, (name) => `cap:${name}`),
    earlier,
  );
  if (capped) causes.push({ reason: "cap", ...capped });
  const tokens = Object.keys(hash)
    .filter((field) => field.startsWith(SHARE_EVENTS))
    .map((field) => field.slice(SHARE_EVENTS.length))
    .sort();
  for (const token of tokens) {
    const count = countIn(hash, (name) => `token_share:${name}:${token}`);
    if (count) causes.push({ reason: "token_share", token, ...count });
  }
  const total = addDropCounts(
    countIn(hash, (name) => name),
    earlier,
  );
  return total && { ...total, causes };
}

/** The event a stream entry holds, or undefined when it is not one. */
function parseEntry(id: string, fields: string[]): AuditEvent | undefined {
  const index = fields.indexOf(FIELD);
  const text = index >= 0 && index % 2 === 0 ? fields[index + 1] : undefined;
  if (text === undefined) return undefined;
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof json !== "object" || json === null || Array.isArray(json)) return undefined;
  const parsed = AuditEvent.safeParse({ ...json, id });
  return parsed.success ? parsed.data : undefined;
}
