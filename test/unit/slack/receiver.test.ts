/**
 * The relay's Slack HTTP receiver (src/slack/receiver.ts), on a real loopback
 * HTTP server with a Bolt App behind it: a signed interaction reaches the
 * listeners parsed once, and what Bolt's HTTPReceiver refuses is still
 * refused: a wrong or missing signature, a stale timestamp, a signed body
 * replayed under a new timestamp or changed after signing (401, nothing
 * dispatched), a body that is not JSON (400); ssl_check and url_verification
 * are answered as Bolt answers them.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { App, LogLevel, type BlockAction } from "@slack/bolt";
import { boltLogger } from "../../../src/slack/app.js";
import { SlackHttpReceiver } from "../../../src/slack/receiver.js";
import { silentLogger } from "../../../src/logger.js";
import { blockAction, sign, SIGNING_SECRET } from "../../helpers/slack.js";

let server: Server;
let url: string;
let seen: unknown[];

beforeEach(async () => {
  seen = [];
  const receiver = new SlackHttpReceiver({ signingSecret: SIGNING_SECRET, logger: boltLogger(silentLogger, LogLevel.ERROR) });
  const app = new App({ receiver, authorize: async () => ({ botToken: "xoxb-test" }), logLevel: LogLevel.ERROR, logger: boltLogger(silentLogger) });
  app.action<BlockAction>({ type: "block_actions" }, async ({ ack, body }) => {
    seen.push(body);
    await ack();
  });
  app.event("app_mention", async ({ event }) => void seen.push(event));
  server = createServer(receiver.requestListener);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/slack/events`;
});

afterEach(async () => {
  await new Promise((resolve) => server.close(resolve));
});

const now = () => Math.floor(Date.now() / 1000);
const form = (payload: unknown) => new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
const click = blockAction({ actionId: "relay_step_yes", value: '{"r":"req-1"}' });

async function post(body: string, headers: Record<string, string>, type = "application/x-www-form-urlencoded") {
  const response = await fetch(url, { method: "POST", body, headers: { "content-type": type, ...headers } });
  return { status: response.status, text: await response.text() };
}

function signed(body: string, timestamp = now()) {
  return { "x-slack-request-timestamp": String(timestamp), "x-slack-signature": sign(body, SIGNING_SECRET, timestamp) };
}

describe("the Slack HTTP receiver", () => {
  it("hands a signed click to the listeners, parsed, and answers with the ack", async () => {
    const body = form(click);
    expect(await post(body, signed(body))).toEqual({ status: 200, text: "" });
    expect(seen).toEqual([click]);
  });

  it("hands a signed Events API body (JSON) to the listeners", async () => {
    const event = { type: "event_callback", team_id: "T1", event: { type: "app_mention", user: "U1", text: "hi", channel: "C1", ts: "1.2" } };
    const body = JSON.stringify(event);
    expect((await post(body, signed(body), "application/json")).status).toBe(200);
    await expect.poll(() => seen).toEqual([event.event]);
  });

  it("refuses with 401 a wrong signature, another secret's, and none at all", async () => {
    const body = form(click);
    const timestamp = String(now());
    expect((await post(body, { "x-slack-request-timestamp": timestamp, "x-slack-signature": "v0=deadbeef" })).status).toBe(401);
    expect((await post(body, { "x-slack-request-timestamp": timestamp, "x-slack-signature": sign(body, "another-secret", now()) })).status).toBe(401);
    expect((await post(body, { "x-slack-request-timestamp": timestamp })).status).toBe(401);
    expect((await post(body, { "x-slack-signature": sign(body) })).status).toBe(401);
    expect(seen).toEqual([]);
  });

  it("refuses with 401 a correctly signed body more than 5 minutes old", async () => {
    const body = form(click);
    expect((await post(body, signed(body, now() - 6 * 60))).status).toBe(401);
    expect(seen).toEqual([]);
  });

  it("refuses with 401 a signed body replayed under a new timestamp, and one changed after signing", async () => {
    const body = form(click);
    const old = now() - 6 * 60;
    const replayed = { "x-slack-request-timestamp": String(now()), "x-slack-signature": sign(body, SIGNING_SECRET, old) };
    expect((await post(body, replayed)).status).toBe(401);
    const changed = form({ ...click, user: { ...click.user, id: "U0MALLORY" } });
    expect((await post(changed, signed(body))).status).toBe(401);
    expect(seen).toEqual([]);
  });

  it("answers a signed body that is not JSON with 400", async () => {
    const body = "payload=not%20json";
    expect((await post(body, signed(body))).status).toBe(400);
    expect(seen).toEqual([]);
  });

  it("answers Slack's unsigned ssl_check with 200, and dispatches nothing smuggled with it", async () => {
    const body = `ssl_check=1&${form(click)}`;
    expect(await post(body, {})).toEqual({ status: 200, text: "" });
    expect(seen).toEqual([]);
  });

  it("answers a signed url_verification with its challenge", async () => {
    const body = JSON.stringify({ type: "url_verification", challenge: "c-123" });
    const response = await post(body, signed(body), "application/json");
    expect(response).toEqual({ status: 200, text: '{"challenge":"c-123"}' });
  });
});
