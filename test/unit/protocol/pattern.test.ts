/**
 * Agent-written patterns against people's text: the whole value must match,
 * invalid patterns are recognised, and a catastrophic pattern times out
 * instead of stalling the relay.
 */
import { describe, expect, it } from "vitest";
import { isValidPattern, matchPattern, PATTERN_BUDGET_MS, PATTERN_TIMEOUT_MS, PatternBudget } from "../../../src/protocol/pattern.js";

describe("isValidPattern", () => {
  it.each(["[A-Z]+-[0-9]+", "\\d{3}", "", "a|b", "(?<year>\\d{4})", "\\p{L}+"])("accepts %j", (pattern) => {
    expect(isValidPattern(pattern)).toBe(true);
  });

  it.each(["(", "[a-", "a{2,1}", "\\", "(?<n>a)(?<n>b)", "\\p{NotAProperty}", "\\q"])("refuses %j", (pattern) => {
    expect(isValidPattern(pattern)).toBe(false);
  });
});

describe("matchPattern", () => {
  it("matches when the whole value matches", () => {
    expect(matchPattern("[A-Z]+-[0-9]+", "OPS-123")).toBe("match");
    expect(matchPattern("\\p{L}+", "Grüße")).toBe("match");
  });

  it("does not match a value that only contains a match", () => {
    expect(matchPattern("[0-9]+", "abc123")).toBe("no_match");
    expect(matchPattern("[0-9]+", "123abc")).toBe("no_match");
    expect(matchPattern("[0-9]+", "12\n34")).toBe("no_match");
  });

  it("anchors every alternative, not just the first and last", () => {
    expect(matchPattern("yes|no", "yes")).toBe("match");
    expect(matchPattern("yes|no", "no")).toBe("match");
    expect(matchPattern("yes|no", "yesno")).toBe("no_match");
    expect(matchPattern("yes|no", "nope")).toBe("no_match");
    expect(matchPattern("yes|no", "eyes")).toBe("no_match");
  });

  it("is case-sensitive, as HTML's pattern attribute", () => {
    expect(matchPattern("[a-z]+", "ABC")).toBe("no_match");
  });

  it("gives the same answer on repeated calls (no state left between matches)", () => {
    for (let i = 0; i < 3; i += 1) {
      expect(matchPattern("a+", "aaa")).toBe("match");
      expect(matchPattern("a+", "b")).toBe("no_match");
    }
  });

  it('stops a catastrophic-backtracking pattern quickly and reports "timeout"', () => {
    const started = performance.now();
    expect(matchPattern("(a+)+$", `${"a".repeat(40)}b`)).toBe("timeout");
    const elapsed = performance.now() - started;
    expect(elapsed).toBeLessThan(500);
    expect(elapsed).toBeGreaterThanOrEqual(PATTERN_TIMEOUT_MS * 0.8);
  });

  it("keeps working normally after a match timed out", () => {
    expect(matchPattern("(a|aa)+", `${"a".repeat(60)}b`)).toBe("timeout");
    expect(matchPattern("(a|aa)+", "aaaa")).toBe("match");
    expect(matchPattern("[0-9]{3}", "123")).toBe("match");
  });
});

describe("PatternBudget", () => {
  const slow = "(a+)+";
  const hostile = `${"a".repeat(40)}b`;

  it("lets many slow matches together run for about the budget, not one time limit each", () => {
    const budget = new PatternBudget();
    const started = performance.now();
    const results = Array.from({ length: 20 }, () => budget.match(slow, hostile));
    const elapsed = performance.now() - started;
    // Without a shared budget, 20 × PATTERN_TIMEOUT_MS = 1 s of stalled event loop.
    expect(elapsed).toBeLessThan(PATTERN_BUDGET_MS + 8 * PATTERN_TIMEOUT_MS);
    expect(results.slice(0, 2)).toEqual(["timeout", "timeout"]);
    expect(results.at(-1)).toBe("over_budget");
    expect(results.every((result) => result === "timeout" || result === "over_budget")).toBe(true);
  });

  it("matches normally while budget is left", () => {
    const budget = new PatternBudget();
    expect(budget.match("[0-9]+", "123")).toBe("match");
    expect(budget.match("[0-9]+", "12a")).toBe("no_match");
  });

  it("refuses every further match once spent, fast ones included", () => {
    const budget = new PatternBudget(PATTERN_TIMEOUT_MS);
    expect(budget.match(slow, hostile)).toBe("timeout");
    expect(budget.match("[0-9]+", "123")).toBe("over_budget");
  });
});
