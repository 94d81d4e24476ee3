/**
 * The listeners' routing constraints (exactly these ids, anything but these
 * ids) and the store budget a listener gives the store before it acks.
 */
import { describe, expect, it } from "vitest";
import { noneOf, oneOf, withinBudget } from "../../../../src/slack/listeners/context.js";

describe("routing constraints", () => {
  it("oneOf matches exactly the given ids, not their prefixes, extensions or look-alikes", () => {
    const matcher = oneOf(["relay_allow", "relay_deny"]);
    expect(["relay_allow", "relay_deny"].map((id) => matcher.test(id))).toEqual([true, true]);
    expect(["relay_allo", "relay_allow_x", "xrelay_deny", "relay.deny", ""].map((id) => matcher.test(id))).toEqual([false, false, false, false, false]);
  });

  it("noneOf matches every id but the given ones", () => {
    const matcher = noneOf(["relay_allow", "relay_deny"]);
    expect(["relay_allow", "relay_deny"].map((id) => matcher.test(id))).toEqual([false, false]);
    expect(["relay_allow_x", "someone_elses_button", "relay_denyx", ""].map((id) => matcher.test(id))).toEqual([true, true, true, true]);
  });

  it("characters with a meaning in regular expressions are matched literally", () => {
    expect(oneOf(["a.b"]).test("axb")).toBe(false);
    expect(oneOf(["a.b"]).test("a.b")).toBe(true);
    expect(noneOf(["a.b"]).test("axb")).toBe(true);
  });
});

describe("withinBudget", () => {
  it("gives the value of a task that settles in time", async () => {
    expect(await withinBudget(Promise.resolve(42), 100)).toEqual({ ok: true, value: 42 });
  });

  it("reports a task that throws as an error, without throwing", async () => {
    const error = new Error("store down");
    expect(await withinBudget(Promise.reject(error), 100)).toEqual({ ok: false, reason: "error", error });
  });

  it("stops waiting for a task still running when the budget runs out", async () => {
    const started = Date.now();
    expect(await withinBudget(new Promise(() => undefined), 30)).toEqual({ ok: false, reason: "timeout" });
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it("a spent budget gives up at once", async () => {
    expect(await withinBudget(new Promise(() => undefined), -5)).toEqual({ ok: false, reason: "timeout" });
  });
});
