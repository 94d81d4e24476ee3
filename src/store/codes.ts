/**
 * The small codes the Lua scripts return (mirrored in lua/includes/common.lua)
 * and the functions that turn a script's raw reply into typed results.
 * A reply is `{code}`, `{code, id}`, `{code, field, value, …}` (the hash),
 * or `{code, entry, attempts, …}` (claimed queue entries).
 */
import { z } from "zod";
import type { RequestRecord } from "../requests/model.js";
import { entryOfKey, type ApproveResult, type ClaimedEntry, type ExtendResult, type QueueName, type TransitionResult } from "../requests/store.js";
import { decodeRecord, pairsToHash } from "./redis-record.js";

export const ScriptCode = {
  Applied: 1,
  AlreadyEnded: 2,
  NotDue: 3,
  NotFound: 4,
  /** create: the idempotency key already names another request; approve: this person was counted already. */
  Duplicate: 5,
  /** create: a request with this id already exists. */
  IdTaken: 6,
  /** approve: counted, the request stays pending. */
  Counted: 7,
  /** complete-pending-update: the request changed since its message was shown. */
  Changed: 8,
  /** create: a pending request asks the same (its id follows). */
  Joined: 9,
  /** create: the token holds as many pending requests as it may (the count and the earliest's end follow); put-sign-in: the kind holds as many live entries as it may. */
  TooMany: 10,
} as const;
export type ScriptCode = (typeof ScriptCode)[keyof typeof ScriptCode];

/** Integers may arrive as strings when the client sets `stringNumbers`. */
const Reply = z.tuple([z.coerce.number().int()], z.string());

export type CreateReply =
  | { outcome: "created" }
  /** `joined`: the request asks the same as `existingId` (not its idempotency key). */
  | { outcome: "duplicate"; existingId: string; joined?: true }
  | { outcome: "too_many"; pending: number; earliestEnd: number };

export interface ScriptReply {
  code: number;
  rest: string[];
}

export class ScriptReplyError extends Error {
  constructor(script: string, reply: unknown) {
    super(`unexpected reply from the ${script} script: ${JSON.stringify(reply)?.slice(0, 200)}`);
    this.name = "ScriptReplyError";
  }
}

/** Any script's reply as its code and the strings that follow it; throws ScriptReplyError for another shape (also for the rule store's scripts). */
export function parseScriptReply(script: string, raw: unknown): ScriptReply {
  const result = Reply.safeParse(raw);
  if (!result.success) throw new ScriptReplyError(script, raw);
  const [code, ...rest] = result.data;
  return { code, rest };
}

function record(key: string, rest: string[]): RequestRecord {
  return decodeRecord(key, pairsToHash(rest));
}

/** answer, expire, cancel and fail replies. */
export function toTransitionResult(script: string, key: string, raw: unknown): TransitionResult {
  const { code, rest } = parseScriptReply(script, raw);
  switch (code) {
    case ScriptCode.Applied:
      return { outcome: "applied", record: record(key, rest) };
    case ScriptCode.AlreadyEnded:
      return { outcome: "already_ended", record: record(key, rest) };
    case ScriptCode.NotDue:
      return { outcome: "not_due", record: record(key, rest) };
    case ScriptCode.NotFound:
      return { outcome: "not_found" };
    default:
      throw new ScriptReplyError(script, raw);
  }
}

/** approve reply. */
export function toApproveResult(key: string, raw: unknown): ApproveResult {
  const { code, rest } = parseScriptReply("approve", raw);
  if (code === ScriptCode.Counted) return { outcome: "counted", record: record(key, rest) };
  if (code === ScriptCode.Duplicate) return { outcome: "duplicate", record: record(key, rest) };
  if (code === ScriptCode.NotDue) throw new ScriptReplyError("approve", raw);
  return toTransitionResult("approve", key, raw);
}

/** extend reply. */
export function toExtendResult(key: string, raw: unknown): ExtendResult {
  const { code, rest } = parseScriptReply("extend", raw);
  if (code === ScriptCode.Applied) return { outcome: "applied", record: record(key, rest) };
  if (code === ScriptCode.AlreadyEnded) return { outcome: "already_ended", record: record(key, rest) };
  if (code === ScriptCode.NotFound) return { outcome: "not_found" };
  throw new ScriptReplyError("extend", raw);
}

export function toCreateReply(key: string, raw: unknown): CreateReply {
  const { code, rest } = parseScriptReply("create", raw);
  if (code === ScriptCode.Applied) return { outcome: "created" };
  if (code === ScriptCode.Duplicate && rest[0] !== undefined) return { outcome: "duplicate", existingId: rest[0] };
  if (code === ScriptCode.Joined && rest[0] !== undefined) return { outcome: "duplicate", existingId: rest[0], joined: true };
  if (code === ScriptCode.TooMany && rest.length === 2) return { outcome: "too_many", pending: Number(rest[0]), earliestEnd: Number(rest[1]) };
  if (code === ScriptCode.IdTaken) throw new Error(`a request with the id in ${key} already exists`);
  throw new ScriptReplyError("create", raw);
}

/** set-slack reply: the record as it now is, or undefined for an unknown id. */
export function toSlackResult(key: string, raw: unknown): RequestRecord | undefined {
  const { code, rest } = parseScriptReply("set-slack", raw);
  if (code === ScriptCode.Applied) return record(key, rest);
  if (code === ScriptCode.NotFound) return undefined;
  throw new ScriptReplyError("set-slack", raw);
}

/** claim-entries reply: the claimed entries of `queue` with the attempts made so far. */
export function toClaimedEntries(queue: QueueName, raw: unknown): ClaimedEntry[] {
  const { code, rest } = parseScriptReply("claim-entries", raw);
  if (code !== ScriptCode.Applied || rest.length % 2 !== 0) throw new ScriptReplyError("claim-entries", raw);
  const claimed: ClaimedEntry[] = [];
  for (let i = 0; i < rest.length; i += 2) {
    const attempts = Number(rest[i + 1]);
    if (!Number.isSafeInteger(attempts) || attempts < 0) throw new ScriptReplyError("claim-entries", raw);
    const key = rest[i]!;
    claimed.push({ key, id: entryOfKey(queue, key).id, attempts });
  }
  return claimed;
}

/** complete-pending-update reply: true when the update was forgotten, false when the request changed. */
export function toPendingUpdateResult(raw: unknown): boolean {
  const { code } = parseScriptReply("complete-pending-update", raw);
  if (code === ScriptCode.Applied) return true;
  if (code === ScriptCode.Changed) return false;
  throw new ScriptReplyError("complete-pending-update", raw);
}

/** retry-entry and complete-entry replies: true when the entry was queued. */
export function toQueuedResult(script: string, raw: unknown): boolean {
  const { code } = parseScriptReply(script, raw);
  if (code === ScriptCode.Applied) return true;
  if (code === ScriptCode.NotFound) return false;
  throw new ScriptReplyError(script, raw);
}
