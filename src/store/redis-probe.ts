/**
 * The start's look at the store, before the relay opens its connections
 * (src/main.ts): with Sentinel, whether a sentinel knows the master's name;
 * then whether the server (or that master, or a Redis Cluster through its
 * seed nodes) takes the relay's credentials and TLS and answers a PING; a
 * cluster must also say cluster_state:ok, and when the Cluster client gets
 * nowhere, a seed node asked alone says why (the client does not). A
 * definite no (credentials or TLS refused, a name no sentinel knows) stops
 * the start at once, with a line naming the variable (src/config/redis.ts).
 * A store that does not answer yet (starting, failing over) is asked again
 * until `windowMs` pass (the store timeout: a call to a running relay's store
 * is not allowed longer), and then the start stops too: a relay that cannot
 * reach its store cannot check its settings, and its orchestrator starts it
 * again. (A running relay rides out an outage instead: docs/operations.md "When Redis is
 * down".)
 */
import { setTimeout as sleep } from "node:timers/promises";
import type { ClusterRedis, RedisAddress, RedisStartProblem, RedisTarget, SentinelRedis } from "../config/redis.js";
import { settleBefore } from "../protocol/timing.js";
import { DEFAULT_STORE_TIMEOUT_MS } from "../requests/store.js";
import { CONNECT_TIMEOUT_MS } from "./redis-connection.js";
import { openRedis, SENTINEL_TIMEOUT_MS, type RedisClient } from "./redis-target.js";

/** Pause between two looks at a store that did not answer (ms). */
const RETRY_MS = 250;

/** Redis's replies to credentials it does not take, or to an ACL user that may not PING. */
const REFUSED = /^(WRONGPASS|NOAUTH|NOPERM)\b/;
/** Node's codes for a TLS handshake that failed: an unknown CA, a name the certificate does not hold, a plain-text server. */
const TLS_CODE = /CERT|SSL|TLS|EPROTO|VERIFY/;

type Look = { kind: "ok" } | { kind: "problem"; problem: RedisStartProblem } | { kind: "later"; by: "server" | "sentinel"; reason: string };

export interface ProbeOptions {
  /** How long to wait for a store that does not answer (ms): the store timeout (RELAY_STORE_TIMEOUT_MS), as src/main.ts passes it. */
  windowMs?: number;
}

/** Undefined when the store is usable, else why not. */
export async function probeRedis(target: RedisTarget, { windowMs = DEFAULT_STORE_TIMEOUT_MS }: ProbeOptions = {}): Promise<RedisStartProblem | undefined> {
  const end = Date.now() + windowMs;
  for (;;) {
    const left = Math.max(100, end - Date.now());
    const look = target.mode === "sentinel" ? await lookThroughSentinels(target, left) : await ping(target, left);
    if (look.kind === "ok") return undefined;
    if (look.kind === "problem") return look.problem;
    // Given up only once the whole window has passed (the line says so), with a last look at its end.
    if (Date.now() >= end) return { kind: "unreachable", by: look.by, reason: look.reason, seconds: Math.round(windowMs / 100) / 10 };
    await sleep(Math.min(RETRY_MS, end - Date.now()));
  }
}

async function lookThroughSentinels(target: SentinelRedis, leftMs: number): Promise<Look> {
  const answers = await Promise.all(target.sentinels.map((address) => askSentinel(target, address, leftMs)));
  if (answers.some((answer) => answer.known === true)) return ping(target, leftMs);
  const asked = target.sentinels.filter((_, i) => answers[i]!.known === false);
  if (asked.length > 0) return { kind: "problem", problem: { kind: "unknown-master", name: target.name, asked } };
  const failures = answers.map((answer, i) => ({ ...sorted(answer.error), at: `${target.sentinels[i]!.host}:${target.sentinels[i]!.port}` }));
  const definite = failures.find((f): f is typeof f & { kind: "refused" | "tls" } => f.kind !== "later");
  if (definite) return { kind: "problem", problem: { kind: definite.kind, by: "sentinel", reason: definite.reason } };
  return { kind: "later", by: "sentinel", reason: failures.map((f) => `${f.at}: ${f.reason}`).join("; ") };
}

/** Whether one sentinel knows the master (true, false), or the error it gave. */
async function askSentinel(target: SentinelRedis, address: RedisAddress, leftMs: number): Promise<{ known?: boolean; error?: unknown }> {
  const sentinel: RedisTarget = {
    mode: "single",
    address,
    db: 0,
    ...(target.sentinelUsername === undefined ? {} : { username: target.sentinelUsername }),
    ...(target.sentinelPassword === undefined ? {} : { password: target.sentinelPassword }),
    ...(target.tls === undefined ? {} : { tls: target.tls }),
  };
  return withConnection(sentinel, Math.min(SENTINEL_TIMEOUT_MS * 2, leftMs), { enableReadyCheck: false }, async (redis) => {
    const reply = await redis.call("SENTINEL", "GET-MASTER-ADDR-BY-NAME", target.name);
    return { known: Array.isArray(reply) };
  });
}

