/**
 * No live orphans (issue 7): Slack takes a post but its reply is lost on the
 * way back. The whole relay (src/main.ts) against the local Web API stand-in,
 * which stores the message and drops the connection instead of replying.
 * Every request message carries metadata with the request's id; the relay
 * looks the channel's history up before posting again and adopts what it
 * finds, records any copy it finds later, and counts a click on a copy once
 * Slack confirms the copy is its own — while a click on a message that is
 * not the request's (another channel, a forged ts) is still refused.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CreateRequestBody } from "../../../src/protocol/request-body.js";
import { Action } from "../../../src/slack/ids.js";
import { startFullRelay, type FullRelay } from "../../helpers/full-relay.js";
import { hasNoButtons } from "../../helpers/slack-relay.js";
import { CHANNEL } from "../../helpers/slack.js";
import { until } from "../../helpers/until.js";
import { ALICE, RELAY_BOT } from "../../fixtures/people.js";

let relay: FullRelay;
beforeEach(async () => {
  relay = await startFullRelay();
});
afterEach(async () => {
  await relay.close();
});

const body = CreateRequestBody.parse({ kind: "step_gate", toolName: "Bash", input: { command: "terraform apply" } });

async function create(): Promise<string> {
  const { record } = await relay.service.create({ tokenName: "ci-bot", body });
  return record.id;
}

async function posted(id: string) {
  await until(async () => (await relay.service.get(id))?.slack !== undefined, 5000, "the request's message to be recorded");
  return (await relay.service.get(id))!;
}

describe("a post whose reply from Slack is lost", () => {
  it("is not posted again: the relay finds it in the channel's history and adopts it, and a click on it counts", async () => {
    relay.slack.dropReply("chat.postMessage", 1);
    const id = await create();
    const record = await posted(id);
    const message = await relay.message(0);
    expect(record.slack).toEqual({ channel: CHANNEL, ts: message.ts });
    expect(relay.slack.callsTo("chat.postMessage")).toHaveLength(1);
    expect(relay.slack.callsTo("conversations.history").length).toBeGreaterThanOrEqual(1);
    expect(relay.slack.calls.find((call) => call.method === "chat.postMessage")?.args.metadata).toEqual({
      event_type: "approval_relay_request",
      event_payload: { request_id: id },
    });

    await relay.click(message, Action.stepYes);
    expect(await relay.service.wait(id, 3000)).toMatchObject({ status: "answered", decision: { reply: "y" } });
    expect(hasNoButtons(await relay.updated(message))).toBe(true);
  });

  it("when the history does not show it yet, the post is made again and the copy found afterwards shows the outcome too", async () => {
    relay.slack.dropReply("chat.postMessage", 1);
    relay.slack.hideFromHistory(1);
    const id = await create();
    await until(async () => (await relay.service.get(id))?.otherMessages !== undefined, 5000, "the copy to be recorded");
    const [copy, main] = [await relay.message(0), await relay.message(1)];
    expect(await relay.service.get(id)).toMatchObject({ slack: { channel: CHANNEL, ts: main.ts }, otherMessages: [{ channel: CHANNEL, ts: copy.ts }] });

    await relay.service.answer(id, { reply: "n" }, { id: ALICE.id });
    expect(hasNoButtons(await relay.updated(main))).toBe(true);
    expect(hasNoButtons(await relay.updated(copy))).toBe(true);
  });

  it("a copy the relay never found counts when clicked, once Slack confirms it is the relay's own, and then shows the outcome", async () => {
    relay.slack.dropReply("chat.postMessage", 1);
    relay.slack.hideFromHistory(2);
    const id = await create();
    const record = await posted(id);
    const [copy, main] = [await relay.message(0), await relay.message(1)];
    expect(record.slack?.ts).toBe(main.ts);
    expect(record.otherMessages).toBeUndefined();

    await relay.click(copy, Action.stepNo);
    expect(await relay.service.wait(id, 3000)).toMatchObject({ status: "answered", decision: { reply: "n" } });
    expect(hasNoButtons(await relay.updated(main))).toBe(true);
    expect(hasNoButtons(await relay.updated(copy))).toBe(true);
  });
});

describe("a click that lands before the post's reply is recorded", () => {
  it("counts once Slack confirms the message is the request's, and the message is updated once when the reply comes after all", async () => {
    const ts = "1700000123.000001";
    let release!: () => void;
    const replyHeld = new Promise<void>((resolve) => (release = resolve));
    let shown!: (message: { channel: string; ts: string; blocks: unknown[] }) => void;
    const onScreen = new Promise<{ channel: string; ts: string; blocks: unknown[] }>((resolve) => (shown = resolve));
    // Slack has the message (people see it and click) while its reply to the relay is still on the way.
    relay.slack.answer("chat.postMessage", async (args) => {
      const channel = String(args.channel);
      relay.slack.messages.push({ channel, ts, bot_id: RELAY_BOT.botId, text: args.text, metadata: args.metadata });
      shown({ channel, ts, blocks: args.blocks as unknown[] });
      await replyHeld;
      return { ok: true, channel, ts };
    });
    const id = await create();
    const message = await onScreen;
    expect((await relay.service.get(id))?.slack).toBeUndefined();

    await relay.click({ ...message, text: "" }, Action.stepYes);
    expect(await relay.service.wait(id, 3000)).toMatchObject({ status: "answered", decision: { reply: "y" } });
    release();
    await until(async () => (await relay.service.get(id))?.slack?.ts === ts, 5000, "the post's reply to be recorded");
    await until(() => relay.slack.callsTo("chat.update").length > 0, 5000, "the message's update");
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(relay.slack.callsTo("chat.update").filter((call) => call.args.ts === ts)).toHaveLength(1);
    expect(relay.slack.callsTo("chat.postMessage").filter((call) => call.args.metadata !== undefined)).toHaveLength(1);
  });
});

describe("a click that is not on a message of the request", () => {
  it("is refused when the request's button comes from another channel or a ts the relay never posted", async () => {
    const id = await create();
    await posted(id);
    const message = await relay.message(0);
    await relay.click({ ...message, channel: "C0ELSEWHERE" }, Action.stepYes);
    await relay.click({ ...message, ts: "1700000999.000001" }, Action.stepYes);
    const other = await relay.service.create({ tokenName: "ci-bot", body });
    await posted(other.record.id);
    // The other request's message carries other metadata: a click on it with this request's button is refused too.
    await relay.click({ ...message, ts: (await relay.message(1)).ts }, Action.stepYes);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await relay.service.get(id))?.status).toBe("pending");
    expect(relay.slack.callsTo("chat.update")).toEqual([]);
  });
});
