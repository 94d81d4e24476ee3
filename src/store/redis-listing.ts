/**
 * The Redis store's listing (RequestStore.listRequests), newest first,
 * from the recent zset, to which create-6.lua adds every request (trimmed to
 * the newest, so a create costs one ZADD and a rarely non-empty trim); the
 * deadlines zset, which holds every pending request, fills in pending ones
 * the trimmed recent zset no longer reaches. Candidates are screened on two small hash fields (status
 * and meta, never the body) before whole records are read, and entries of
 * the recent zset whose request is gone are removed on the way.
 */
import type { Redis } from "ioredis";
import { z } from "zod";
import { RequestRecord } from "../requests/model.js";
import type { ListQuery } from "../requests/store.js";
import type { StoreKeys } from "./keys.js";
import { compareStrings } from "./leased-queue.js";
import { redisCall } from "./redis-connection.js";
import { Field, UnreadableRecordError } from "./redis-record.js";

export interface ListingContext {
  redis: Redis;
  keys: StoreKeys;
  read: (id: string) => Promise<RequestRecord | undefined>;
}

/** Ids of the recent zset screened per round trip. */
const PAGE = 200;

const Screened = RequestRecord.pick({ status: true, tokenName: true, createdAt: true });
type Candidate = Pick<RequestRecord, "id" | "status" | "tokenName" | "createdAt">;

export async function listRequests({ redis, keys, read }: ListingContext, { status, tokenName, limit }: ListQuery): Promise<RequestRecord[]> {
  if (limit <= 0) return [];
  const wanted = (candidate: Candidate) => tokenName === undefined || candidate.tokenName === tokenName;
  const found: Candidate[] = [];
  if (status === "pending") {
    found.push(...(await pendingNewestFirst(redis, keys, wanted, limit)));
  } else {
    if (status === undefined) found.push(...(await allPending(redis, keys, wanted)));
    found.push(...(await recentEnded(redis, keys, (candidate) => (status === undefined || candidate.status === status) && wanted(candidate), limit)));
  }
  found.sort((a, b) => b.createdAt - a.createdAt || compareStrings(b.id, a.id));
  const records = await Promise.all(found.slice(0, limit).map(({ id }) => read(id)));
  // A request may have ended or gone between the screen and the read.
  return records.filter(
    (record): record is RequestRecord =>
      record !== undefined && (status === undefined || record.status === status) && (tokenName === undefined || record.tokenName === tokenName),
  );
}

/** Every pending request `wanted` accepts, screened from the deadlines zset (which holds them all). */
async function allPending(redis: Redis, keys: StoreKeys, wanted: (candidate: Candidate) => boolean): Promise<Candidate[]> {
  const pending = await screen(redis, keys, await redisCall("ZRANGE", redis.zrange(keys.deadlines, "0", "-1")));
  return pending.filter((candidate): candidate is Candidate => candidate !== undefined && candidate.status === "pending" && wanted(candidate));
}

/**
 * The newest `limit` pending requests `wanted` accepts, walking the recent
 * zset from its newest end: what App Home and the operator's pending list ask
 * for costs about `limit` reads, not one per pending request. Only when the
 * walk runs past the end of the recent zset (which is trimmed) with fewer
 * found than there are pending requests does it screen the deadlines zset too.
 */
async function pendingNewestFirst(redis: Redis, keys: StoreKeys, wanted: (candidate: Candidate) => boolean, limit: number): Promise<Candidate[]> {
  const walk = await walkRecent(redis, keys, (candidate) => candidate.status === "pending" && wanted(candidate), limit);
  if (walk.found.length >= limit || !walk.exhausted) return walk.found;
  const pendingCount = Number(await redisCall("ZCARD", redis.zcard(keys.deadlines)));
  if (walk.pendingSeen >= pendingCount) return walk.found;
  const seen = new Set(walk.found.map(({ id }) => id));
  return [...walk.found, ...(await allPending(redis, keys, wanted)).filter(({ id }) => !seen.has(id))];
}

/** Up to `limit` ended requests from the recent zset that `matches` accepts, newest first. */
async function recentEnded(redis: Redis, keys: StoreKeys, matches: (candidate: Candidate) => boolean, limit: number): Promise<Candidate[]> {
  return (await walkRecent(redis, keys, (candidate) => candidate.status !== "pending" && matches(candidate), limit)).found;
}

/**
 * Walks the recent zset newest first until `limit` candidates `matches`
 * accepts are found or it ends; removes the entries of requests that are
 * gone. `pendingSeen` counts the pending requests passed on the way.
 */
async function walkRecent(
  redis: Redis,
  keys: StoreKeys,
  matches: (candidate: Candidate) => boolean,
  limit: number,
): Promise<{ found: Candidate[]; exhausted: boolean; pendingSeen: number }> {
  const found: Candidate[] = [];
  const gone: string[] = [];
  let exhausted = false;
  let pendingSeen = 0;
  for (let offset = 0; found.length < limit; offset += PAGE) {
    const ids = await redisCall("ZREVRANGE", redis.zrevrange(keys.recent, offset, offset + PAGE - 1));
    const screened = await screen(redis, keys, ids);
    for (const [i, candidate] of screened.entries()) {
      if (candidate === undefined) gone.push(ids[i]!);
      else {
        if (candidate.status === "pending") pendingSeen += 1;
        if (matches(candidate) && found.length < limit) found.push(candidate);
      }
    }
    if (ids.length < PAGE) {
      exhausted = true;
      break;
    }
  }
  if (gone.length > 0) await redisCall("ZREM", redis.zrem(keys.recent, ...gone));
  return { found, exhausted, pendingSeen };
}

/** Each id's status, token name and creation time (undefined for a request that is gone), read without its body. */
async function screen(redis: Redis, keys: StoreKeys, ids: readonly string[]): Promise<Array<Candidate | undefined>> {
  return Promise.all(
    ids.map(async (id) => {
      const key = keys.data(id);
      const [status, meta] = await redisCall("HMGET", redis.hmget(key, Field.status, Field.meta));
      if (status === null || status === undefined) return undefined;
      const parsed = Screened.safeParse({ ...parseObject(meta), status });
      if (!parsed.success) throw new UnreadableRecordError(key, z.prettifyError(parsed.error));
      return { id, ...parsed.data };
    }),
  );
}

/** The JSON object in `text`; an empty object for anything else (the schema then names what is missing). */
function parseObject(text: string | null | undefined): object {
  try {
    const value: unknown = JSON.parse(text ?? "");
    return typeof value === "object" && value !== null ? value : {};
  } catch {
    return {};
  }
}
