/**
 * The relay's storage, opened from its Config: the request store, the audit
 * log and the rule store, all on Redis or all in memory. Part of the one
 * composition root (../main.ts); nothing else opens a store.
 */
import type { Config } from "../config/config.js";
import { redisStartLine, redisWhere } from "../config/redis.js";
import type { Logger } from "../logger.js";
import { tokenShareOf, type AuditLog } from "../requests/audit.js";
import type { RuleStore } from "../requests/rules.js";
import type { SignInStore } from "../requests/sign-ins.js";
import { DEFAULT_STORE_TIMEOUT_MS, type RequestStore } from "../requests/store.js";
import { createMemoryAuditLog } from "../store/memory-audit.js";
import { createMemoryRuleStore } from "../store/memory-rules.js";
import { createMemorySignInStore } from "../store/memory-sign-ins.js";
import { createMemoryStore } from "../store/memory-store.js";
import type { OutageListener } from "../store/redis-connection.js";

/** Storage a caller gives in place of what the config would open; each given part is the caller's to close. */
export interface StorageOverrides {
  store?: RequestStore;
  auditLog?: AuditLog;
  ruleStore?: RuleStore;
  /** The console's sign-in links, sessions and started Sign in with Slack. */
  signInStore?: SignInStore;
}

export interface Storage {
  store: RequestStore;
  auditLog: AuditLog;
  ruleStore: RuleStore;
  signInStore: SignInStore;
}

/**
 * The request store, the audit log, the rule store and the console's sign-ins: all on Redis (a
 * connection each, the same settings, their outages counted by
 * `onUnavailable`) when REDIS_URL, REDIS_CLUSTER_NODES or REDIS_SENTINELS is set, else all in
 * memory. Redis is looked at first (../store/redis-probe.ts): credentials or
 * TLS it refuses, a master name no sentinel knows, or a store that does not
 * answer within the store timeout (RELAY_STORE_TIMEOUT_MS) stop the start
 * with one line; the attempt is logged first, so a slow store is never silence. The Redis code (ioredis)
 * is loaded only when asked for: it is a tenth of the start.
 */
export async function openStorage(
  config: Config,
  logger: Logger,
  onUnavailable: OutageListener,
  interruptible: <T>(task: Promise<T>) => Promise<T>,
  given: StorageOverrides = {},
): Promise<Storage> {
  const maxEvents = config.auditMaxEvents;
  const retentionMs = config.auditRetentionMs;
  const tokenShare = tokenShareOf(maxEvents, config.tokens.length);
  const maxSessionsPerPerson = config.consoleSessionsPerPerson;
  const target = config.redis;
  if (given.store && given.auditLog && given.ruleStore && given.signInStore) {
    return { store: given.store, auditLog: given.auditLog, ruleStore: given.ruleStore, signInStore: given.signInStore };
  }
  if (target) {
    const [{ connectRedisStore }, { connectRedisAuditLog }, { connectRedisRuleStore }, { connectRedisSignInStore }, { probeRedis }] = await Promise.all([
      import("../store/redis-store.js"),
      import("../store/redis-audit.js"),
      import("../store/redis-rules.js"),
      import("../store/redis-sign-ins.js"),
      import("../store/redis-probe.js"),
    ]);
    const windowMs = config.storeTimeoutMs ?? DEFAULT_STORE_TIMEOUT_MS;
    logger.info({ redis: redisWhere(target), waitMs: windowMs }, "connecting to Redis");
    const problem = await interruptible(probeRedis(target, { windowMs }));
    if (problem) throw new Error(redisStartLine(target, problem));
    const options = { logger, prefix: config.redisPrefix, onUnavailable, ...(config.storeTimeoutMs === undefined ? {} : { timeoutMs: config.storeTimeoutMs }) };
    return {
      store: given.store ?? connectRedisStore(target, options),
      auditLog: given.auditLog ?? connectRedisAuditLog(target, { ...options, maxEvents, tokenShare, retentionMs }),
      ruleStore: given.ruleStore ?? connectRedisRuleStore(target, options),
      signInStore: given.signInStore ?? connectRedisSignInStore(target, { ...options, maxSessionsPerPerson }),
    };
  }
  if (!given.store) {
    logger.warn(
      "None of REDIS_URL, REDIS_CLUSTER_NODES and REDIS_SENTINELS is set: using the in-memory store. Pending requests and the audit log are lost when the relay restarts, and only one relay instance may run.",
    );
  }
  return {
    store: given.store ?? createMemoryStore(),
    auditLog: given.auditLog ?? createMemoryAuditLog({ maxEvents, tokenShare, retentionMs }),
    ruleStore: given.ruleStore ?? createMemoryRuleStore(),
    signInStore: given.signInStore ?? createMemorySignInStore({ maxSessionsPerPerson }),
  };
}

/** The storage's closers: the parts this relay opened (storage a caller gave is the caller's to close). */
export function storageClosers(storage: Storage, given: StorageOverrides): Array<() => Promise<void>> {
  return [
    ...(given.auditLog ? [] : [() => storage.auditLog.close()]),
    ...(given.ruleStore ? [] : [() => storage.ruleStore.close()]),
    ...(given.signInStore ? [] : [() => storage.signInStore.close()]),
    ...(given.store ? [] : [() => storage.store.close()]),
  ];
}

/** The store's name in the start line. */
export function storeName(config: Config): string {
  return config.redis?.mode === "sentinel" ? "redis sentinel" : config.redis?.mode === "cluster" ? "redis cluster" : config.redis ? "redis" : "memory";
}
