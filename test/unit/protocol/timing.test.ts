import { describe, expect, it } from "vitest";
import { Backoff, retryDelayMs, settleBefore } from "../../../src/protocol/timing.js";

describe("Backoff", () => {
  it("doubles from the first delay up to the cap, each drawn from its upper half", () => {
    const low = new Backoff(250, 1000, () => 0);
    expect([low.next(), low.next(), low.next(), low.next()]).toEqual([125, 250, 500, 500]);
    const high = new Backoff(250, 1000, () => 0.999_999);
    expect([high.next(), high.next(), high.next()]).toEqual([250, 500, 1000]);
  });

  it("is the same sequence as retryDelayMs, and starts over after reset", () => {
    const backoff = new Backoff(1000, 300_000, () => 0.5);
    const delays = [1, 2, 3].map(() => backoff.next());
    expect(delays).toEqual([1, 2, 3].map((n) => retryDelayMs(n, 1000, 300_000, () => 0.5)));
    backoff.reset();
    expect(backoff.next()).toBe(delays[0]);
  });

  it("waits at least a Retry-After, and never more than a minute", () => {
    expect(new Backoff(250, 10_000, () => 0).next(3000)).toBe(3000);
    expect(new Backoff(250, 10_000, () => 0).next(3_600_000)).toBe(60_000);
  });
});

describe("settleBefore", () => {
  it("gives the task's value when it settles first", async () => {
    await expect(settleBefore(Promise.resolve("done"), { ms: 1000 }, () => "late")).resolves.toBe("done");
    await expect(settleBefore(Promise.reject(new Error("broke")), { ms: 1000 }, () => "late")).rejects.toThrow("broke");
  });

  it("gives what the fallback returns when the time runs out first", async () => {
    const never = new Promise<string>(() => undefined);
    await expect(settleBefore(never, { ms: 10 }, () => "late")).resolves.toBe("late");
  });

  it("rejects with what the fallback throws when the signal aborts first, at once when it already has", async () => {
    const never = new Promise<string>(() => undefined);
    const controller = new AbortController();
    const pending = settleBefore(never, { signal: controller.signal }, () => {
      throw new Error("aborted");
    });
    controller.abort();
    await expect(pending).rejects.toThrow("aborted");
    await expect(settleBefore(never, { signal: controller.signal }, () => "gone")).resolves.toBe("gone");
  });

  it("without a cutoff, is the task itself", async () => {
    const task = Promise.resolve(1);
    expect(settleBefore(task, {}, () => 2)).toBe(task);
  });
});
