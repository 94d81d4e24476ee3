/**
 * The Slack side on the Redis store (a real Redis server): clicks, thread
 * replies (found by channel + ts in Redis) and double clicks, and two relay
 * instances sharing one Redis, where the agent waits on one and Slack
 * delivers the click to the other.
 */
import { describe, expect, it } from "vitest";
import { Action, encodeButton } from "../../../src/slack/ids.js";
import { useRelaysOnRedis } from "../../helpers/redis-relays.js";
import { blockAction, CHANNEL, MESSAGE_TS, messageEvent } from "../../helpers/slack.js";
import { ALICE, BOB } from "../../fixtures/people.js";

const relays = useRelaysOnRedis();
const relayOnRedis = () => relays.start();

const permission = { kind: "permission", toolName: "Bash", input: { command: "make deploy" } };

describe("on Redis", () => {
  it("an Allow click reaches the waiting agent and rewrites the message", async () => {
    const relay = await relayOnRedis();
    relay.api.onPost().on("chat.update");
    const record = await relay.create(permission);
    expect(record.slack).toEqual({ channel: CHANNEL, ts: MESSAGE_TS });
    const waiting = relay.service.wait(record.id, 5000);
    expect((await relay.post(blockAction({ actionId: Action.allow, value: encodeButton({ r: record.id }) }))).status).toBe(200);
    expect((await waiting)?.decision).toStrictEqual({ behavior: "allow", updatedInput: permission.input });
    await relay.settle();
    relay.api.done();
  });

  it("a thread reply finds its request by channel and ts", async () => {
    const relay = await relayOnRedis();
    relay.api.onPost().on("chat.update");
    const record = await relay.create({ kind: "step_gate", toolName: "Bash", input: { command: "ls" } });
    await relay.post(messageEvent({ text: "yes", threadTs: MESSAGE_TS }));
    expect((await relay.service.wait(record.id, 5000))?.decision).toStrictEqual({ reply: "y" });
  });

  it("a second click gets the stored answer as an ephemeral and changes nothing", async () => {
    const relay = await relayOnRedis();
    relay.api.onPost().on("chat.update").on("chat.postEphemeral");
    const record = await relay.create(permission);
    await relay.post(blockAction({ actionId: Action.deny, value: encodeButton({ r: record.id }), user: ALICE }));
    await relay.settle();
    await relay.post(blockAction({ actionId: Action.allow, value: encodeButton({ r: record.id }), user: BOB }));
    await relay.settle();
    expect((await relay.service.get(record.id))?.decision).toStrictEqual({ behavior: "deny", message: "Denied by alice in Slack." });
    expect(relay.api.callsTo("chat.postEphemeral")[0]?.args).toEqual({
      channel: CHANNEL,
      user: BOB.id,
      text: `This request was already answered: ❌ Denied by <@${ALICE.id}>`,
    });
    relay.api.done();
  });

  it("with two instances, the agent waiting on one gets the click Slack delivered to the other", async () => {
    const waitingSide = await relayOnRedis();
    const clickedSide = await relayOnRedis();
    waitingSide.api.onPost();
    clickedSide.api.on("chat.update");
    const record = await waitingSide.create({ kind: "step_gate", toolName: "Bash", input: { command: "terraform apply" } });
    const waiting = waitingSide.service.wait(record.id, 5000);
    expect((await clickedSide.post(blockAction({ actionId: Action.stepStop, value: encodeButton({ r: record.id }) }))).status).toBe(200);
    expect((await waiting)?.decision).toStrictEqual({ reply: "q" });
    await clickedSide.settle();
    clickedSide.api.done();
    waitingSide.api.done();
  });
});
