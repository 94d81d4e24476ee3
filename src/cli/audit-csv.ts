/**
 * Audit events as CSV (RFC 4180) for `approval-relay audit --format csv`:
 * fixed columns, whatever fields an event has, so a spreadsheet or a script
 * reads every export the same way. A field holding a comma, a quote or a line
 * break is quoted, its quotes doubled. A field that starts with = + - @ or a
 * tab or carriage return gets a leading ' so a spreadsheet shows it as text
 * rather than running it as a formula: reasons are typed by people and
 * agents, and an export is opened by operators (CSV injection). Other
 * control characters (an escape sequence aimed at the terminal the export
 * is printed on) become U+FFFD, and invisible or direction-changing ones
 * (bidi overrides, zero-width characters) marked escapes such as `⟨U+202E⟩`
 * (protocol/visible-text.ts), so a reason reads as it was written.
 */
import type { AuditEventView } from "../protocol/operator.js";
import { visibleText } from "../protocol/visible-text.js";

/** The columns, in order; `reason` (free text, the longest) last. */
const COLUMNS: ReadonlyArray<[string, (event: AuditEventView) => string | number | undefined]> = [
  ["id", (e) => e.id],
  ["at", (e) => e.at],
  ["type", (e) => e.type],
  ["requestId", (e) => e.requestId],
  ["token", (e) => e.token],
  ["kind", (e) => e.kind],
  ["route", (e) => e.route],
  ["channel", (e) => e.channel],
  ["personId", (e) => e.person?.id],
  ["personName", (e) => e.person?.name],
  ["status", (e) => e.status],
  ["approvals", (e) => e.approvals?.count],
  ["quorum", (e) => e.approvals?.quorum],
  ["reason", (e) => e.reason],
];

const FORMULA_START = /^[=+\-@\t\r]/;
const NEEDS_QUOTES = /[",\r\n]/;
// eslint-disable-next-line no-control-regex -- the control characters are what this replaces
const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/g;

export function csvHeader(): string {
  return COLUMNS.map(([name]) => name).join(",");
}

/** One event's row, without the line break. */
export function csvRow(event: AuditEventView): string {
  return COLUMNS.map(([, value]) => csvField(value(event))).join(",");
}

export function csvField(value: string | number | undefined): string {
  if (value === undefined) return "";
  // CR is kept (quoted below); every other hidden character left is marked.
  let text = String(value)
    .replace(CONTROL, "\uFFFD")
    .replace(/[^\r]+/g, visibleText);
  if (FORMULA_START.test(text)) text = `'${text}`;
  return NEEDS_QUOTES.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}
