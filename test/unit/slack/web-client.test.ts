/**
 * The relay's WebClient (src/slack/web-client.ts): structured arguments reach
 * Slack exactly as the SDK would send them, but are JSON-encoded once before
 * the SDK sees them (which would otherwise copy the whole tree for a debug
 * line), and every call is counted when a recorder is given.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { webApi } from "@slack/bolt";
import { silentLogger } from "../../../src/logger.js";
import { createSlackClient } from "../../../src/slack/app.js";
import { BOT_TOKEN, startSlackWebApi, type SlackWebApiStandIn } from "../../helpers/slack-web-api.js";

const BLOCKS = [
  { type: "section", text: { type: "mrkdwn", text: "*Deploy* to production?" } },
  { type: "context", elements: [{ type: "mrkdwn", text: "Answered by <@U1> — yes" }] },
];
const METADATA = { event_type: "approval_request", event_payload: { id: "req-1" } };

describe("the relay's WebClient", () => {
  let slack: SlackWebApiStandIn;
  beforeEach(async () => {
    slack = await startSlackWebApi();
  });
  afterEach(async () => {
    vi.restoreAllMocks();
    await slack.close();
  });

  it("sends a message update's blocks and metadata as Slack receives them from the SDK", async () => {
    const client = createSlackClient({ botToken: BOT_TOKEN, apiUrl: slack.url, logger: silentLogger });
    await client.chat.update({ channel: "C1", ts: "1.000001", text: "Deploy?", blocks: BLOCKS, metadata: METADATA });
    const [call] = slack.callsTo("chat.update");
    expect(call!.args).toMatchObject({ channel: "C1", ts: "1.000001", text: "Deploy?", blocks: BLOCKS, metadata: METADATA });
    expect(slack.problems).toEqual([]);
  });

  it("hands the SDK structured arguments already JSON-encoded, and leaves the caller's object alone", async () => {
    const handed = vi.spyOn(webApi.WebClient.prototype, "apiCall");
    const client = createSlackClient({ botToken: BOT_TOKEN, apiUrl: slack.url, logger: silentLogger });
    const args = { channel: "C1", ts: "1.000001", text: "Deploy?", blocks: BLOCKS, metadata: METADATA };
    await client.chat.update(args);
    expect(handed).toHaveBeenCalledWith("chat.update", {
      channel: "C1",
      ts: "1.000001",
      text: "Deploy?",
      blocks: JSON.stringify(BLOCKS),
      metadata: JSON.stringify(METADATA),
    });
    expect(args.blocks).toBe(BLOCKS);
  });

  it("counts each call by method and outcome when given a recorder", async () => {
    const recorded: string[] = [];
    const client = createSlackClient({ botToken: BOT_TOKEN, apiUrl: slack.url, logger: silentLogger, onCall: (m, o) => recorded.push(`${m} ${o}`) });
    slack.refuse("chat.update", 1, { status: 503 });
    await expect(client.chat.update({ channel: "C1", ts: "1.000001", text: "x", blocks: BLOCKS })).rejects.toThrow();
    await client.chat.update({ channel: "C1", ts: "1.000001", text: "x", blocks: BLOCKS });
    expect(recorded).toEqual(["chat.update error", "chat.update ok"]);
  });
});
