/**
 * Socket Mode, the quick start's default: the relay opens a connection
 * through apps.connections.open at SLACK_API_URL (a loopback stand-in),
 * receives envelopes over the WebSocket, acks them, and the waiting agent
 * gets its answer. The relay is built as `npm start` builds it (buildRelay)
 * with an app token; it disconnects cleanly so nothing is left running.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { silentLogger } from "../../../src/logger.js";
import { buildRelay, type Relay } from "../../../src/main.js";
import { CreateRequestBody } from "../../../src/protocol/request-body.js";
import type { RequestService } from "../../../src/requests/service.js";
import type { SlackApp } from "../../../src/slack/app.js";
import { Action, encodeButton, encodeMetadata, Field, View } from "../../../src/slack/ids.js";
import { relayConfig } from "../../helpers/relay-config.js";
import { startSocketModeServer, type SocketModeStandIn } from "../../helpers/socket-mode-server.js";
import { blockAction, BOT_TOKEN, CHANNEL, MESSAGE_TS, messageEvent, state, TEAM_ID, viewSubmission } from "../../helpers/slack.js";
import { ALICE } from "../../fixtures/people.js";

const APP_TOKEN = "xapp-1-A0RELAY-test";

let standIn: SocketModeStandIn;
let relay: Relay;
let slack: SlackApp;
let service: RequestService;

beforeEach(async () => {
  standIn = await startSocketModeServer();
  standIn.answer("chat.postMessage", () => ({ ok: true, channel: CHANNEL, ts: MESSAGE_TS }));
  const config = relayConfig({
    SLACK_BOT_TOKEN: BOT_TOKEN,
    SLACK_APP_TOKEN: APP_TOKEN,
    SLACK_API_URL: standIn.url,
    SLACK_DEFAULT_CHANNEL: CHANNEL,
    RELAY_DEFAULT_TIMEOUT: "600",
  });
  relay = await buildRelay(config, { logger: silentLogger, slack: { homeTeamId: TEAM_ID } });
  ({ service } = relay);
  slack = relay.slack!.app;
  relay.lifecycle.slackStarting();
  await slack.start();
  await standIn.connected();
});

afterEach(async () => {
  await slack.idle();
  await service.idle();
  await relay.close();
  await standIn.disconnected();
  expect(standIn.openConnections).toBe(0);
  await standIn.close();
});

async function create(input: unknown) {
  const { record } = await service.create({ tokenName: "ci-bot", body: CreateRequestBody.parse(input) });
  await service.idle();
  return record;
}

describe("Socket Mode", () => {
  it("connects with the app token through apps.connections.open at SLACK_API_URL, with no HTTP listener", () => {
    expect(slack.mode).toBe("socket");
    expect(slack.requestListener).toBeUndefined();
    const open = standIn.calls.find((call) => call.method === "apps.connections.open");
    expect(open?.authorization).toBe(`Bearer ${APP_TOKEN}`);
  });

  it("when an interactive envelope carries an Allow click, the relay acks it and the waiting agent gets allow", async () => {
    const input = { command: "make deploy" };
    const record = await create({ kind: "permission", toolName: "Bash", input });
    const posted = standIn.calls.find((call) => call.method === "chat.postMessage");
    expect(posted?.authorization).toBe(`Bearer ${BOT_TOKEN}`);
    const waiting = service.wait(record.id, 5000);

    const ack = await standIn.deliver("interactive", blockAction({ actionId: Action.allow, value: encodeButton({ r: record.id }) }));
    expect(ack).toEqual({ envelope_id: "env-1", payload: {} });
    const final = await waiting;
    expect(final?.decision).toStrictEqual({ behavior: "allow", updatedInput: input });
    expect(final?.answeredBy).toEqual({ id: ALICE.id, name: ALICE.name });
    await slack.idle();
    await service.idle();
    expect(standIn.calls.filter((call) => call.method === "chat.update")).toHaveLength(1);
  });

  it("a modal submission with a bad answer is acked with the errors in the ack payload, and nothing is recorded", async () => {
    const record = await create({ kind: "permission", toolName: "Bash", input: { command: "ls" } });
    const ack = await standIn.deliver(
      "interactive",
      viewSubmission({
        callbackId: View.edit,
        privateMetadata: encodeMetadata({ r: record.id, c: CHANNEL, ts: MESSAGE_TS }),
        values: { [Field.editJson.block]: { [Field.editJson.action]: state.text("[]") } },
      }),
    );
    expect(ack.payload).toEqual({ response_action: "errors", errors: { [Field.editJson.block]: expect.any(String) } });
    await slack.idle();
    expect((await service.get(record.id))?.status).toBe("pending");
  });

  it("a thread reply delivered as an events_api envelope answers a step gate", async () => {
    const record = await create({ kind: "step_gate", toolName: "Bash", input: { command: "ls" } });
    const ack = await standIn.deliver("events_api", messageEvent({ text: "q", threadTs: MESSAGE_TS }));
    expect(ack.envelope_id).toBe("env-1");
    expect((await service.wait(record.id, 5000))?.decision).toStrictEqual({ reply: "q" });
  });
});
