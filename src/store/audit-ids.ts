/**
 * Audit event ids (`<Unix ms>-<sequence>`, Redis Stream ids) for both audit
 * logs: how two compare, and where a read starts when it gives `since`, `after`
 * or both (the later of the two), so the memory log and XRANGE agree.
 */
import type { AuditQuery } from "../requests/audit.js";

/** Where a read starts: at `id` (inclusive) or just after it (exclusive). */
export interface ReadStart {
  id: string;
  exclusive: boolean;
}

function parts(id: string): [bigint, bigint] {
  const dash = id.indexOf("-");
  return [BigInt(id.slice(0, dash)), BigInt(id.slice(dash + 1))];
}

/** Negative when `a` was appended before `b`, 0 when they are the same, positive after. */
export function compareEventIds(a: string, b: string): number {
  const [aMs, aSeq] = parts(a);
  const [bMs, bSeq] = parts(b);
  if (aMs !== bMs) return aMs < bMs ? -1 : 1;
  return aSeq === bSeq ? 0 : aSeq < bSeq ? -1 : 1;
}

/** The start of a read for `query`; undefined → from the oldest event. */
export function readStart({ since, after }: Pick<AuditQuery, "since" | "after">): ReadStart | undefined {
  const fromSince = since === undefined ? undefined : { id: `${Math.max(0, Math.floor(since))}-0`, exclusive: false };
  const fromAfter = after === undefined ? undefined : { id: after, exclusive: true };
  if (!fromSince || !fromAfter) return fromSince ?? fromAfter;
  return compareEventIds(fromSince.id, fromAfter.id) > 0 ? fromSince : fromAfter;
}

/** Whether an event with `id` comes at or after `start`. */
export function isAtOrAfter(id: string, start: ReadStart | undefined): boolean {
  if (!start) return true;
  const order = compareEventIds(id, start.id);
  return start.exclusive ? order > 0 : order >= 0;
}
