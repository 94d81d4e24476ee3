import { describe, expect, it } from "vitest";
import { holdUntil, replyDeadlineSeconds } from "../../../../src/requests/hooks/deadline.js";

describe("replyDeadlineSeconds", () => {
  it("answers S − max(2, min(5, S × 0.1)) seconds into the hook, in whole seconds", () => {
    const table: Array<[number, number]> = [
      [3, 1],
      [4, 2],
      [10, 8],
      [20, 18],
      [25, 22],
      [30, 27],
      [50, 45],
      [60, 55],
      [600, 595],
      [86_400, 86_395],
    ];
    for (const [hookTimeout, reply] of table) expect([hookTimeout, replyDeadlineSeconds(hookTimeout)]).toEqual([hookTimeout, reply]);
  });

  it("always answers at least two seconds before Claude Code's timeout and never later than five seconds before when the timeout is long", () => {
    for (let s = 3; s <= 2000; s += 1) {
      const margin = s - replyDeadlineSeconds(s);
      expect(margin).toBeGreaterThanOrEqual(2);
      expect(replyDeadlineSeconds(s)).toBeGreaterThanOrEqual(1);
      if (s >= 50) expect(margin).toBeLessThan(6);
    }
  });
});

describe("holdUntil", () => {
  it("holds until the request expires", () => {
    expect(holdUntil(1_000_000, 600, 1_000_000 + 595_010)).toBe(1_000_000 + 595_010);
  });

  it("never holds past one second before Claude Code's timeout, even when the request expires later", () => {
    expect(holdUntil(1_000_000, 10, 1_000_000 + 60_000)).toBe(1_000_000 + 9_000);
  });
});
