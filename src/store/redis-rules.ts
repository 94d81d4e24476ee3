/**
 * RuleStore on Redis, shared by every relay instance on the same Redis and
 * prefix: a rule created on one instance answers requests that arrive on
 * another. Keys (./keys.ts): a HASH per rule and a STRING per scope (token,
 * session, tool → the scope's live rule id), both expiring with the rule
 * (PEXPIRE / SET PX), and a ZSET of rule ids scored by expiry for listing.
 * Every step that must be atomic is one Lua script (./lua: create-rule-4,
 * use-rule-1, revoke-rule-3, set-tally-1); each also checks
 * the rule's own `expiresAt` against the caller's clock, so a rule past its
 * time never applies while Redis still keeps its key.
 *
 * Every hash is parsed with the Rule schema on read (a trust boundary), and
 * every call answers or throws StoreUnavailableError within `timeoutMs`
 * (./redis-connection.ts).
 */
import { Cluster } from "ioredis";
import { z } from "zod";
import { silentLogger, type Logger } from "../logger.js";
import { ruleLives } from "../requests/rule-matching.js";
import { Rule, scopeOf, type CreatedRule, type RuleQuery, type RuleStore } from "../requests/rules.js";
import { DEFAULT_STORE_TIMEOUT_MS } from "../requests/store.js";
import { parseScriptReply, ScriptCode, type ScriptReply } from "./codes.js";
import { CLUSTER_SHARDS, storeKeys } from "./keys.js";
import { boundedCalls, openCommandConnection, redisCall, shutdown } from "./redis-connection.js";
import type { RedisClient, RedisTargetInput } from "./redis-target.js";
import { pairsToHash } from "./redis-record.js";
import { loadScripts, registerScripts, type ScriptArg, type ScriptName } from "./scripts.js";

export interface RedisRuleStoreOptions {
  /** Connection for commands and scripts; the caller owns it (close() leaves it open). Must not set ioredis `keyPrefix`. */
  redis: RedisClient;
  /** Prefix of every key (the request store's REDIS_PREFIX). */
  prefix?: string;
  /** Longest a call may take (ms) before it throws StoreUnavailableError. */
  timeoutMs?: number;
  logger?: Logger;
}

export type ConnectRedisRuleStoreOptions = Omit<RedisRuleStoreOptions, "redis">;

/** A create retries at most this often when the scope changed between its read and its script. */
const SCOPE_RETRIES = 3;

export function createRedisRuleStore(options: RedisRuleStoreOptions): RuleStore {
  return buildRuleStore(options, false);
}

/** A store that owns its connection to `target` (a redis:// or rediss:// URL, Sentinel's master, or a Redis Cluster), with the request store's bounded-call options; close() quits it. */
export function connectRedisRuleStore(target: RedisTargetInput, options: ConnectRedisRuleStoreOptions = {}): RuleStore {
  const redis = openCommandConnection(target, options.timeoutMs ?? DEFAULT_STORE_TIMEOUT_MS, "rules", options.logger ?? silentLogger);
  return buildRuleStore({ ...options, redis }, true);
}

