/**
 * Every Redis key (and the pub/sub channel) the Redis store uses, built in
 * this one place. Lua scripts get key names through KEYS, never assemble them.
 *
 * Per-request keys carry a hash tag (`<prefix>:{<id>}:…`) so one request's
 * keys share a Redis Cluster slot. The global keys (deadlines, idempotency,
 * message index, the leased queues, posting set, recent index) live in other
 * slots, so the scripts that touch them together would need adjusting for
 * Redis Cluster; the relay runs on one Redis server (or a primary with
 * replicas), not on Cluster.
 */
import { createHash } from "node:crypto";
import type { SlackRef } from "../protocol/request-view.js";
import type { RuleScope } from "../requests/rules.js";

export interface StoreKeys {
  /** HASH of one request's fields (see redis-record.ts). */
  data(id: string): string;
  /** ZSET of pending request ids, scored by expiresAt (Unix ms). */
  readonly deadlines: string;
  /** STRING: a scoped idempotency key ("<token name>:<key>") → request id. */
  idempotency(scopedKey: string): string;
  /** STRING: a Slack message (channel + ts) → request id. */
  message(slack: SlackRef): string;
  /** Pub/sub channel that carries the id of every request that ends. */
  readonly ended: string;
  /** ZSET of request ids whose callback awaits delivery, scored by when it is due (Unix ms). */
  readonly callbacks: string;
  /** HASH: request id → callback delivery attempts made so far. */
  readonly callbackAttempts: string;
  /** ZSET of ended request ids whose Slack message is still to be updated, scored by when it is due (Unix ms). */
  readonly updates: string;
  /** HASH: request id → message update attempts made so far. */
  readonly updateAttempts: string;
  /** ZSET of pending request ids whose Slack message is not recorded yet, scored by the end of the poster's lease (Unix ms). */
  readonly posting: string;
  /** ZSET of queued reminders and escalations, members `<id>:<index>`, scored by when each is due (Unix ms). */
  readonly reminders: string;
  /** HASH: reminder member (`<id>:<index>`) → attempts made so far. */
  readonly reminderAttempts: string;
  /** ZSET of queued outcome notice parts, members `<id>:thread` and `<id>:dm`, scored by when each is due (Unix ms). */
  readonly notices: string;
  /** HASH: notice member (`<id>:<part>`) → attempts made so far. */
  readonly noticeAttempts: string;
  /** ZSET of recently created request ids, scored by createdAt (Unix ms), trimmed to the newest; the listing walks it. */
  readonly recent: string;
  /** STREAM of audit events (src/requests/audit.ts), capped in length. */
  readonly audit: string;
  /** HASH of one "Allow for a while" rule's fields (see redis-rules.ts), expiring with the rule. */
  rule(id: string): string;
  /** STRING: id of the live rule of a scope (token, session, tool; hashed, since each may hold any character), expiring with that rule. */
  ruleScope(scope: RuleScope): string;
  /** ZSET of rule ids, scored by when each expires (Unix ms); the listing walks it. */
  readonly rules: string;
}

export function storeKeys(prefix: string): StoreKeys {
  if (prefix.length === 0 || /[{}]/.test(prefix)) {
    throw new Error(`Redis key prefix "${prefix}" must be non-empty and contain no braces`);
  }
  return {
    data: (id) => `${prefix}:{${id}}:data`,
    deadlines: `${prefix}:deadlines`,
    idempotency: (scopedKey) => `${prefix}:idem:${scopedKey}`,
    message: (slack) => `${prefix}:msg:${slack.channel}:${slack.ts}`,
    ended: `${prefix}:ended`,
    callbacks: `${prefix}:callbacks`,
    callbackAttempts: `${prefix}:callback-attempts`,
    posting: `${prefix}:posting`,
    updates: `${prefix}:updates`,
    updateAttempts: `${prefix}:update-attempts`,
    reminders: `${prefix}:reminders`,
    reminderAttempts: `${prefix}:reminder-attempts`,
    notices: `${prefix}:notices`,
    noticeAttempts: `${prefix}:notice-attempts`,
    recent: `${prefix}:recent`,
    audit: `${prefix}:audit`,
    rule: (id) => `${prefix}:rule:{${id}}`,
    ruleScope: ({ token, sessionId, toolName }) =>
      `${prefix}:rule-scope:${createHash("sha256")
        .update(JSON.stringify([token, sessionId, toolName]))
        .digest("hex")}`,
    rules: `${prefix}:rules`,
  };
}
