/**
 * Every Redis key (and the pub/sub channel) the Redis store uses, built in
 * this one place. Lua scripts get key names through KEYS, never assemble them.
 *
 * Redis Cluster runs a script only when all its keys share a slot, so the
 * keys are laid out in shards: a shard's keys (its deadlines, posting set,
 * leased queues and their attempts hashes, recent index, idempotency and
 * message-index keys, and the hashes of the requests placed on it) all carry
 * one hash tag, and every script touches one shard's keys only. A request's
 * shard follows from its id (`shardOf`); a create picks an id of its agent
 * token's shard (`shardOfToken`), so every create of one token meets its
 * idempotency keys, pending count and same-ask keys on one shard. The rule keys share a tag of their own, and
 * the audit keys share the slot of the stream's name (`<prefix>:audit`, kept untagged so an upgrade finds
 * its events: the others carry the tag `{<prefix>:audit}`, which hashes as that name does); each kind of
 * console sign-in has a tag of its own (its entries and the index that counts them). A remembered
 * cancelled call is one key of its own, never in a script (`<prefix>:cancelled-call:<sha256>` in both layouts).
 *
 * Two layouts: the one-shard layout (one Redis server, or Sentinel's master)
 * keeps the key names the relay has always used (`<prefix>:deadlines`,
 * `<prefix>:{<id>}:data`, …), so an upgrade finds its requests; the tagged
 * layout (Redis Cluster, CLUSTER_SHARDS shards) names shard k's keys
 * `<prefix>:{<prefix>:<k>}:…`, the rules' `<prefix>:{<prefix>:rules}:…` and a
 * sign-in kind's `<prefix>:{<prefix>:console:<kind>}:…` (`<prefix>:console:<kind>:…`
 * in the one-shard layout, as before).
 * (The scripts' headers name their keys in the one-shard layout.)
 */
import { createHash } from "node:crypto";
import type { SlackRef } from "../protocol/request-view.js";
import type { RuleScope } from "../requests/rules.js";
import type { SignInKind } from "../requests/sign-ins.js";
import { QUEUE_NAMES, type QueueName } from "../requests/store.js";

/** Shards of the tagged layout (Redis Cluster): enough to spread over a few masters, few enough that a sweep of every shard stays cheap. */
export const CLUSTER_SHARDS = 16;

/** The keys of one shard. */
export interface ShardKeys {
  /** ZSET of pending request ids, scored by expiresAt (Unix ms). */
  readonly deadlines: string;
  /** STRING: a scoped idempotency key ("<token name>:<key>") → request id. */
  idempotency(scopedKey: string): string;
  /** STRING: a Slack message (channel + ts) → request id. */
  message(slack: SlackRef): string;
  /**
   * Each leased queue's keys (requests/store.ts QueueName), named after the
   * queue: a ZSET `<queue>` of entries scored by when each is due (Unix ms;
   * for `posting`, the end of the poster's lease) and a HASH
   * `<queue in the singular>-attempts` of the attempts made at each entry
   * (none stored for 0).
   */
  readonly queues: Readonly<Record<QueueName, QueueKeys>>;
  /** ZSET of recently created request ids, scored by createdAt (Unix ms), trimmed to the newest; the listing walks it. */
  readonly recent: string;
  /** ZSET of an agent token's requests that were pending when last counted (id → expiresAt), on the token's shard. */
  pendingOf(tokenName: string): string;
  /** STRING: what a request asks (CreateOptions.sameAs) → the id of the pending request that asks it, on its token's shard. */
  sameAs(key: string): string;
}

/** The keys of one leased queue on one shard. */
export interface QueueKeys {
  /** ZSET: entry → when it is due (Unix ms). */
  readonly due: string;
  /** HASH: entry → attempts made so far. */
  readonly attempts: string;
}

export interface StoreKeys {
  /** Every shard, in order (one in the one-shard layout). */
  readonly shards: readonly ShardKeys[];
  /** Index (in `shards`) of the shard a request's id places it on. */
  shardOf(id: string): number;
  /** Index of the shard an agent token's requests go on (with its idempotency keys, pending count and same-ask keys): its creates take ids of that shard. */
  shardOfToken(tokenName: string): number;
  /** HASH of one request's fields (see redis-record.ts), on the request's shard. */
  data(id: string): string;
  /** Pub/sub channel that carries the id of every request that ends. */
  readonly ended: string;
  /** Pub/sub channel that carries the id of a request that changed without ending (created, an approval, more time, posted). */
  readonly changed: string;
  /** Pub/sub channel that carries the key of an agent's held call that was cancelled (RequestStore.announceCancelledCall). */
  readonly cancelledCalls: string;
  /** STRING: a cancelled call remembered (RequestStore.announceCancelledCall with rememberMs), under the SHA-256 of its key, expiring when it is forgotten. */
  cancelledCall(key: string): string;
  /** STREAM of audit events (src/requests/audit.ts), trimmed by age. */
  readonly audit: string;
  /** HASH of the audit events the cap and the tokens' shares kept out (redis-audit.ts), on the stream's slot. */
  readonly auditDrops: string;
  /** LIST of the times (the ms of the ids) of an agent token's audit events that are no decision, oldest first, on the stream's slot: what the token holds of its share. */
  auditShare(tokenName: string): string;
  /** HASH the relay counted the cap's drops in before the tokens' shares (read, never written: an upgrade keeps its count). */
  readonly auditDropsBefore: string;
  /** HASH of one "Allow for a while" rule's fields (see redis-rules.ts), expiring with the rule. */
  rule(id: string): string;
  /** STRING: id of the live rule of a scope (token, session, tool; hashed, since each may hold any character), expiring with that rule. */
  ruleScope(scope: RuleScope): string;
  /** ZSET of rule ids, scored by when each expires (Unix ms); the listing walks it. */
  readonly rules: string;
  /** The keys of one kind of console sign-in entry (src/requests/sign-ins.ts), on one slot: a script writes an entry and its index together. */
  signIns(kind: SignInKind): SignInKeys;
}

