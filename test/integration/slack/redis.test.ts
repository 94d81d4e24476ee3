/**
 * The Slack side on the Redis store (a real Redis server): clicks, thread
 * replies (found by channel + ts in Redis) and double clicks, and two relay
 * instances sharing one Redis, where the agent waits on one and Slack
 * delivers the click to the other, approvals towards a quorum land on
 * either, and both sweep the same due reminder.
 */
import { describe, expect, it } from "vitest";
import { parseConfigFile } from "../../../src/config/file.js";
import type { Route } from "../../../src/requests/route-schema.js";
import { Action, encodeButton } from "../../../src/slack/ids.js";
import { useRelaysOnRedis } from "../../helpers/redis-relays.js";
import { hasNoButtons, type SlackRelay } from "../../helpers/slack-relay.js";
import { blockAction, CHANNEL, MESSAGE_TS, messageEvent } from "../../helpers/slack.js";
import { ALICE, BOB, CAROL } from "../../fixtures/people.js";

/** Two of Alice, Bob and Carol must approve; the thread reminds them after five minutes. */
const { routes: policyRoutes } = parseConfigFile(`
routes:
  - match: { token: ci-bot }
    approvers: { users: [${ALICE.id}, ${BOB.id}, ${CAROL.id}] }
    quorum: 2
    reminders: [300]
`);

const relays = useRelaysOnRedis();
const relayOnRedis = (routes?: Route[]) => relays.start(routes ? { routes } : {});

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

  it("with a quorum of two, Alice's approval on one instance and Bob's on the other answer the agent waiting on the first", async () => {
    const [first, second] = [await relayOnRedis(policyRoutes), await relayOnRedis(policyRoutes)];
    // The instances share Slack: Alice's approval updates the message first, Bob's second.
    first.api.onPost().on("chat.postEphemeral").on("chat.update", { ok: true }, 2);
    const record = await first.create(permission);
    const waiting = first.service.wait(record.id, 5000);
    const approve = (relay: SlackRelay, user: typeof ALICE) =>
      relay.post(blockAction({ actionId: Action.allow, value: encodeButton({ r: record.id }), user })).then(() => relay.settle());
    await approve(first, ALICE);
    expect((await second.service.get(record.id))?.approvals?.map(({ person }) => person)).toEqual([ALICE]);
    await approve(second, BOB);
    expect((await waiting)?.decision).toStrictEqual({ behavior: "allow", updatedInput: permission.input });
    expect(JSON.stringify(first.api.callsTo("chat.update")[1]?.args.blocks)).toContain(`Approvals 2 of 2: <@${ALICE.id}>, <@${BOB.id}>`);
    first.api.done();
  });

  it("when three approvers click at once on two instances, the request is answered once with two approvals and its message ends without buttons", async () => {
    const [first, second] = [await relayOnRedis(policyRoutes), await relayOnRedis(policyRoutes)];
    // The instances share one Slack script: every call is recorded on first.api.
    first.api.onPost().on("chat.postEphemeral", { ok: true }, 2).on("chat.update", { ok: true }, 4);
    const record = await first.create(permission);
    const waiting = first.service.wait(record.id, 5000);
    const approve = (relay: SlackRelay, user: typeof ALICE) => relay.post(blockAction({ actionId: Action.allow, value: encodeButton({ r: record.id }), user }));
    await Promise.all([approve(first, ALICE), approve(second, BOB), approve(second, CAROL)]);
    expect((await waiting)?.decision).toStrictEqual({ behavior: "allow", updatedInput: permission.input });
    await Promise.all([first.settle(), second.settle()]);
    const answered = await first.service.get(record.id);
    expect(answered?.approvals).toHaveLength(2);
    const notices = first.api.callsTo("chat.postEphemeral").map((call) => call.args.text as string);
    expect(notices).toHaveLength(2);
    expect(notices).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^Your approval counted: 1 of 2/),
        expect.stringMatching(/^This request was already answered: ✅ Allowed by <@U0/),
      ]),
    );
    expect(hasNoButtons(first.api.callsTo("chat.update").at(-1)?.args.blocks)).toBe(true);
  });

  it("when two instances sweep at once, a due reminder is sent in the thread once", async () => {
    const [a, b] = [await relayOnRedis(policyRoutes), await relayOnRedis(policyRoutes)];
    a.api.onPost();
    await a.create(permission);
    // The instances share one Slack script: a second thread reply would be a call nobody expected.
    a.api.onPost("1700000300.000200");
    for (const relay of [a, b]) relay.advance(5 * 60_000);
    const sent = await Promise.all([a.service.sweepReminders(), b.service.sweepReminders()]);
    expect(sent.sort()).toEqual([0, 1]);
    expect(a.api.callsTo("chat.postMessage")[1]?.args).toMatchObject({ channel: CHANNEL, thread_ts: MESSAGE_TS });
    a.api.done();
  });
});
