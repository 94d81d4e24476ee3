/**
 * The small codes the Lua scripts return (mirrored in lua/includes/common.lua)
 * and the functions that turn a script's raw reply into typed results.
 * A reply is `{code}`, `{code, id}`, `{code, field, value, …}` (the hash),
 * `{code, id, attempts, …}` (claimed callbacks, updates and reminders) or
 * `{code, id, …}` (claimed unposted requests).
 */
import { z } from "zod";
import type { RequestRecord } from "../requests/model.js";
import type { ApproveResult, ClaimedCallback, ClaimedNotice, ClaimedReminder, ExtendResult, TransitionResult } from "../requests/store.js";
import { noticeOfKey, reminderOfKey } from "./leased-queue.js";
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
  /** create: the token holds as many pending requests as it may (the count and the earliest's end follow). */
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

export class ScriptReplyError extends Error {
  constructor(script: string, reply: unknown) {
    super(`unexpected reply from the ${script} script: ${JSON.stringify(reply)?.slice(0, 200)}`);
    this.name = "ScriptReplyError";
  }
}

function parse(script: string, raw: unknown): { code: number; rest: string[] } {
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
  const { code, rest } = parse(script, raw);
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
  const { code, rest } = parse("approve", raw);
  if (code === ScriptCode.Counted) return { outcome: "counted", record: record(key, rest) };
  if (code === ScriptCode.Duplicate) return { outcome: "duplicate", record: record(key, rest) };
  if (code === ScriptCode.NotDue) throw new ScriptReplyError("approve", raw);
  return toTransitionResult("approve", key, raw);
}

/** extend reply. */
export function toExtendResult(key: string, raw: unknown): ExtendResult {
  const { code, rest } = parse("extend", raw);
  if (code === ScriptCode.Applied) return { outcome: "applied", record: record(key, rest) };
  if (code === ScriptCode.AlreadyEnded) return { outcome: "already_ended", record: record(key, rest) };
  if (code === ScriptCode.NotFound) return { outcome: "not_found" };
  throw new ScriptReplyError("extend", raw);
}

export function toCreateReply(key: string, raw: unknown): CreateReply {
  const { code, rest } = parse("create", raw);
  if (code === ScriptCode.Applied) return { outcome: "created" };
  if (code === ScriptCode.Duplicate && rest[0] !== undefined) return { outcome: "duplicate", existingId: rest[0] };
  if (code === ScriptCode.Joined && rest[0] !== undefined) return { outcome: "duplicate", existingId: rest[0], joined: true };
  if (code === ScriptCode.TooMany && rest.length === 2) return { outcome: "too_many", pending: Number(rest[0]), earliestEnd: Number(rest[1]) };
  if (code === ScriptCode.IdTaken) throw new Error(`a request with the id in ${key} already exists`);
  throw new ScriptReplyError("create", raw);
}

/** set-slack reply: the record as it now is, or undefined for an unknown id. */
export function toSlackResult(key: string, raw: unknown): RequestRecord | undefined {
  const { code, rest } = parse("set-slack", raw);
  if (code === ScriptCode.Applied) return record(key, rest);
  if (code === ScriptCode.NotFound) return undefined;
  throw new ScriptReplyError("set-slack", raw);
}

/** claim-callbacks reply (callbacks and updates): the claimed ids with the attempts made so far. */
export function toClaimedCallbacks(raw: unknown): ClaimedCallback[] {
  const { code, rest } = parse("claim-callbacks", raw);
  if (code !== ScriptCode.Applied || rest.length % 2 !== 0) throw new ScriptReplyError("claim-callbacks", raw);
  const claimed: ClaimedCallback[] = [];
  for (let i = 0; i < rest.length; i += 2) {
    const attempts = Number(rest[i + 1]);
    if (!Number.isSafeInteger(attempts) || attempts < 0) throw new ScriptReplyError("claim-callbacks", raw);
    claimed.push({ id: rest[i]!, attempts });
  }
  return claimed;
}

/** claim-callbacks reply on the reminder queue: members `<id>:<index>` with the attempts made so far. */
export function toClaimedReminders(raw: unknown): ClaimedReminder[] {
  return toClaimedCallbacks(raw).map(({ id: member, attempts }) => {
    const reminder = reminderOfKey(member);
    if (!reminder) throw new ScriptReplyError("claim-reminders", raw);
    return { ...reminder, attempts };
  });
}

/** claim-callbacks reply on the notice queue: members `<id>:<part>` with the attempts made so far. */
export function toClaimedNotices(raw: unknown): ClaimedNotice[] {
  return toClaimedCallbacks(raw).map(({ id: member, attempts }) => {
    const notice = noticeOfKey(member);
    if (!notice) throw new ScriptReplyError("claim-notices", raw);
    return { ...notice, attempts };
  });
}

/** complete-pending-update reply: true when the update was forgotten, false when the request changed. */
export function toPendingUpdateResult(raw: unknown): boolean {
  const { code } = parse("complete-pending-update", raw);
  if (code === ScriptCode.Applied) return true;
  if (code === ScriptCode.Changed) return false;
  throw new ScriptReplyError("complete-pending-update", raw);
}

/** claim-unposted reply: the claimed request ids. */
export function toClaimedIds(raw: unknown): string[] {
  const { code, rest } = parse("claim-unposted", raw);
  if (code !== ScriptCode.Applied) throw new ScriptReplyError("claim-unposted", raw);
  return rest;
}

/** retry-callback, complete-callback and renew-post-lease replies: true when the id was queued. */
export function toQueuedResult(script: string, raw: unknown): boolean {
  const { code } = parse(script, raw);
  if (code === ScriptCode.Applied) return true;
  if (code === ScriptCode.NotFound) return false;
  throw new ScriptReplyError(script, raw);
}
