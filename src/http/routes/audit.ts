/**
 * `GET /v1/audit?since=&after=&requestId=&limit=` (docs/architecture.md §7), for admin
 * tokens only: the audit trail's events, oldest first, a page at a time
 * (`next` → the `after` of the next page). Thin: parse the query (every bad
 * parameter a 400 naming it), read the AuditTrail, render the events.
 */
import { z } from "zod";
import { AUDIT_LIMITS, AuditEventId, type AuditReply } from "../../protocol/operator.js";
import type { AuditDrops, AuditQuery } from "../../requests/audit.js";
import { toAuditView, type AuditTrail } from "../../requests/audit-trail.js";
import { invalidRequest } from "../../requests/errors.js";
import { serveRoute } from "../api.js";
import type { AuthHook } from "../auth.js";
import { parseLimit, queryParams } from "../query.js";
import { rawQuery, type HttpApp } from "../transport.js";

export interface AuditRoutesDeps {
  audit: Pick<AuditTrail, "read">;
  /** Admin tokens only. */
  authenticate: AuthHook;
}

export function registerAuditRoutes(app: HttpApp, { audit, authenticate }: AuditRoutesDeps): void {
  serveRoute(app, "readAudit", { onRequest: authenticate }, async (request): Promise<AuditReply> => auditPage(audit, rawQuery(request)));
}

/** The page of events `query` (the raw query string) asks for, as GET /v1/audit (and the console's audit view) reply with it. */
export async function auditPage(audit: Pick<AuditTrail, "read">, query: string): Promise<AuditReply> {
  const page = await audit.read(parseAuditQuery(query));
  return {
    events: page.events.map(toAuditView),
    ...(page.next === undefined ? {} : { next: page.next }),
    ...(page.dropped === undefined ? {} : { dropped: droppedView(page.dropped) }),
  };
}

const PARAMETERS = ["since", "after", "requestId", "limit"];
/** Unix time in milliseconds: digits only, up to the largest safe integer. */
const UNIX_MS = /^\d{1,16}$/;
const ISO_TIME = z.union([z.iso.datetime({ offset: true }), z.iso.date()]);
/** Ids the relay issues are far shorter (requests.ts refuses longer ones as unknown). */
const MAX_REQUEST_ID_LENGTH = 200;

/** What the cap and the tokens' shares kept out, as the reply says it: the totals, a sentence, and each cause. */
function droppedView({ events, firstAt, lastAt, causes }: AuditDrops): NonNullable<AuditReply["dropped"]> {
  const iso = (ms: number) => new Date(ms).toISOString();
  const why = causes.map((cause) =>
    cause.reason === "cap"
      ? `${cause.events} because the audit log was at RELAY_AUDIT_MAX_EVENTS`
      : `${cause.events} because agent token ${cause.token} held its share of RELAY_AUDIT_MAX_EVENTS (token_share)`,
  );
  const reason = `events that record no person's decision were counted instead of written: ${why.join("; ") || `${events}`}`;
  const views = causes.map(({ reason, token, events, firstAt, lastAt }) => ({
    reason,
    ...(token === undefined ? {} : { token }),
    events,
    from: iso(firstAt),
    to: iso(lastAt),
  }));
  return { events, from: iso(firstAt), to: iso(lastAt), reason, causes: views };
}

/** `query` is the raw text after "?" ("" when none). */
export function parseAuditQuery(query: string): AuditQuery {
  const params = queryParams(query, PARAMETERS);
  const result: AuditQuery = { limit: parseLimit(params.get("limit"), { max: AUDIT_LIMITS.max, fallback: AUDIT_LIMITS.default }) };
  const since = params.get("since");
  if (since !== undefined) result.since = parseSince(since);
  const after = params.get("after");
  if (after !== undefined) {
    if (!AuditEventId.safeParse(after).success) {
      throw invalidRequest([{ path: "after", message: "must be an event id from an earlier read, such as 1796000000000-0" }]);
    }
    result.after = after;
  }
  const requestId = params.get("requestId");
  if (requestId !== undefined) {
    if (requestId.length === 0 || requestId.length > MAX_REQUEST_ID_LENGTH) {
      throw invalidRequest([{ path: "requestId", message: `must be a request id of 1 to ${MAX_REQUEST_ID_LENGTH} characters` }]);
    }
    result.requestId = requestId;
  }
  return result;
}

/** An ISO 8601 time with its offset (or Z), a date (midnight UTC), or Unix time in milliseconds. */
function parseSince(raw: string): number {
  const ms = UNIX_MS.test(raw) ? Number(raw) : ISO_TIME.safeParse(raw).success ? Date.parse(raw) : Number.NaN;
  if (!Number.isSafeInteger(ms) || ms < 0) {
    throw invalidRequest([
      { path: "since", message: "must be an ISO 8601 time with its offset (2026-12-01T09:00:00Z), a date (2026-12-01) or Unix time in milliseconds" },
    ]);
  }
  return ms;
}
