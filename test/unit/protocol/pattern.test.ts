/**
 * Agent-written patterns against people's text: the whole value must match,
 * patterns RE2 cannot run are refused with the reason, and a pattern that
 * backtracks catastrophically in JavaScript's RegExp answers at once.
 */
import { describe, expect, it } from "vitest";
import { isValidPattern, matchPattern, PATTERN_MAX_PROGRAM_SIZE, patternProblem } from "../../../src/protocol/pattern.js";

describe("isValidPattern", () => {
  it.each(["[A-Z]+-[0-9]+", "\\d{3}", "", "a|b", "(?<year>\\d{4})", "(?P<year>\\d{4})", "\\p{L}+", "(?i)abc", "x{998}"])("accepts %j", (pattern) => {
    expect(isValidPattern(pattern)).toBe(true);
  });

  it.each(["(", "[a-", "a{2,1}", "\\", "(?<n>a)(?<n>b)", "\\p{NotAProperty}", "\\q", "(a)\\1", "(?=a)a", "(?<!a)b"])("refuses %j", (pattern) => {
    expect(isValidPattern(pattern)).toBe(false);
  });
});

describe("patternProblem", () => {
  it("says nothing about a pattern RE2 can run", () => {
    expect(patternProblem("[A-Z]+-[0-9]+")).toBeUndefined();
  });

  it.each([
    ["\\1", "(a)\\1"],
    ["\\k", "(?<n>a)\\k<n>"],
  ])("names a backreference (%s) as unsupported", (_, pattern) => {
    expect(patternProblem(pattern)).toMatch(/^pattern uses a backreference \(\\1, \\k<name>\), which RE2 syntax does not support: invalid escape sequence/);
  });

  it.each(["(?=a)a", "(?!a)b", "(?<=a)b", "(?<!a)b"])("names lookaround in %j as unsupported", (pattern) => {
    expect(patternProblem(pattern)).toMatch(/^pattern uses lookaround \(\(\?=, \(\?!, \(\?<=, \(\?<!\), which RE2 syntax does not support: /);
  });

  it("gives RE2's reason for any other syntax error", () => {
    expect(patternProblem("([A-Z]+")).toBe("pattern is not a valid RE2 regular expression: missing closing ): `([A-Z]+`");
    expect(patternProblem("\\u0041")).toBe("pattern is not a valid RE2 regular expression: invalid escape sequence: `\\u`");
  });

  it("refuses a pattern whose program is too large to check quickly, with its size", () => {
    expect(patternProblem(".{0,1000}")).toBe(
      `pattern is too large to check quickly (2002 RE2 instructions, at most ${PATTERN_MAX_PROGRAM_SIZE}): use smaller repeat counts`,
    );
  });
});

describe("matchPattern", () => {
  it("matches when the whole value matches", () => {
    expect(matchPattern("[A-Z]+-[0-9]+", "OPS-123")).toBe(true);
    expect(matchPattern("\\p{L}+", "Grüße")).toBe(true);
  });

  it("does not match a value that only contains a match", () => {
    expect(matchPattern("[0-9]+", "abc123")).toBe(false);
    expect(matchPattern("[0-9]+", "123abc")).toBe(false);
    expect(matchPattern("[0-9]+", "12\n34")).toBe(false);
  });

  it("anchors every alternative, not just the first and last", () => {
    expect(matchPattern("yes|no", "yes")).toBe(true);
    expect(matchPattern("yes|no", "no")).toBe(true);
    expect(matchPattern("yes|no", "yesno")).toBe(false);
    expect(matchPattern("yes|no", "nope")).toBe(false);
    expect(matchPattern("yes|no", "eyes")).toBe(false);
  });

  it("is case-sensitive, as HTML's pattern attribute", () => {
    expect(matchPattern("[a-z]+", "ABC")).toBe(false);
  });

  it("does not match with a pattern it cannot run", () => {
    expect(matchPattern("(a)\\1", "aa")).toBe(false);
  });

  it("answers a pattern that backtracks catastrophically in RegExp at once, and correctly", () => {
    const started = performance.now();
    expect(matchPattern("(a+)+$", `${"a".repeat(20_000)}b`)).toBe(false);
    expect(matchPattern("(a|aa)+", "a".repeat(20_000))).toBe(true);
    expect(matchPattern("(x+x+)+y", "x".repeat(20_000))).toBe(false);
    // JavaScript's RegExp would take longer than the age of the universe on the first; room is left for a loaded machine.
    expect(performance.now() - started).toBeLessThan(3000);
  });

  it("checks a 20,000-character value against a pattern at the size cap quickly", () => {
    const pattern = "(.{0,496})*c"; // 999 instructions: about 60 ms on one idle core
    expect(patternProblem(pattern)).toBeUndefined();
    const started = performance.now();
    expect(matchPattern(pattern, "b".repeat(20_000))).toBe(false);
    expect(matchPattern(pattern, `${"b".repeat(19_999)}c`)).toBe(true);
    expect(performance.now() - started).toBeLessThan(3000); // room for a loaded machine
  });
});
