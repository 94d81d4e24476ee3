/**
 * How a RequestRecord lies in its Redis HASH. Every field is an opaque
 * string: JSON is written and read here only, never in Lua (Lua's cjson turns
 * empty arrays into objects and rounds numbers). Lua compares `status` and
 * `expiresAt` and sets fields from strings it is given.
 *
 * Reading parses with the zod RequestRecord schema: Redis is a trust boundary.
 */
import { z } from "zod";
import { RequestRecord } from "../requests/model.js";

/**
 * Hash fields; `idemKey` and `msgKey` (key names), `reminders` (the
 * indexes of the queued reminders), `noticesQueued` and `approvalCount` are
 * what the scripts keep for themselves. `callbackUrl` repeats the body's
 * field so the transition scripts, which never parse JSON, can see that a
 * callback is due, and `requestedBy` the policy's user id so they can see
 * that a DM is to be sent; reading takes both from the JSON they repeat.
 */
export const Field = {
  status: "status",
  /** JSON of the fields that never change: id, tokenName, channel, createdAt, policy. */
  meta: "meta",
  /** JSON of the agent's request body. */
  body: "body",
  /** Unix ms, as a decimal string. */
  expiresAt: "expiresAt",
  decision: "decision",
  answeredBy: "answeredBy",
  /** Unix ms, as a decimal string. */
  endedAt: "endedAt",
  error: "error",
  cancelledBy: "cancelledBy",
  /** JSON of {channel, ts}. */
  slack: "slack",
  /** The body's callbackUrl, when it has one. */
  callbackUrl: "callbackUrl",
  /** Unix ms, as a decimal string. */
  postedAt: "postedAt",
  /** The policy's requestedBy user id, when it has one. */
  requestedBy: "requestedBy",
  /** How many `approval:` fields there are (approve-8.lua numbers each new one with it). */
  approvalCount: "approvalCount",
} as const;

/** Hash field of one of a request's other messages (value: JSON of {channel, ts}); see otherMessageField. */
const OTHER_MESSAGE = "other:";

/** The hash field an other message of a request lies in: one field each, so a script adds one without parsing JSON. */
export function otherMessageField(slack: { channel: string; ts: string }): string {
  return `${OTHER_MESSAGE}${slack.channel}:${slack.ts}`;
}

/** Hash field of one person's approval (value: "<n>:<approval JSON>", n counting approvals in order); see approvalField. */
const APPROVAL = "approval:";

/** The hash field a person's approval lies in: one field each, so a script counts a person once without parsing JSON. */
export function approvalField(personId: string): string {
  return `${APPROVAL}${personId}`;
}

const Meta = RequestRecord.pick({ id: true, tokenName: true, channel: true, createdAt: true, policy: true });

export class UnreadableRecordError extends Error {
  constructor(key: string, reason: string) {
    super(`stored request ${key} is unreadable: ${reason}`);
    this.name = "UnreadableRecordError";
  }
}

/** The record as flat field/value pairs for HSET. */
export function encodeRecord(record: RequestRecord): string[] {
  const meta = {
    id: record.id,
    tokenName: record.tokenName,
    channel: record.channel,
    createdAt: record.createdAt,
    ...(record.policy ? { policy: record.policy } : {}),
  };
  const pairs = [
    Field.status,
    record.status,
    Field.meta,
    JSON.stringify(meta),
    Field.body,
    JSON.stringify(record.body),
    Field.expiresAt,
    String(record.expiresAt),
  ];
  const optional: Array<[string, string | undefined]> = [
    [Field.decision, json(record.decision)],
    [Field.answeredBy, json(record.answeredBy)],
    [Field.endedAt, record.endedAt === undefined ? undefined : String(record.endedAt)],
    [Field.error, record.error],
    [Field.cancelledBy, record.cancelledBy],
    [Field.slack, json(record.slack)],
    [Field.callbackUrl, record.body.callbackUrl],
    [Field.postedAt, record.postedAt === undefined ? undefined : String(record.postedAt)],
    [Field.requestedBy, record.policy?.requestedBy?.id],
  ];
  for (const [field, value] of optional) if (value !== undefined) pairs.push(field, value);
  for (const other of record.otherMessages ?? []) pairs.push(otherMessageField(other), JSON.stringify(other));
  const approvals = record.approvals ?? [];
  for (const [i, approval] of approvals.entries()) pairs.push(approvalField(approval.person.id), `${i + 1}:${JSON.stringify(approval)}`);
  if (approvals.length > 0) pairs.push(Field.approvalCount, String(approvals.length));
  return pairs;
}

/** Parses a hash (as HGETALL returns it) into a record; throws UnreadableRecordError. */
export function decodeRecord(key: string, hash: Readonly<Record<string, string>>): RequestRecord {
  try {
    const candidate = {
      ...Meta.parse(parseJson(hash[Field.meta])),
      status: hash[Field.status],
      body: parseJson(hash[Field.body]),
      expiresAt: toNumber(hash[Field.expiresAt]),
      decision: parseJson(hash[Field.decision]),
      answeredBy: parseJson(hash[Field.answeredBy]),
      endedAt: toNumber(hash[Field.endedAt]),
      error: hash[Field.error],
      cancelledBy: hash[Field.cancelledBy],
      slack: parseJson(hash[Field.slack]),
      postedAt: toNumber(hash[Field.postedAt]),
      approvals: approvalsOf(hash),
      otherMessages: otherMessagesOf(hash),
    };
    return RequestRecord.parse(Object.fromEntries(Object.entries(candidate).filter(([, value]) => value !== undefined)));
  } catch (error) {
    const reason = error instanceof z.ZodError ? z.prettifyError(error) : String(error);
    throw new UnreadableRecordError(key, reason);
  }
}

/** The `other:` fields of a hash, oldest message first; undefined when there are none. */
function otherMessagesOf(hash: Readonly<Record<string, string>>): unknown[] | undefined {
  const others = Object.entries(hash)
    .filter(([field]) => field.startsWith(OTHER_MESSAGE))
    .map(([, value]) => parseJson(value) as { ts?: unknown });
  if (others.length === 0) return undefined;
  return others.sort((a, b) => String(a.ts).localeCompare(String(b.ts)));
}

/** The `approval:` fields of a hash, in the order they were counted; undefined when there are none. */
function approvalsOf(hash: Readonly<Record<string, string>>): unknown[] | undefined {
  const approvals = Object.entries(hash)
    .filter(([field]) => field.startsWith(APPROVAL))
    .map(([field, value]) => {
      const split = value.indexOf(":");
      const order = Number(value.slice(0, split));
      if (split < 1 || !Number.isSafeInteger(order)) throw new Error(`${field} does not start with its number`);
      return { order, approval: parseJson(value.slice(split + 1)) };
    });
  if (approvals.length === 0) return undefined;
  return approvals.sort((a, b) => a.order - b.order).map(({ approval }) => approval);
}

/** Turns a flat [field, value, …] list (a script's reply) into a hash. */
export function pairsToHash(pairs: readonly string[]): Record<string, string> {
  const hash: Record<string, string> = {};
  for (let i = 0; i + 1 < pairs.length; i += 2) hash[pairs[i]!] = pairs[i + 1]!;
  return hash;
}

function json(value: unknown): string | undefined {
  return value === undefined ? undefined : JSON.stringify(value);
}

function parseJson(text: string | undefined): unknown {
  return text === undefined ? undefined : JSON.parse(text);
}

function toNumber(text: string | undefined): number | undefined {
  return text === undefined ? undefined : Number(text);
}
