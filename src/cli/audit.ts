/**
 * `approval-relay audit --since 24h --format jsonl|csv [--request-id ID]
 * [--limit N]`: prints the relay's audit log (GET /v1/audit, an admin token),
 * oldest first, paging through it with the `after` cursor. jsonl prints one
 * event per line as the relay sent it; csv a header and one row per event in
 * fixed columns, escaped for spreadsheets (see ./audit-csv.ts). Exit codes:
 * 0 printed (even nothing), 3 on any error.
 */
import { setTimeout as delay } from "node:timers/promises";
import { parseArgs } from "node:util";
import { isAbortError, RelayClientError } from "../client/errors.js";
import { exchange, parseWith } from "../client/transport.js";
import { AUDIT_LIMITS, AuditReply, type AuditEventView } from "../protocol/operator.js";
import { auditDroppedText } from "../protocol/texts.js";
import { visibleJson } from "../protocol/visible-text.js";
import { Backoff } from "../protocol/timing.js";
import { describeError } from "./ask.js";
import { csvHeader, csvRow } from "./audit-csv.js";
import { connection, CONNECTION_OPTIONS, type Connection } from "./connection.js";
import type { CliIo } from "./io.js";
import { EXIT, USAGE } from "./usage.js";

const OPTIONS = {
  ...CONNECTION_OPTIONS,
  since: { type: "string" },
  format: { type: "string" },
  "request-id": { type: "string" },
  limit: { type: "string" },
  help: { type: "boolean", short: "h" },
} as const;

/** One call to the relay counts as failed after this long. */
const CALL_TIMEOUT_MS = 30_000;
const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };
const DURATION = /^(\d{1,6})([smhdw])$/;
/** A date, or a date and time with or without seconds and an offset (a time without an offset is local time). */
const ISO_TIME = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/i;
const MAX_LIMIT = 10_000_000;

interface AuditArgs {
  conn: Connection;
  format: "jsonl" | "csv";
  /** ISO 8601. */
  since?: string;
  requestId?: string;
  /** Most events printed in all. */
  limit?: number;
}

export async function audit(args: string[], io: CliIo): Promise<number> {
  const parsed = parseAuditArgs(args, io);
  if (typeof parsed === "number") return parsed;
  const { format, limit } = parsed;
  const print = format === "csv" ? (event: AuditEventView) => `${csvRow(event)}\r\n` : (event: AuditEventView) => `${visibleJson(JSON.stringify(event))}\n`;
  let printed = 0;
  let after: string | undefined;
  let dropped: AuditReply["dropped"];
  try {
    do {
      const pageSize = Math.min(AUDIT_LIMITS.max, limit === undefined ? AUDIT_LIMITS.max : limit - printed);
      const page = await fetchPage(parsed, pagePath(parsed, pageSize, after), io);
      // The header once the relay has answered, so a refused call prints nothing on stdout.
      const header = format === "csv" && after === undefined ? `${csvHeader()}\r\n` : "";
      const text = header + page.events.map(print).join("");
      if (text !== "") io.stdout.write(text);
      printed += page.events.length;
      after = page.next;
      dropped = page.dropped;
    } while (after !== undefined && (limit === undefined || printed < limit));
    // On stderr, so the jsonl or csv on stdout stays data only.
    if (dropped) io.stderr.write(`approval-relay audit: ${auditDroppedText(dropped)}\n`);
  } catch (error) {
    io.stderr.write(`approval-relay audit: ${isAbortError(error) ? "interrupted" : describeError(error)}\n`);
    return EXIT.error;
  }
  return 0;
}

function pagePath({ since, requestId }: AuditArgs, limit: number, after: string | undefined): string {
  const query = new URLSearchParams({ limit: String(limit) });
  if (since !== undefined) query.set("since", since);
  if (requestId !== undefined) query.set("requestId", requestId);
  if (after !== undefined) query.set("after", after);
  return `/v1/audit?${query}`;
}

/** One page, retrying an unreachable relay (or a 5xx, a 429) RELAY_RETRIES times; a refusal (4xx) throws at once. */
async function fetchPage({ conn }: AuditArgs, path: string, io: CliIo): Promise<AuditReply> {
  const fetch = io.fetch ?? ((input: string, init: RequestInit) => globalThis.fetch(input, init));
  const base = conn.url.replace(/\/+$/, "");
  const backoff = new Backoff(250, 5000, Math.random);
  for (let attempt = 0; ; attempt += 1) {
    const result = await exchange(
      fetch,
      { method: "GET", base, path, token: conn.token, timeoutMs: CALL_TIMEOUT_MS, signal: io.signal },
      parseWith(AuditReply),
    );
    if (result.ok) return result.value;
    if (attempt >= conn.retries) throw new RelayClientError(result.code, result.reason);
    await delay(backoff.next(result.retryAfterMs), undefined, { signal: io.signal });
  }
}

function parseAuditArgs(args: string[], io: CliIo): AuditArgs | number {
  let values;
  try {
    values = parseArgs({ args, options: OPTIONS, strict: true }).values;
  } catch (error) {
    return misuse(io, error instanceof Error ? error.message : String(error));
  }
  if (values.help) {
    io.stdout.write(USAGE);
    return 0;
  }
  const format = values.format ?? "jsonl";
  if (format !== "jsonl" && format !== "csv") return misuse(io, `--format must be jsonl or csv, got "${format}"`);
  const since = values.since === undefined ? undefined : parseSince(values.since, Date.now());
  if (since === null) return misuse(io, `--since must be a duration such as 30m, 24h or 7d, or an ISO 8601 time such as 2026-12-01T09:00:00Z`);
  const requestId = values["request-id"];
  if (requestId !== undefined && (requestId.length === 0 || requestId.length > 200)) return misuse(io, "--request-id must be a request id");
  const limit = values.limit === undefined ? undefined : /^\d{1,8}$/.test(values.limit) ? Number(values.limit) : 0;
  if (limit !== undefined && !(limit >= 1 && limit <= MAX_LIMIT)) return misuse(io, `--limit must be a whole number of events from 1 to ${MAX_LIMIT}`);
  const conn = connection(values, io.env, "an admin token from RELAY_ADMIN_TOKENS");
  if (typeof conn === "string") return misuse(io, conn);
  return {
    conn,
    format,
    ...(since === undefined ? {} : { since }),
    ...(requestId === undefined ? {} : { requestId }),
    ...(limit === undefined ? {} : { limit }),
  };
}

/** `30m`, `24h`, `7d` (before `now`) or an ISO 8601 time, as an ISO 8601 time in UTC; null when it is neither. */
export function parseSince(value: string, now: number): string | null {
  const duration = DURATION.exec(value);
  const ms = duration ? now - Number(duration[1]) * UNIT_MS[duration[2]!]! : ISO_TIME.test(value) ? Date.parse(value) : Number.NaN;
  return Number.isFinite(ms) && ms >= 0 ? new Date(ms).toISOString() : null;
}

function misuse(io: CliIo, message: string): number {
  io.stderr.write(`approval-relay audit: ${message}\n\n${USAGE}`);
  return EXIT.error;
}
