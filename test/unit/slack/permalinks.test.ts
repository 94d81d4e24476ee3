/**
 * Permalinks built from the workspace URL (src/slack/permalinks.ts): Slack's
 * shape for a message in a channel or a DM, and no link for a channel or a
 * ts of any other shape, so nothing but ids of Slack's own shapes ends up in
 * a link.
 */
import { describe, expect, it } from "vitest";
import { permalinkOf } from "../../../src/slack/permalinks.js";

const BASE = "https://acme.slack.com/";

describe("a permalink", () => {
  it("is the workspace URL, archives, the channel and p with the ts's digits", () => {
    expect(permalinkOf(BASE, { channel: "C0APPROVALS", ts: "1700000000.000100" })).toBe("https://acme.slack.com/archives/C0APPROVALS/p1700000000000100");
    expect(permalinkOf(BASE, { channel: "D0DIRECT01", ts: "1700000000.123456" })).toBe("https://acme.slack.com/archives/D0DIRECT01/p1700000000123456");
  });

  it.each([
    ["a channel that is no channel id", { channel: "<!channel>", ts: "1700000000.000100" }],
    ["a user id as the channel", { channel: "U0ALICE01", ts: "1700000000.000100" }],
    ["a ts without its dot", { channel: "C0APPROVALS", ts: "1700000000000100" }],
    ["a ts with other than six decimals", { channel: "C0APPROVALS", ts: "1700000000.1" }],
    ["a ts carrying more", { channel: "C0APPROVALS", ts: "1700000000.000100|x" }],
  ])("is not built for %s", (_name, ref) => {
    expect(permalinkOf(BASE, ref)).toBeUndefined();
  });
});