/** The keys of one kind of console sign-in entry. */
export interface SignInKeys {
  /** STRING: an entry as JSON, under the SHA-256 of its secret (base64url), expiring with it. */
  entry(digest: string): string;
  /** ZSET: the digest of every entry of the kind, scored by its end (Unix ms): what the kind's bound counts. */
  readonly live: string;
  /** ZSET: the digests of one person's sessions (the `session` kind's), scored by their end: what a person's bound counts. */
  ofPerson(personId: string): string;
}

/**
 * A sign-in kind's keys under `base`: `<base>:<digest>`, `<base>:live` and `<base>:of:<SHA-256 of the person's id, hex>`
 * (a digest is 43 characters of base64url, never "live" nor holding a colon).
 */
function signInKeys(base: string): SignInKeys {
  return {
    entry: (digest) => `${base}:${digest}`,
    live: `${base}:live`,
    ofPerson: (personId) => `${base}:of:${createHash("sha256").update(personId).digest("hex")}`,
  };
}

/** FNV-1a over the UTF-16 code units: cheap, stable across processes and versions. */
function spread(text: string, buckets: number): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i += 1) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  return (hash >>> 0) % buckets;
}

/** A queue's name for one of its entries: `callbacks` → `callback`, `tallies` → `tally`. */
const singular = (queue: QueueName) => queue.replace(/ies$/, "y").replace(/s$/, "");

function shardKeys(base: string): ShardKeys {
  return {
    deadlines: `${base}:deadlines`,
    idempotency: (scopedKey) => `${base}:idem:${scopedKey}`,
    message: (slack) => `${base}:msg:${slack.channel}:${slack.ts}`,
    queues: Object.fromEntries(QUEUE_NAMES.map((queue) => [queue, { due: `${base}:${queue}`, attempts: `${base}:${singular(queue)}-attempts` }])) as Record<
      QueueName,
      QueueKeys
    >,
    recent: `${base}:recent`,
    pendingOf: (tokenName) => `${base}:pending:${tokenName}`,
    sameAs: (key) => `${base}:same:${key}`,
  };
}

/** The keys under `prefix`: the one-shard layout, or with `shards` the tagged layout of that many shards (Redis Cluster). */
export function storeKeys(prefix: string, shards?: number): StoreKeys {
  if (prefix.length === 0 || /[{}]/.test(prefix)) {
    throw new Error(`Redis key prefix "${prefix}" must be non-empty and contain no braces`);
  }
  if (shards !== undefined && (!Number.isSafeInteger(shards) || shards < 1)) throw new Error("shards must be a positive integer");
  const scopeHash = ({ token, sessionId, toolName }: RuleScope) =>
    createHash("sha256")
      .update(JSON.stringify([token, sessionId, toolName]))
      .digest("hex");
  const common = {
    ended: `${prefix}:ended`,
    changed: `${prefix}:changed`,
    cancelledCalls: `${prefix}:cancelled-calls`,
    cancelledCall: (key: string) => `${prefix}:cancelled-call:${createHash("sha256").update(key).digest("hex")}`,
    audit: `${prefix}:audit`,
    auditDrops: `${prefix}:audit:{${prefix}:audit}:drops`,
    auditShare: (tokenName: string) => `${prefix}:audit:{${prefix}:audit}:share:${tokenName}`,
    auditDropsBefore: `${prefix}:audit:drops`,
  };
  if (shards === undefined) {
    return {
      ...common,
      shards: [shardKeys(prefix)],
      shardOf: () => 0,
      shardOfToken: () => 0,
      data: (id) => `${prefix}:{${id}}:data`,
      rule: (id) => `${prefix}:rule:{${id}}`,
      ruleScope: (scope) => `${prefix}:rule-scope:${scopeHash(scope)}`,
      rules: `${prefix}:rules`,
      signIns: (kind) => signInKeys(`${prefix}:console:${kind}`),
    };
  }
  const tag = (name: string | number) => `${prefix}:{${prefix}:${name}}`;
  const shardOf = (id: string) => spread(id, shards);
  const rules = tag("rules");
  return {
    ...common,
    shards: Array.from({ length: shards }, (_, k) => shardKeys(tag(k))),
    shardOf,
    shardOfToken: (tokenName) => spread(tokenName, shards),
    data: (id) => `${tag(shardOf(id))}:${id}:data`,
    rule: (id) => `${rules}:rule:${id}`,
    ruleScope: (scope) => `${rules}:rule-scope:${scopeHash(scope)}`,
    rules: `${rules}:rules`,
    signIns: (kind) => signInKeys(tag(`console:${kind}`)),
  };
}
