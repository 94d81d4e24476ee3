/**
 * What the Redis store does across its shards (./keys.ts): the ids a create
 * with an idempotency key takes, the lookup by Slack message, the expiry
 * sweep and the counts, and the merge the leased queues' claims use
 * (redis-queues.ts). With one shard (one server, Sentinel) each is the one
 * command it always was; with several (Redis Cluster) each asks every shard
 * at once and merges, earliest due first as one zset would list them.
 */
import { randomUUID } from "node:crypto";
import type { RequestStore } from "../requests/store.js";
import type { ShardKeys, StoreKeys } from "./keys.js";
import { compareStrings } from "./leased-queue.js";
import { redisCall } from "./redis-connection.js";
import type { RedisClient } from "./redis-target.js";

export interface ShardsContext {
  redis: RedisClient;
  keys: StoreKeys;
  /** One store method: bounded, its outages turned into StoreUnavailableError. */
  call: <T>(operation: string, run: () => Promise<T>) => Promise<T>;
}

/** Most look-and-claim rounds of one claim over several shards. */
const MAX_CLAIM_ROUNDS = 8;

/** One due member of a shard's zset. */
interface Due {
  /** Index of the shard. */
  shard: number;
  member: string;
  /** Unix ms. */
  dueAt: number;
}

/** Up to `limit` members due at `at` in each shard's zset `zsetOf`, earliest first (then by member) over all of them. */
async function earliestDue({ redis, keys }: ShardsContext, zsetOf: (shard: ShardKeys) => string, at: number, limit: number): Promise<Due[]> {
  const looks = await Promise.all(
    keys.shards.map((shard) => redisCall("ZRANGEBYSCORE", redis.zrangebyscore(zsetOf(shard), "-inf", at, "WITHSCORES", "LIMIT", 0, limit))),
  );
  const due = looks.flatMap((flat, shard) =>
    Array.from({ length: flat.length / 2 }, (_, i) => ({ shard, member: flat[2 * i]!, dueAt: Number(flat[2 * i + 1]) })),
  );
  due.sort((a, b) => a.dueAt - b.dueAt || compareStrings(a.member, b.member));
  return due.slice(0, limit);
}

/**
 * Up to `limit` entries due at `at` over every shard, earliest first, each
 * leased by `claimOn` (a shard's claim script, which takes that shard's
 * earliest `count`): a look at every shard picks how many to claim where.
 * When other instances' claims took some of what it saw, it looks again for
 * the rest, until nothing is due (each round, some claim took what it saw).
 */
export async function claimAcross<T>(
  context: ShardsContext,
  zsetOf: (shard: ShardKeys) => string,
  at: number,
  limit: number,
  claimOn: (shard: ShardKeys, count: number) => Promise<T[]>,
  memberOf: (entry: T) => string,
): Promise<T[]> {
  const { shards } = context.keys;
  if (limit <= 0) return [];
  if (shards.length === 1) return claimOn(shards[0]!, limit);
  const claimed: T[] = [];
  for (let round = 0; round < MAX_CLAIM_ROUNDS && claimed.length < limit; round += 1) {
    const picked = await earliestDue(context, zsetOf, at, limit - claimed.length);
    if (picked.length === 0) break;
    const counts = new Map<number, number>();
    for (const { shard } of picked) counts.set(shard, (counts.get(shard) ?? 0) + 1);
    const got = (await Promise.all([...counts].map(([shard, count]) => claimOn(shards[shard]!, count)))).flat();
    const rank = new Map(picked.map(({ member }, i) => [member, i]));
    const rankOf = (entry: T) => rank.get(memberOf(entry)) ?? picked.length;
    claimed.push(...got.sort((a, b) => rankOf(a) - rankOf(b)));
  }
  return claimed;
}

export function shardMethods(context: ShardsContext): Pick<RequestStore, "newId" | "findBySlackMessage" | "dueForExpiry" | "counts"> {
  const { redis, keys, call } = context;
  const everyShard = <T>(task: (shard: ShardKeys) => Promise<T>) => Promise.all(keys.shards.map(task));
  return {
    // One in `shards.length` UUIDs is of the token's shard: a few draws.
    newId(tokenName) {
      if (tokenName === undefined || keys.shards.length === 1) return randomUUID();
      const wanted = keys.shardOfToken(tokenName);
      for (;;) {
        const id = randomUUID();
        if (keys.shardOf(id) === wanted) return id;
      }
    },

    // A message's index key sits on its request's shard, which the message does not tell: every shard is asked.
    findBySlackMessage: (slack) =>
      call("findBySlackMessage", async () => {
        const ids = await everyShard((shard) => redisCall("GET", redis.get(shard.message(slack))));
        return ids.find((id) => id !== null) ?? undefined;
      }),

    dueForExpiry: (at, limit) =>
      call("dueForExpiry", async () => (limit <= 0 ? [] : (await earliestDue(context, (shard) => shard.deadlines, at, limit)).map(({ member }) => member))),

    counts: () =>
      call("counts", async () => {
        const sizes = await everyShard((shard) =>
          Promise.all([redisCall("ZCARD", redis.zcard(shard.deadlines)), redisCall("ZCARD", redis.zcard(shard.queues.callbacks.due))]),
        );
        return { pending: sizes.reduce((sum, [pending]) => sum + pending, 0), callbacks: sizes.reduce((sum, [, callbacks]) => sum + callbacks, 0) };
      }),
  };
}
