/**
 * relay_slack_calls_total against Slack's Web API stand-in: the
 * client the relay builds counts every call by method and outcome (ok,
 * ratelimited, error), whatever the method and however it fails, and leaves
 * each error as it was, so the retries still tell a 429 from a refusal.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { RelayMetrics } from "../../../src/http/metrics.js";
import { silentLogger } from "../../../src/logger.js";
import { createSlackClient } from "../../../src/slack/app.js";
import { Action, encodeButton } from "../../../src/slack/ids.js";
import { classifySlackError } from "../../../src/slack/retry.js";
import { ALICE, BOB } from "../../fixtures/people.js";
import { sample } from "../../helpers/metrics.js";
import { startSlackRelay, type SlackRelay } from "../../helpers/slack-relay.js";
import { blockAction, BOT_TOKEN, CHANNEL, MESSAGE_TS } from "../../helpers/slack.js";
import { SlackScript } from "../../helpers/slack-script.js";
import { startSlackWebApi } from "../../helpers/slack-web-api.js";

async function calls(metrics: RelayMetrics, method: string) {
  const text = await metrics.expose();
  const count = (outcome: string) => sample(text, "relay_slack_calls_total", { method, outcome }) ?? 0;
  return { ok: count("ok"), ratelimited: count("ratelimited"), error: count("error") };
}

describe("the counted Web API client", () => {
  let api: SlackScript;
  beforeEach(async () => {
    api = new SlackScript(await startSlackWebApi());
  });
  afterEach(async () => {
    await api.standIn.close();
    expect(api.unexpected).toEqual([]);
  });

  it("counts an accepted call as ok and returns Slack's answer", async () => {
    const metrics = new RelayMetrics();
    api.on("chat.postMessage", { ok: true, channel: CHANNEL, ts: MESSAGE_TS });
    const client = createSlackClient({ botToken: BOT_TOKEN, apiUrl: api.url, logger: silentLogger, onCall: metrics.slackCall });
    expect(await client.chat.postMessage({ channel: CHANNEL, text: "hello" })).toMatchObject({ ok: true, ts: MESSAGE_TS });
    expect(await calls(metrics, "chat.postMessage")).toStrictEqual({ ok: 1, ratelimited: 0, error: 0 });
    api.done();
  });

  it("counts a 429 and Slack's own `ratelimited` as ratelimited, and the retries still read Retry-After", async () => {
    const metrics = new RelayMetrics();
    api.on("chat.update", { status: 429, headers: { "retry-after": "7" } }).on("usergroups.users.list", { ok: false, error: "ratelimited" });
    const client = createSlackClient({ botToken: BOT_TOKEN, apiUrl: api.url, logger: silentLogger, onCall: metrics.slackCall });
    const limited = await client.chat.update({ channel: CHANNEL, ts: MESSAGE_TS, text: "x" }).catch((error: unknown) => error);
    expect(classifySlackError(limited)).toStrictEqual({ kind: "transient", code: "ratelimited", retryAfterMs: 7000 });
    await expect(client.usergroups.users.list({ usergroup: "S0ONCALL1" })).rejects.toThrow("ratelimited");
    expect(await calls(metrics, "chat.update")).toStrictEqual({ ok: 0, ratelimited: 1, error: 0 });
    expect(await calls(metrics, "usergroups.users.list")).toStrictEqual({ ok: 0, ratelimited: 1, error: 0 });
    api.done();
  });

  it("counts a refusal, a 5xx and a network failure as errors, each still classified as before", async () => {
    const metrics = new RelayMetrics();
    api
      .on("views.open", { ok: false, error: "invalid_trigger_id" })
      .on("usergroups.users.list", { status: 503, body: "unavailable" })
      .onDrop("chat.postEphemeral");
    const client = createSlackClient({ botToken: BOT_TOKEN, apiUrl: api.url, logger: silentLogger, onCall: metrics.slackCall });
    const refused = await client.views
      .open({ trigger_id: "trigger-1", view: { type: "modal", title: { type: "plain_text", text: "x" }, blocks: [] } })
      .catch((e: unknown) => e);
    const down = await client.usergroups.users.list({ usergroup: "S0ONCALL1" }).catch((e: unknown) => e);
    const cut = await client.chat.postEphemeral({ channel: CHANNEL, user: ALICE.id, text: "x" }).catch((e: unknown) => e);
    expect([refused, down, cut].map((error) => classifySlackError(error))).toStrictEqual([
      { kind: "permanent", code: "invalid_trigger_id" },
      { kind: "transient", code: "http_503" },
      { kind: "transient", code: "request_error" },
    ]);
    expect(await calls(metrics, "views.open")).toStrictEqual({ ok: 0, ratelimited: 0, error: 1 });
    expect(await calls(metrics, "usergroups.users.list")).toStrictEqual({ ok: 0, ratelimited: 0, error: 1 });
    expect(await calls(metrics, "chat.postEphemeral")).toStrictEqual({ ok: 0, ratelimited: 0, error: 1 });
    api.done();
  });
});

describe("the relay's calls, as a request goes through Slack", () => {
  let relay: SlackRelay | undefined;
  afterEach(async () => {
    await relay?.close();
    expect(relay?.unexpected).toEqual([]);
    relay = undefined;
  });

  it("a post rate-limited then accepted, a modal opened, the message updated and a notice Slack refused are each counted once", async () => {
    const metrics = new RelayMetrics();
    relay = await startSlackRelay({ metrics });
    relay.api
      .on("chat.postMessage", { status: 429, headers: { "retry-after": "1" } })
      .onPost()
      .on("views.open")
      .on("chat.update")
      .on("chat.postEphemeral", { ok: false, error: "user_not_in_channel" });
    const record = await relay.create({ kind: "permission", toolName: "Bash", input: { command: "make deploy" } });
    expect(record.slack).toStrictEqual({ channel: CHANNEL, ts: MESSAGE_TS });
    for (const [actionId, user] of [
      [Action.edit, ALICE],
      [Action.allow, ALICE],
      [Action.deny, BOB],
    ] as const) {
      expect((await relay.post(blockAction({ actionId, value: encodeButton({ r: record.id }), user }))).status).toBe(200);
      await relay.settle();
    }
    expect((await relay.service.get(record.id))?.answeredBy?.id).toBe(ALICE.id);
    expect(await calls(metrics, "chat.postMessage")).toStrictEqual({ ok: 1, ratelimited: 1, error: 0 });
    expect(await calls(metrics, "views.open")).toStrictEqual({ ok: 1, ratelimited: 0, error: 0 });
    expect(await calls(metrics, "chat.update")).toStrictEqual({ ok: 1, ratelimited: 0, error: 0 });
    expect(await calls(metrics, "chat.postEphemeral")).toStrictEqual({ ok: 0, ratelimited: 0, error: 1 });
    relay.api.done();
  });
});
