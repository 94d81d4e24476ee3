/**
 * The pure parts of `approval-relay audit`: what --since accepts, and how a
 * CSV field is escaped (RFC 4180 quoting, and a leading ' against formulas).
 */
import { describe, expect, it } from "vitest";
import { csvField } from "../../../src/cli/audit-csv.js";
import { parseSince } from "../../../src/cli/audit.js";

const NOW = Date.parse("2026-12-01T12:00:00Z");

describe("--since", () => {
  it.each([
    ["30m", "2026-12-01T11:30:00.000Z"],
    ["24h", "2026-11-30T12:00:00.000Z"],
    ["7d", "2026-11-24T12:00:00.000Z"],
    ["2w", "2026-11-17T12:00:00.000Z"],
    ["90s", "2026-12-01T11:58:30.000Z"],
    ["2026-12-01T09:00:00Z", "2026-12-01T09:00:00.000Z"],
    ["2026-12-01T10:00:00.250+01:00", "2026-12-01T09:00:00.250Z"],
    ["2026-12-01", "2026-12-01T00:00:00.000Z"],
  ])("%s → %s", (value, iso) => {
    expect(parseSince(value, NOW)).toBe(iso);
  });

  it.each(["yesterday", "24", "h", "1.5h", "-1h", "24 h", "2026-13-01", "2026-12-01T25:00:00Z", "1e3h", ""])("refuses %j", (value) => {
    expect(parseSince(value, NOW)).toBeNull();
  });
});

describe("CSV fields", () => {
  it.each([
    [undefined, ""],
    [2, "2"],
    ["created", "created"],
    ["a, b", '"a, b"'],
    ['say "no"', '"say ""no"""'],
    ["two\nlines", '"two\nlines"'],
    ["carriage\rreturn", '"carriage\rreturn"'],
    ["=1+1", "'=1+1"],
    ["+1", "'+1"],
    ["-1", "'-1"],
    ["@SUM(A1)", "'@SUM(A1)"],
    ["\tindented", "'\tindented"],
    ['=HYPERLINK("x"), y', `"'=HYPERLINK(""x""), y"`],
    ["a=b", "a=b"],
    ["red \u001b[31malert\u001b[0m", "red \uFFFD[31malert\uFFFD[0m"],
    ["nul\u0000 and del\u007f", "nul\uFFFD and del\uFFFD"],
    ["echo cleanup \u202E; rm -rf ~ #", "echo cleanup ⟨U+202E⟩; rm -rf ~ #"],
    ["zero\u200bwidth\r\nline", '"zero⟨U+200B⟩width\r\nline"'],
  ])("%j → %j", (value, field) => {
    expect(csvField(value)).toBe(field);
  });
});
