/**
 * Step gates through the real Bolt HTTP receiver: the Yes / No / Stop
 * buttons and y / yes / n / no / q replies in the message's thread, with
 * chatter, bots, edits and replies elsewhere ignored.
 */
import { describe, expect, it } from "vitest";
import { Action, encodeButton } from "../../../src/slack/ids.js";
import { hasNoButtons, useSlackRelay, type SlackRelay } from "../../helpers/slack-relay.js";
import { blockAction, CHANNEL, MESSAGE_TS, messageEvent, type MessageEventOptions } from "../../helpers/slack.js";
import { ALICE } from "../../fixtures/people.js";

const stepGate = { kind: "step_gate", toolName: "Bash", input: { command: "terraform apply" } };

let relay: SlackRelay;
useSlackRelay((started) => (relay = started));

async function reply(options: MessageEventOptions) {
  const response = await relay.post(messageEvent({ threadTs: MESSAGE_TS, ...options }));
  expect(response.status).toBe(200);
  await relay.settle();
}

describe("step gate buttons", () => {
  it.each([
    [Action.stepYes, "y"],
    [Action.stepNo, "n"],
    [Action.stepStop, "q"],
  ])("when the approver clicks %s, the agent receives reply %s and the buttons go", async (actionId, answer) => {
    relay.api.onPost().on("chat.update");
    const record = await relay.create(stepGate);
    const waiting = relay.service.wait(record.id, 5000);
    const response = await relay.post(blockAction({ actionId, value: encodeButton({ r: record.id }) }));
    expect(response.status).toBe(200);
    expect((await waiting)?.decision).toStrictEqual({ reply: answer });
    await relay.settle();
    expect(hasNoButtons(relay.api.callsTo("chat.update")[0]?.args.blocks)).toBe(true);
    relay.api.done();
  });

  it("a permission button on a step gate is acked and ignored", async () => {
    relay.api.onPost();
    const record = await relay.create(stepGate);
    const response = await relay.post(blockAction({ actionId: Action.allow, value: encodeButton({ r: record.id }) }));
    expect(response.status).toBe(200);
    await relay.settle();
    expect((await relay.service.get(record.id))?.status).toBe("pending");
  });
});

describe("step gate thread replies", () => {
  it.each([
    ["y", "y"],
    ["yes", "y"],
    ["Yes", "y"],
    ["n", "n"],
    ["no", "n"],
    ["q", "q"],
  ])("a reply %j in the thread answers %s", async (text, answer) => {
    relay.api.onPost().on("chat.update");
    const record = await relay.create(stepGate);
    await reply({ text, user: ALICE.id });
    const final = await relay.service.get(record.id);
    expect(final?.decision).toStrictEqual({ reply: answer });
    expect(final?.answeredBy).toEqual({ id: ALICE.id });
    relay.api.done();
  });

  it("chatter, bot messages, edits, top-level messages and other threads change nothing", async () => {
    relay.api.onPost();
    const record = await relay.create(stepGate);
    await reply({ text: "looks risky, let me check" });
    await reply({ text: "nope" });
    await reply({ text: "yes", botId: "B0OTHER" });
    await reply({ text: "yes", subtype: "message_changed" });
    await reply({ text: "yes", threadTs: undefined, ts: "1700000099.000001" });
    await reply({ text: "yes", threadTs: "1600000000.000001" });
    await reply({ text: "yes", channel: "C0ELSEWHERE" });
    expect((await relay.service.get(record.id))?.status).toBe("pending");
    relay.api.done();
  });

  /** A message ts (Slack's time of writing) `ms` after the request ended. */
  const writtenAfterEnd = async (id: string, ms: number) => (((await relay.service.get(id))!.endedAt! + ms) / 1000).toFixed(6);

  it("a reply written after its request ended is ignored silently", async () => {
    relay.api.onPost().on("chat.update");
    const record = await relay.create(stepGate);
    await reply({ text: "n" });
    await reply({ text: "y", ts: await writtenAfterEnd(record.id, 1000) });
    expect((await relay.service.get(record.id))?.decision).toStrictEqual({ reply: "n" });
    expect(relay.api.callsTo("chat.postEphemeral")).toEqual([]);
    expect(relay.api.callsTo("chat.update")).toHaveLength(1);
  });

  it("a reply written before its request ended, arriving after, is told how it ended and changes nothing", async () => {
    relay.api.onPost().on("chat.update").on("chat.postEphemeral");
    const record = await relay.create(stepGate);
    await reply({ text: "n" });
    await reply({ text: "y", ts: await writtenAfterEnd(record.id, -50) });
    expect((await relay.service.get(record.id))?.decision).toStrictEqual({ reply: "n" });
    expect(relay.api.callsTo("chat.postEphemeral")[0]?.args).toMatchObject({
      user: ALICE.id,
      thread_ts: MESSAGE_TS,
      text: expect.stringContaining("already answered"),
    });
  });
});

it("the message is posted to the request's channel with unfurling off", async () => {
  relay.api.onPost();
  const record = await relay.create(stepGate);
  expect(record.slack).toEqual({ channel: CHANNEL, ts: MESSAGE_TS });
  expect(relay.api.callsTo("chat.postMessage")[0]?.args).toMatchObject({ channel: CHANNEL, unfurl_links: "false", unfurl_media: "false" });
});
