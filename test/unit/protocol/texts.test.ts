import { describe, expect, it } from "vitest";
import { formatDuration, notAnsweredText } from "../../../src/protocol/texts.js";

describe("formatDuration", () => {
  it("names hours, minutes and seconds in words", () => {
    expect([1, 45, 60, 595, 3600, 5400, 86_395, 0].map(formatDuration)).toEqual([
      "1 second",
      "45 seconds",
      "1 minute",
      "9 minutes 55 seconds",
      "1 hour",
      "1 hour 30 minutes",
      "23 hours 59 minutes 55 seconds",
      "0 seconds",
    ]);
  });
});

describe("notAnsweredText", () => {
  it("says how long people had when no one answered, and what happened instead", () => {
    expect(notAnsweredText({ status: "expired", seconds: 600 })).toBe("No one answered in Slack within 10 minutes.");
    expect(notAnsweredText({ status: "expired", seconds: 595 }, "so the tool call was denied")).toBe(
      "No one answered in Slack within 9 minutes 55 seconds, so the tool call was denied.",
    );
  });

  it("gives the reason of a cancel when there is one", () => {
    expect(notAnsweredText({ status: "cancelled", reason: "Claude Code closed the connection" }, "so the step was not run")).toBe(
      "The request was cancelled (Claude Code closed the connection), so the step was not run.",
    );
    expect(notAnsweredText({ status: "cancelled" })).toBe("The request was cancelled before anyone answered in Slack.");
  });

  it("gives Slack's error when the request could not be posted", () => {
    expect(notAnsweredText({ status: "failed", error: "not_in_channel" })).toBe("The request could not be posted to Slack (not_in_channel).");
    expect(notAnsweredText({ status: "failed" })).toBe("The request could not be posted to Slack.");
  });

  it("says 'the time allowed' when the time is not known", () => {
    expect(notAnsweredText({ status: "expired", seconds: Number.NaN })).toBe("No one answered in Slack within the time allowed.");
  });
});