async function ping(target: RedisTarget, leftMs: number): Promise<Look> {
  // A cluster is checked by its own CLUSTER INFO, not by ioredis's ready check (which waits on, without settling, while the cluster is not ok).
  const result = await withConnection(target, leftMs, target.mode === "cluster" ? { enableReadyCheck: false } : {}, async (redis) => {
    const pong = await redis.ping();
    if (target.mode === "cluster") {
      const state = clusterState(await redis.call("CLUSTER", "INFO"));
      // A cluster that does not serve every slot (a master down, slots unassigned) fails some of the store's scripts.
      if (state !== "ok") throw new Error(`CLUSTER INFO says cluster_state:${state}`);
    }
    return { pong };
  });
  if (!("error" in result)) return { kind: "ok" };
  const first = sorted(result.error);
  // A Cluster client hides why its nodes failed ("Connection is closed."): one seed node, asked alone, tells (TLS, credentials, its cluster_state).
  const { kind, reason } = first.kind === "later" && target.mode === "cluster" ? await askSeed(target, leftMs, first.reason) : first;
  return kind === "later" ? { kind, by: "server", reason } : { kind: "problem", problem: { kind, by: "server", reason } };
}

function clusterState(info: unknown): string {
  return /cluster_state:(\w+)/.exec(String(info))?.[1] ?? "unknown";
}

/** Why the Cluster client got nowhere (`reason`), as the first seed node asked alone says: its refusal, its TLS failure, or its cluster_state. */
async function askSeed(target: ClusterRedis, leftMs: number, reason: string): Promise<{ kind: "refused" | "tls" | "later"; reason: string }> {
  const { mode: _mode, nodes, ...access } = target;
  const address = nodes[0]!;
  const node: RedisTarget = { mode: "single", address, db: 0, ...access };
  const result = await withConnection(node, Math.min(leftMs, SENTINEL_TIMEOUT_MS), {}, async (redis) => ({ info: await redis.call("CLUSTER", "INFO") }));
  if (!("error" in result)) return { kind: "later", reason: `${reason}; ${address.host}:${address.port} says cluster_state:${clusterState(result.info)}` };
  const seed = sorted(result.error);
  return seed.kind === "later" ? { kind: "later", reason } : seed;
}

/** Runs `use` on a connection of its own that never retries, within `ms`; the error when it fails (the last one ioredis reported). */
async function withConnection<T extends object>(
  target: RedisTarget,
  ms: number,
  extra: { enableReadyCheck?: boolean },
  use: (redis: RedisClient) => Promise<T>,
): Promise<T | { error: unknown }> {
  const timeout = Math.min(CONNECT_TIMEOUT_MS, ms);
  const redis = openRedis(target, {
    lazyConnect: true,
    retryStrategy: () => null,
    sentinelRetryStrategy: () => null,
    failoverDetector: false,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    connectTimeout: timeout,
    commandTimeout: timeout,
    // ioredis waits this long (2 s by default) for a closed socket to say so; one refused never does, which held a failed start's exit.
    disconnectTimeout: 100,
    ...extra,
  });
  let reported: unknown;
  redis.on("error", (error: unknown) => (reported = error));
  try {
    // A Cluster client may wait on without settling (a node that serves no slots): the look ends within `timeout` anyway.
    const look = redis.connect().then(() => use(redis));
    return await settleBefore(look, { ms: timeout + 100 }, () => {
      throw new Error(`no answer within ${timeout} ms`);
    });
  } catch (error) {
    return { error: reported ?? error };
  } finally {
    redis.disconnect();
  }
}

/** A failure: refused (credentials, ACL), TLS, or "later" (nothing answered yet). */
function sorted(error: unknown): { kind: "refused" | "tls" | "later"; reason: string } {
  // A Cluster client that reached no node says so; the last node's error says why.
  const { lastNodeError } = (error ?? {}) as { lastNodeError?: unknown };
  if (lastNodeError) return sorted(lastNodeError);
  const { message, code } = (error ?? {}) as { message?: unknown; code?: unknown };
  const reason = typeof message === "string" ? message : String(error);
  if (REFUSED.test(reason)) return { kind: "refused", reason };
  if (typeof code === "string" && TLS_CODE.test(code)) return { kind: "tls", reason };
  return { kind: "later", reason };
}