function buildRuleStore({ redis, prefix = "relay", timeoutMs = DEFAULT_STORE_TIMEOUT_MS }: RedisRuleStoreOptions, owned: boolean): RuleStore {
  if (redis.options.keyPrefix) throw new Error("the Redis rule store builds its own keys: use its `prefix` option, not ioredis keyPrefix");
  if (!Number.isSafeInteger(timeoutMs) || timeoutMs <= 0) throw new Error("timeoutMs must be a positive integer");
  // On a cluster, the tagged layout: every rule key shares one slot, so each rule script touches one.
  const keys = storeKeys(prefix, redis instanceof Cluster ? CLUSTER_SHARDS : undefined);
  const scripts = registerScripts(redis, loadScripts());
  const call = boundedCalls(redis, owned, "rules", timeoutMs);
  const script = async (name: ScriptName, scriptKeys: string[], args: ScriptArg[]) =>
    parseScriptReply(name, await redisCall(`script ${name}`, scripts[name](scriptKeys, args)));

  async function read(id: string, now: number): Promise<Rule | undefined> {
    const key = keys.rule(id);
    const hash = await redisCall("HGETALL", redis.hgetall(key));
    if (Object.keys(hash).length === 0) return undefined;
    const rule = decodeRule(key, hash);
    return ruleLives(rule, now) ? rule : undefined;
  }

  /** A script reply `{APPLIED, field, value, …}` as the rule it holds, or undefined for any other code. */
  const ruleOf = (key: string, reply: ScriptReply) =>
    reply.code === ScriptCode.Applied && reply.rest.length > 0 ? decodeRule(key, pairsToHash(reply.rest)) : undefined;

  return {
    create: (rule, now) =>
      call("create", async (): Promise<CreatedRule> => {
        const stored = Rule.parse(rule);
        const key = keys.rule(stored.id);
        const scopeKey = keys.ruleScope(stored);
        const ttl = Math.max(1, stored.expiresAt - now);
        let seen = (await redisCall("GET", redis.get(scopeKey))) ?? "";
        for (let attempt = 0; attempt <= SCOPE_RETRIES; attempt += 1) {
          const reply = await script(
            "createRule",
            [key, scopeKey, keys.rules, seen === "" ? key : keys.rule(seen)],
            [stored.id, seen, ttl, stored.expiresAt, ...encodeRule(stored)],
          );
          if (reply.code === ScriptCode.IdTaken) throw new Error(`a rule with id ${stored.id} already exists`);
          if (reply.code === ScriptCode.Changed) {
            seen = reply.rest[0] ?? "";
            continue;
          }
          const replaced = ruleOf(keys.rule(seen), reply);
          return replaced && ruleLives(replaced, now) ? { rule: stored, replaced } : { rule: stored };
        }
        throw new Error(`the scope of rule ${stored.id} kept changing while it was created`);
      }),

    find: (scope, now) =>
      call("find", async () => {
        const id = await redisCall("GET", redis.get(keys.ruleScope(scopeOf(scope))));
        return id === null ? undefined : read(id, now);
      }),

    get: (id, now) => call("get", () => read(id, now)),

    use: (id, now) => call("use", async () => ruleOf(keys.rule(id), await script("useRule", [keys.rule(id)], [now]))),

    list: ({ now, token, createdBy, limit }: RuleQuery) =>
      call("list", async () => {
        if (limit <= 0) return [];
        await redisCall("ZREMRANGEBYSCORE", redis.zremrangebyscore(keys.rules, "-inf", now));
        const ids = await redisCall("ZRANGEBYSCORE", redis.zrangebyscore(keys.rules, `(${now}`, "+inf"));
        const found = (await Promise.all(ids.map((id) => read(id, now)))).filter((rule): rule is Rule => rule !== undefined);
        return found
          .filter((rule) => (token === undefined || rule.token === token) && (createdBy === undefined || rule.createdBy.id === createdBy))
          .sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? -1 : 1))
          .slice(0, limit);
      }),

    revoke: (id, now) =>
      call("revoke", async () => {
        const rule = await read(id, now);
        if (!rule) return undefined;
        const key = keys.rule(id);
        return ruleOf(key, await script("revokeRule", [key, keys.ruleScope(rule), keys.rules], [id, now]));
      }),

    setTally: (id, ts, now) => call("setTally", async () => ruleOf(keys.rule(id), await script("setTally", [keys.rule(id)], [ts, now]))),

    async close() {
      if (owned) await shutdown(redis);
    },
  };
}

/** The rule as flat field/value pairs for HSET; `createdBy` and `message` as JSON (written and read here only, never in Lua). */
function encodeRule(rule: Rule): string[] {
  const pairs = [
    ["id", rule.id],
    ["token", rule.token],
    ["sessionId", rule.sessionId],
    ["toolName", rule.toolName],
    ["createdBy", JSON.stringify(rule.createdBy)],
    ["createdAt", String(rule.createdAt)],
    ["expiresAt", String(rule.expiresAt)],
    ["uses", String(rule.uses)],
    ["requestId", rule.requestId],
    ...(rule.message ? [["message", JSON.stringify(rule.message)]] : []),
    ...(rule.tallyTs === undefined ? [] : [["tallyTs", rule.tallyTs]]),
  ];
  return pairs.flat();
}

const RuleHash = z.object({
  id: z.string(),
  token: z.string(),
  sessionId: z.string(),
  toolName: z.string(),
  createdBy: z.string(),
  createdAt: z.string(),
  expiresAt: z.string(),
  uses: z.string(),
  requestId: z.string(),
  message: z.string().optional(),
  tallyTs: z.string().optional(),
});

export class UnreadableRuleError extends Error {
  constructor(key: string, reason: string) {
    super(`stored rule ${key} is unreadable: ${reason}`);
    this.name = "UnreadableRuleError";
  }
}

/** Parses a rule's hash (as HGETALL returns it); throws UnreadableRuleError. */
export function decodeRule(key: string, hash: Readonly<Record<string, string>>): Rule {
  try {
    const { createdBy, createdAt, expiresAt, uses, message, tallyTs, ...text } = RuleHash.parse(hash);
    return Rule.parse({
      ...text,
      createdBy: JSON.parse(createdBy),
      createdAt: Number(createdAt),
      expiresAt: Number(expiresAt),
      uses: Number(uses),
      ...(message === undefined ? {} : { message: JSON.parse(message) }),
      ...(tallyTs === undefined ? {} : { tallyTs }),
    });
  } catch (error) {
    throw new UnreadableRuleError(key, error instanceof z.ZodError ? z.prettifyError(error) : String(error));
  }
}
