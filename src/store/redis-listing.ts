/**
 * The Redis store's listing (RequestStore.listRequests), newest first.
 * Pending requests come from the deadlines zset, which holds every one of
 * them; ended ones from the recent zset, to which create-6.lua adds every
 * request (trimmed to the newest, so a create costs one ZADD and a rarely
 * non-empty trim). Candidates are screened on two small hash fields (status
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
  if (status === undefined || status === "pending") {
    const pending = await screen(redis, keys, await redisCall("ZRANGE", redis.zrange(keys.deadlines, "0", "-1")));
    found.push(...pending.filter((candidate): candidate is Candidate => candidate !== undefined && candidate.status === "pending" && wanted(candidate)));
  }
  if (status !== "pending")
    found.push(...(await recentEnded(redis, keys, (candidate) => (status === undefined || candidate.status === status) && wanted(candidate), limit)));
  found.sort((a, b) => b.createdAt - a.createdAt || compareStrings(b.id, a.id));
  const records = await Promise.all(found.slice(0, limit).map(({ id }) => read(id)));
  // A request may have ended or gone between the screen and the read.
  return records.filter(
    (record): record is RequestRecord =>
      record !== undefined && (status === undefined || record.status === status) && (tokenName === undefined || record.tokenName === tokenName),
  );
}

/** Up to `limit` ended requests from the recent zset that `matches` accepts, newest first; removes the entries of requests that are gone. */
async function recentEnded(redis: Redis, keys: StoreKeys, matches: (candidate: Candidate) => boolean, limit: number): Promise<Candidate[]> {
  const found: Candidate[] = [];
  const gone: string[] = [];
  for (let offset = 0; found.length < limit; offset += PAGE) {
    const ids = await redisCall("ZREVRANGE", redis.zrevrange(keys.recent, offset, offset + PAGE - 1));
    const screened = await screen(redis, keys, ids);
    for (const [i, candidate] of screened.entries()) {
      if (candidate === undefined) gone.push(ids[i]!);
      else if (candidate.status !== "pending" && matches(candidate) && found.length < limit) found.push(candidate);
    }
    if (ids.length < PAGE) break;
  }
  if (gone.length > 0) await redisCall("ZREM", redis.zrem(keys.recent, ...gone));
  return found;
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
