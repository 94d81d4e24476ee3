import { webApi } from "@slack/bolt";
import { describe, expect, it } from "vitest";
import { backoffDelay, classifySlackError } from "../../../src/slack/retry.js";

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
