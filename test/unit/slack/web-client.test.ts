/**
 * The relay's WebClient (src/slack/web-client.ts): a message update goes to
 * Slack as one JSON body (the SDK handed a placeholder, its queue, errors and
 * result kept); other calls' structured arguments reach Slack exactly as the
 * SDK would send them, but are JSON-encoded once before the SDK sees them
 * (which would otherwise copy the whole tree for a debug line); and every call
 * is counted when a recorder is given.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { webApi } from "@slack/bolt";
import { silentLogger } from "../../../src/logger.js";
import { createSlackClient } from "../../../src/slack/app.js";
import { jsonBody, RelayWebClient } from "../../../src/slack/web-client.js";
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

  it("hands the SDK other calls' structured arguments already JSON-encoded, and leaves the caller's object alone", async () => {
    const handed = vi.spyOn(webApi.WebClient.prototype, "apiCall");
    const client = createSlackClient({ botToken: BOT_TOKEN, apiUrl: slack.url, logger: silentLogger });
    const args = { channel: "C1", text: "Deploy?", blocks: BLOCKS, metadata: METADATA };
    await client.chat.postMessage(args);
    expect(handed).toHaveBeenCalledWith("chat.postMessage", {
      channel: "C1",
      text: "Deploy?",
      blocks: JSON.stringify(BLOCKS),
      metadata: JSON.stringify(METADATA),
    });
    expect(args.blocks).toBe(BLOCKS);
    expect(slack.callsTo("chat.postMessage")[0]!.args).toMatchObject({ channel: "C1", text: "Deploy?", blocks: BLOCKS, metadata: METADATA });
  });

  it("sends a message update as one JSON body with the bot token as a Bearer header, the SDK handed a placeholder", async () => {
    const sent: Array<{ url: string; init: Parameters<webApi.FetchFunction>[1] }> = [];
    const handed = vi.spyOn(webApi.WebClient.prototype, "apiCall");
    const client = new RelayWebClient(undefined, BOT_TOKEN, {
      slackApiUrl: slack.url,
      logger: silentLogger as never,
      retryConfig: { retries: 0 },
      rejectRateLimitedCalls: true,
      fetch: (url, init) => {
        sent.push({ url: String(url), init });
        return fetch(url, init as RequestInit);
      },
    });
    const args = { channel: "C1", ts: "1.000001", text: "Deploy?", blocks: BLOCKS, metadata: METADATA, thread_ts: undefined, link_names: null };
    await client.apiCall("chat.update", args);
    expect(sent).toHaveLength(1);
    expect(sent[0]!.url).toBe(`${slack.url}chat.update`);
    expect(sent[0]!.init!.headers).toMatchObject({ "Content-Type": "application/json; charset=utf-8", Authorization: `Bearer ${BOT_TOKEN}` });
    expect(JSON.parse(String(sent[0]!.init!.body))).toEqual({ channel: "C1", ts: "1.000001", text: "Deploy?", blocks: BLOCKS, metadata: METADATA });
    expect(handed.mock.calls[0]![1]).toEqual({ relay_json_body: 1 });
    expect(slack.callsTo("chat.update")[0]).toMatchObject({ args: { channel: "C1", ts: "1.000001", text: "Deploy?", blocks: BLOCKS, metadata: METADATA } });
    expect(slack.problems).toEqual([]);
  });

  it("keeps each update's own body when several are in flight, and none once they end, refused or not", async () => {
    const client = createSlackClient({ botToken: BOT_TOKEN, apiUrl: slack.url, logger: silentLogger });
    slack.refuse("chat.update", 1, { status: 429, retryAfterSeconds: 7 });
    const texts = ["a", "b", "c", "d"];
    const settled = await Promise.allSettled(
      texts.map((text) => client.chat.update({ channel: "C1", ts: `1.00000${text.charCodeAt(0)}`, text, blocks: BLOCKS })),
    );
    const refused = settled.filter((s) => s.status === "rejected").map((s) => (s as PromiseRejectedResult).reason as webApi.WebAPIRateLimitedError);
    expect(refused.map((e) => [e.code, e.retryAfter])).toEqual([["slack_webapi_rate_limited_error", 7]]);
    const got = slack.callsTo("chat.update").map((call) => `${String(call.args.ts)} ${String(call.args.text)}`);
    expect(got.sort()).toEqual(texts.map((text) => `1.00000${text.charCodeAt(0)} ${text}`).sort());
    expect((client as unknown as { jsonBodies: Map<string, string> }).jsonBodies.size).toBe(0);
    slack.answer("chat.update", () => ({ ok: false, error: "message_not_found" }));
    await expect(client.chat.update({ channel: "C1", ts: "1.000001", text: "x" })).rejects.toMatchObject({
      code: "slack_webapi_platform_error",
      data: { ok: false, error: "message_not_found" },
    });
  });

  it("leaves out null and undefined arguments as the SDK does, and nested nulls in", () => {
    expect(jsonBody({ a: 1, b: null, c: undefined, d: { e: null } })).toBe('{"a":1,"d":{"e":null}}');
    const args = { a: "x" };
    expect(jsonBody(args)).toBe('{"a":"x"}');
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
