import { webApi } from "@slack/bolt";
import { describe, expect, it } from "vitest";
import { silentLogger } from "../../../src/logger.js";
import { PermanentDeliveryError } from "../../../src/requests/service.js";
import { backoffDelay, classifySlackError, withSlackRetry } from "../../../src/slack/retry.js";

const platform = (error: string) => new webApi.WebAPIPlatformError({ ok: false, error });
const http = (status: number) => new webApi.WebAPIHTTPError(status, "status", {}, "");

describe("classifying Slack errors", () => {
  it("a rate limit is transient and carries Retry-After in milliseconds", () => {
    expect(classifySlackError(new webApi.WebAPIRateLimitedError(7))).toEqual({ kind: "transient", code: "ratelimited", retryAfterMs: 7000 });
  });

  it("a network failure is transient", () => {
    expect(classifySlackError(new webApi.WebAPIRequestError(new Error("ECONNRESET")))).toEqual({ kind: "transient", code: "request_error" });
  });

  it.each([[500], [502], [503], [504], [408]])("HTTP %i is transient", (status) => {
    expect(classifySlackError(http(status))).toEqual({ kind: "transient", code: `http_${status}` });
  });

  it.each([[400], [403], [404], [410]])("HTTP %i is permanent", (status) => {
    expect(classifySlackError(http(status))).toEqual({ kind: "permanent", code: `http_${status}` });
  });

  it.each([["internal_error"], ["fatal_error"], ["service_unavailable"], ["request_timeout"], ["ratelimited"]])("platform error %s is transient", (code) => {
    expect(classifySlackError(platform(code))).toEqual({ kind: "transient", code });
  });

  it.each([
    ["channel_not_found"],
    ["not_in_channel"],
    ["invalid_blocks"],
    ["msg_too_long"],
    ["invalid_auth"],
    ["account_inactive"],
    ["is_archived"],
    ["message_not_found"],
  ])("platform error %s is permanent", (code) => {
    expect(classifySlackError(platform(code))).toEqual({ kind: "permanent", code });
  });

  it("an error that is not one of Slack's coded errors is retried (the deadline bounds it)", () => {
    expect(classifySlackError(new Error("Retry header did not contain a valid timeout"))).toEqual({ kind: "transient", code: "Error" });
    expect(classifySlackError("weird")).toEqual({ kind: "transient", code: "unknown_error" });
  });
});

describe("backoff", () => {
  it("doubles from 0.5 s and stops at 30 s, jittered between half and all of the step", () => {
    const top = { random: () => 0.999999 };
    const bottom = { random: () => 0 };
    expect([1, 2, 3, 4, 5, 6, 7, 8].map((n) => backoffDelay(n, top))).toEqual([500, 1000, 2000, 4000, 8000, 16000, 30000, 30000]);
    expect([1, 2, 7].map((n) => backoffDelay(n, bottom))).toEqual([250, 500, 15000]);
  });
});

describe("retrying a Slack call", () => {
  function clock() {
    let t = 0;
    const sleeps: number[] = [];
    return {
      now: () => t,
      sleep: async (ms: number) => {
        sleeps.push(ms);
        t += ms;
      },
      sleeps,
    };
  }

  function failing(...errors: unknown[]) {
    let calls = 0;
    const call = async () => {
      const error = errors[calls];
      calls += 1;
      if (error !== undefined) throw error;
      return "posted";
    };
    return { call, calls: () => calls };
  }

  it("retries transient failures with growing waits, then returns the result", async () => {
    const c = clock();
    const f = failing(http(503), platform("internal_error"), new webApi.WebAPIRequestError(new Error("reset")));
    const result = await withSlackRetry(f.call, { deadline: 60_000, what: "test", logger: silentLogger, random: () => 0.999999, ...c });
    expect(result).toBe("posted");
    expect(f.calls()).toBe(4);
    expect(c.sleeps).toEqual([500, 1000, 2000]);
  });

  it("waits at least as long as Slack's Retry-After", async () => {
    const c = clock();
    const f = failing(new webApi.WebAPIRateLimitedError(3));
    await withSlackRetry(f.call, { deadline: 60_000, what: "test", logger: silentLogger, random: () => 0, ...c });
    expect(c.sleeps).toEqual([3000]);
  });

  it("a permanent error stops at once with Slack's error code", async () => {
    const c = clock();
    const f = failing(platform("channel_not_found"));
    const attempt = withSlackRetry(f.call, { deadline: 60_000, what: "test", logger: silentLogger, ...c });
    await expect(attempt).rejects.toEqual(new PermanentDeliveryError("channel_not_found"));
    expect(f.calls()).toBe(1);
    expect(c.sleeps).toEqual([]);
  });

  it("gives up when the next attempt would start after the deadline", async () => {
    const c = clock();
    const f = failing(...Array.from({ length: 100 }, () => http(500)));
    const attempt = withSlackRetry(f.call, { deadline: 5_000, what: "test", logger: silentLogger, random: () => 0.999999, ...c });
    await expect(attempt).rejects.toBeInstanceOf(PermanentDeliveryError);
    await expect(attempt).rejects.toMatchObject({ reason: "http_500 (gave up after 4 attempts)" });
    expect(c.sleeps).toEqual([500, 1000, 2000]);
    expect(c.now()).toBeLessThanOrEqual(5_000);
  });

  it("a Retry-After beyond the deadline gives up instead of waiting", async () => {
    const c = clock();
    const f = failing(new webApi.WebAPIRateLimitedError(120));
    const attempt = withSlackRetry(f.call, { deadline: 60_000, what: "test", logger: silentLogger, ...c });
    await expect(attempt).rejects.toMatchObject({ reason: "ratelimited (gave up after 1 attempts)" });
    expect(c.sleeps).toEqual([]);
  });
});
