/**
 * Posting requests to Slack through the real messenger and WebClient of a
 * relay built as `npm start` builds it, the Web API played by the stand-in:
 * permanent refusals fail the request with Slack's error, transient ones are
 * retried until the message is posted; /readyz's ping of Slack is cached.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { silentLogger } from "../../../src/logger.js";
import { buildRelay, type Relay } from "../../../src/main.js";
import { relayConfig } from "../../helpers/relay-config.js";
import { startSlackRelay, type SlackRelay } from "../../helpers/slack-relay.js";
import { BOT_TOKEN, CHANNEL, MESSAGE_TS, SIGNING_SECRET } from "../../helpers/slack.js";
import { SlackScript } from "../../helpers/slack-script.js";
import { startSlackWebApi } from "../../helpers/slack-web-api.js";
import { ALICE } from "../../fixtures/people.js";

const stepGate = { kind: "step_gate", toolName: "Bash", input: { command: "ls" } };

describe("posting a request", () => {
  let relay: SlackRelay;
  beforeEach(async () => {
    relay = await startSlackRelay();
  });
  afterEach(async () => {
    await relay.close();
    expect(relay.unexpected).toEqual([]);
  });

  it.each([["channel_not_found"], ["not_in_channel"], ["invalid_blocks"], ["is_archived"]])(
    "when Slack refuses chat.postMessage with %s, the request fails with that error and is not retried",
    async (error) => {
      relay.api.on("chat.postMessage", { ok: false, error });
      const record = await relay.create(stepGate);
      expect(record.status).toBe("failed");
      expect(record.error).toBe(error);
      expect(relay.api.callsTo("chat.postMessage")).toHaveLength(1);
      expect(relay.sleeps).toEqual([]);
      relay.api.done();
    },
  );

  it("after a 429 with Retry-After, it waits that long and posts once", async () => {
    relay.api.on("chat.postMessage", { status: 429, headers: { "retry-after": "3" } }).onPost();
    const record = await relay.create(stepGate);
    expect(record.status).toBe("pending");
    expect(record.slack).toEqual({ channel: CHANNEL, ts: MESSAGE_TS });
    // The pause is measured from when Slack answered, so the sleep may start a millisecond or two later.
    expect(relay.sleeps).toEqual([expect.any(Number)]);
    expect(relay.sleeps[0]).toBeGreaterThan(2900);
    expect(relay.sleeps[0]).toBeLessThanOrEqual(3000);
    expect(relay.api.callsTo("chat.postMessage")).toHaveLength(2);
    relay.api.done();
  });

  it.each([
    ["an HTTP 500", { status: 500, body: "oops" }],
    ["an HTTP 503", { status: 503 }],
    ["Slack's internal_error", { ok: false, error: "internal_error" }],
    ["Slack's service_unavailable", { ok: false, error: "service_unavailable" }],
  ])("after %s, it looks the channel's history up for the message, finds none, posts again and the message is posted", async (_label, failure) => {
    relay.api.on("chat.postMessage", failure).onHistory([], 2).onPost();
    const record = await relay.create(stepGate);
    expect(record.status).toBe("pending");
    expect(record.slack).toEqual({ channel: CHANNEL, ts: MESSAGE_TS });
    expect(relay.sleeps).toHaveLength(1);
    expect(relay.api.callsTo("conversations.history")[0]?.args).toMatchObject({ channel: CHANNEL, include_all_metadata: "true" });
    expect(relay.api.callsTo("chat.postMessage").map((call) => call.args.metadata)).toEqual([
      { event_type: "approval_relay_request", event_payload: { request_id: record.id } },
      { event_type: "approval_relay_request", event_payload: { request_id: record.id } },
    ]);
    relay.api.done();
  });

  it("when Slack stays down until the request's deadline, the request is never failed: it expires saying Slack did not take it", async () => {
    relay.api.on("chat.postMessage", { status: 503 }, 40).onHistory([], 41);
    const created = await relay.create({ ...stepGate, timeoutSeconds: 120 });
    expect(created.status).toBe("pending");
    expect(relay.sleeps.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(120_000);
    expect(Math.max(...relay.sleeps)).toBeLessThanOrEqual(30_000);
    relay.advance(120_000);
    const record = await relay.service.getExpiringIfOverdue(created.id);
    expect(record?.status).toBe("expired");
    expect(record?.error).toBe("Slack did not take the message (http_503): the message could not be posted to Slack before the request's deadline.");
    expect(record?.slack).toBeUndefined();
  });

  it("when Slack keeps rate limiting until the request's deadline, it expires with an error saying Slack was rate limiting", async () => {
    relay.api.on("chat.postMessage", { status: 429, headers: { "retry-after": "30" } }, 4);
    const created = await relay.create({ ...stepGate, timeoutSeconds: 100 });
    expect(created.status).toBe("pending");
    expect(relay.api.callsTo("chat.postMessage")).toHaveLength(4);
    // Each wait is the Retry-After, less the real milliseconds that pass between the 429 and the wait on a busy machine.
    expect(relay.sleeps).toHaveLength(3);
    for (const ms of relay.sleeps) {
      expect(ms).toBeGreaterThan(29_500);
      expect(ms).toBeLessThanOrEqual(30_000);
    }
    relay.advance(10_000);
    const record = await relay.service.getExpiringIfOverdue(created.id);
    expect(record).toMatchObject({
      status: "expired",
      error: "Slack was rate limiting: the message could not be posted to Slack before the request's deadline.",
    });
    relay.api.done();
  });

  it("the messenger refuses a Slack answer without channel or ts as a permanent failure", async () => {
    relay.api.on("chat.postMessage", { ok: true });
    const record = await relay.create(stepGate);
    expect(record.status).toBe("failed");
    relay.api.done();
  });

  it("a failing message update is retried later by the sweep and never changes the recorded answer", async () => {
    relay.api.onPost().on("chat.update", { ok: false, error: "internal_error" }).on("chat.update");
    const record = await relay.create(stepGate);
    await relay.service.answer(record.id, { reply: "y" }, { id: ALICE.id });
    await relay.settle();
    expect(relay.api.callsTo("chat.update")).toHaveLength(1);
    expect(await relay.service.sweepUpdates()).toBe(0);
    relay.advance(60_000);
    expect(await relay.service.sweepUpdates()).toBe(1);
    await relay.settle();
    expect(relay.api.callsTo("chat.update")).toHaveLength(2);
    expect((await relay.service.get(record.id))?.decision).toStrictEqual({ reply: "y" });
    relay.api.done();
  });
});

describe("readiness ping", () => {
  let api: SlackScript;
  let relay: Relay | undefined;
  beforeEach(async () => {
    api = new SlackScript(await startSlackWebApi());
  });
  afterEach(async () => {
    await relay?.close();
    relay = undefined;
    await api.standIn.close();
    expect(api.unexpected).toEqual([]);
  });

  /** The Slack app of a relay built as `npm start` builds it, its Web API the stand-in, on `clock` when given. */
  async function app(clock?: () => number) {
    const config = relayConfig({ SLACK_BOT_TOKEN: BOT_TOKEN, SLACK_SIGNING_SECRET: SIGNING_SECRET, SLACK_API_URL: api.url });
    relay = await buildRelay(config, { logger: silentLogger, ...(clock ? { now: clock } : {}) });
    return relay.slack!.app;
  }

  it("constructing the app calls nothing; ping() asks auth.test with the bot token at SLACK_API_URL", async () => {
    api.on("auth.test", { ok: true, user_id: "U0BOT", bot_id: "B0BOT" });
    const slack = await app();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(api.standIn.calls).toEqual([]);
    expect(await slack.ping()).toBe(true);
    expect(api.standIn.calls.map((call) => [call.method, call.authorization])).toEqual([["auth.test", `Bearer ${BOT_TOKEN}`]]);
    api.done();
  });

  it("many /readyz probes within 10 s cost one auth.test call; the next one after 10 s asks Slack again", async () => {
    api.on("auth.test", { ok: true, user_id: "U0BOT" }, 2);
    const clock = { t: 1_800_000_000_000 };
    const slack = await app(() => clock.t);
    expect(await Promise.all(Array.from({ length: 20 }, () => slack.ping()))).toEqual(Array(20).fill(true));
    for (let i = 0; i < 30; i += 1) {
      clock.t += 300;
      expect(await slack.ping()).toBe(true);
    }
    expect(api.callsTo("auth.test")).toHaveLength(1);
    clock.t += 1_000;
    expect(await slack.ping()).toBe(true);
    expect(api.callsTo("auth.test")).toHaveLength(2);
    api.done();
  });

  it("a Slack outage is cached too: probes within 10 s do not call auth.test again", async () => {
    api.on("auth.test", { ok: false, error: "invalid_auth" }).on("auth.test", { ok: true });
    const clock = { t: 1_800_000_000_000 };
    const slack = await app(() => clock.t);
    expect(await slack.ping()).toBe(false);
    expect(api.callsTo("auth.test")).toHaveLength(1);
    clock.t += 9_000;
    expect(await slack.ping()).toBe(false);
    expect(api.callsTo("auth.test")).toHaveLength(1);
    clock.t += 1_000;
    expect(await slack.ping()).toBe(true);
    api.done();
  });

  it("ping() is false when Slack rejects the token", async () => {
    api.on("auth.test", { ok: false, error: "invalid_auth" });
    expect(await (await app()).ping()).toBe(false);
    api.done();
  });

  it("ping() is false when Slack does not answer within the ping's 3 s", async () => {
    api.on("auth.test", "hang");
    const slack = await app();
    const started = Date.now();
    expect(await slack.ping()).toBe(false);
    expect(Date.now() - started).toBeLessThan(4500);
    api.done();
  });
});
