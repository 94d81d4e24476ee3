/**
 * The Redis store's listing (RequestStore.listRequests), newest first,
 * from the recent zset, to which create-8.lua adds every request (trimmed to
 * the newest, so a create costs one ZADD and a rarely non-empty trim); the
 * deadlines zset, which holds every pending request, fills in pending ones
 * the trimmed recent zset no longer reaches. Candidates are screened on two small hash fields (status
 * and meta, never the body) before whole records are read, and entries of
 * the recent zset whose request is gone are removed on the way. With several
 * shards (Redis Cluster) each shard is listed so and the lists merged: the
 * newest `limit` of each shard hold the newest `limit` of all.
 */
import { z } from "zod";
import { RequestRecord } from "../requests/model.js";
import type { ListQuery } from "../requests/store.js";
import type { ShardKeys, StoreKeys } from "./keys.js";
import { compareStrings } from "./leased-queue.js";
import { redisCall } from "./redis-connection.js";
import { Field, UnreadableRecordError } from "./redis-record.js";
import type { RedisClient } from "./redis-target.js";

export interface ListingContext {
  redis: RedisClient;
  keys: StoreKeys;
  read: (id: string) => Promise<RequestRecord | undefined>;
}

/** Ids of the recent zset screened per round trip. */
const PAGE = 200;

const Screened = RequestRecord.pick({ status: true, tokenName: true, createdAt: true });
type Candidate = Pick<RequestRecord, "id" | "status" | "tokenName" | "createdAt">;

/** One shard's keys, with the connection and where a request's hash is. */
interface Shard {
  redis: RedisClient;
  keys: ShardKeys;
  data: (id: string) => string;
}

export async function listRequests({ redis, keys, read }: ListingContext, { status, tokenName, limit }: ListQuery): Promise<RequestRecord[]> {
  if (limit <= 0) return [];
  const wanted = (candidate: Candidate) => tokenName === undefined || candidate.tokenName === tokenName;
  const listShard = async (shard: Shard): Promise<Candidate[]> => {
    if (status === "pending") return pendingNewestFirst(shard, wanted, limit);
    const pending = status === undefined ? await allPending(shard, wanted) : [];
    return [...pending, ...(await recentEnded(shard, (candidate) => (status === undefined || candidate.status === status) && wanted(candidate), limit))];
  };
  const found = (await Promise.all(keys.shards.map((shardKeys) => listShard({ redis, keys: shardKeys, data: keys.data })))).flat();
  found.sort((a, b) => b.createdAt - a.createdAt || compareStrings(b.id, a.id));
  const records = await Promise.all(found.slice(0, limit).map(({ id }) => read(id)));
  // A request may have ended or gone between the screen and the read.
  return records.filter(
    (record): record is RequestRecord =>
      record !== undefined && (status === undefined || record.status === status) && (tokenName === undefined || record.tokenName === tokenName),
  );
}

/** Every pending request `wanted` accepts, screened from the deadlines zset (which holds them all). */
async function allPending(shard: Shard, wanted: (candidate: Candidate) => boolean): Promise<Candidate[]> {
  const { redis, keys } = shard;
  const pending = await screen(shard, await redisCall("ZRANGE", redis.zrange(keys.deadlines, "0", "-1")));
  return pending.filter((candidate): candidate is Candidate => candidate !== undefined && candidate.status === "pending" && wanted(candidate));
}

/**
 * The newest `limit` pending requests `wanted` accepts, walking the recent
 * zset from its newest end: what App Home and the operator's pending list ask
 * for costs about `limit` reads, not one per pending request. Only when the
 * walk runs past the end of the recent zset (which is trimmed) with fewer
 * found than there are pending requests does it screen the deadlines zset too.
 */
async function pendingNewestFirst(shard: Shard, wanted: (candidate: Candidate) => boolean, limit: number): Promise<Candidate[]> {
  const { redis, keys } = shard;
  const walk = await walkRecent(shard, (candidate) => candidate.status === "pending" && wanted(candidate), limit);
  if (walk.found.length >= limit || !walk.exhausted) return walk.found;
  const pendingCount = Number(await redisCall("ZCARD", redis.zcard(keys.deadlines)));
  if (walk.pendingSeen >= pendingCount) return walk.found;
  const seen = new Set(walk.found.map(({ id }) => id));
  return [...walk.found, ...(await allPending(shard, wanted)).filter(({ id }) => !seen.has(id))];
}

/** Up to `limit` ended requests from the recent zset that `matches` accepts, newest first. */
async function recentEnded(shard: Shard, matches: (candidate: Candidate) => boolean, limit: number): Promise<Candidate[]> {
  return (await walkRecent(shard, (candidate) => candidate.status !== "pending" && matches(candidate), limit)).found;
}

/**
 * Walks the recent zset newest first until `limit` candidates `matches`
 * accepts are found or it ends; removes the entries of requests that are
 * gone. `pendingSeen` counts the pending requests passed on the way.
 */
async function walkRecent(
  shard: Shard,
  matches: (candidate: Candidate) => boolean,
  limit: number,
): Promise<{ found: Candidate[]; exhausted: boolean; pendingSeen: number }> {
  const { redis, keys } = shard;
  const found: Candidate[] = [];
  const gone: string[] = [];
  let exhausted = false;
  let pendingSeen = 0;
  for (let offset = 0; found.length < limit; offset += PAGE) {
    const ids = await redisCall("ZREVRANGE", redis.zrevrange(keys.recent, offset, offset + PAGE - 1));
    const screened = await screen(shard, ids);
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
async function screen({ redis, data }: Shard, ids: readonly string[]): Promise<Array<Candidate | undefined>> {
  return Promise.all(
    ids.map(async (id) => {
      const key = data(id);
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
