/**
 * Quorum with veto (docs/architecture.md §7) through the real Bolt HTTP receiver: a route
 * that needs two approvals, signed clicks and thread replies from its
 * approvers. Each approval is counted once and shown in the message
 * ("Approvals 1 of 2: <@…>") while the buttons stay; the approval that
 * makes the quorum answers the agent; any deny answers it at once.
 */
import { describe, expect, it } from "vitest";
import { toView } from "../../../src/requests/model.js";
import { Action, encodeMetadata, Field, View } from "../../../src/slack/ids.js";
import type { Person } from "../../../src/protocol/request-view.js";
import { hasNoButtons, useSlackRelay, type SlackRelay } from "../../helpers/slack-relay.js";
import { clickAs, ephemerals, watchAgent } from "../../helpers/slack-approvers.js";
import { CHANNEL, MESSAGE_TS, messageEvent, state, viewSubmission } from "../../helpers/slack.js";
import { buttons } from "../../helpers/blocks.js";
import { ALICE, BOB, CAROL, MALLORY } from "../../fixtures/people.js";
import { quorumRoutes } from "../../fixtures/routes.js";

const input = { command: "helm upgrade api ./chart" };
const suggestions = [{ type: "addRules", rules: [{ toolName: "Bash", ruleContent: "helm upgrade api ./chart" }], behavior: "allow", destination: "session" }];
const permission = { kind: "permission", toolName: "Bash", input, suggestions };
const stepGate = { kind: "step_gate", toolName: "Bash", input: { command: "terraform apply" } };
const COUNTED = "Your approval counted: 1 of 2. Waiting for 1 more.";
const QUORUM_BUTTONS = ["Approve", "Deny", "Deny with reason…", "Deny & stop", "+30 min"];

let relay: SlackRelay;
useSlackRelay((started) => (relay = started), { routes: quorumRoutes });

const click = (actionId: string, id: string, user: Person) => clickAs(relay, actionId, id, user);
const clicks = (actionId: string, user: Person) => (id: string) => click(actionId, id, user);
const replies = (text: string, user: Person, ts: string) => () => reply(text, user, ts);

async function reply(text: string, user: Person, ts: string) {
  const response = await relay.post(messageEvent({ text, user: user.id, threadTs: MESSAGE_TS, ts }));
  expect(response.status).toBe(200);
  await relay.settle();
}

type Call = { args: Record<string, unknown> } | undefined;
const labels = (call: Call) => buttons({ text: "", blocks: (call?.args.blocks ?? []) as never[] }).map((b) => b.text);
const updates = () => relay.api.callsTo("chat.update");

/**
 * Creates `body`; `first` approves, then `second` answers (both answers
 * given as `answer` does): returns what the agent got and the request.
 */
async function twoAnswers(body: unknown, first: (id: string) => Promise<void>, second: (id: string) => Promise<void>) {
  relay.api.onPost().on("chat.postEphemeral").on("chat.update", { ok: true }, 2);
  const record = await relay.create(body);
  const agent = watchAgent(relay, record.id);
  await first(record.id);
  expect(await agent.stillWaiting()).toBe(true);
  await second(record.id);
  const answered = await agent.answer;
  relay.api.done();
  return answered!;
}

describe("permission requests that need two approvals", () => {
  it("offers Approve and the Deny variants only: no Edit…, no Always allow", async () => {
    relay.api.onPost();
    await relay.create(permission);
    expect(labels(relay.api.callsTo("chat.postMessage")[0])).toEqual(QUORUM_BUTTONS);
  });

  it("the first Approve is counted: the approver is told 1 of 2, the message shows it with its buttons, the agent keeps waiting", async () => {
    relay.api.onPost().on("chat.postEphemeral").on("chat.update");
    const record = await relay.create(permission);
    const agent = watchAgent(relay, record.id);
    await click(Action.allow, record.id, ALICE);
    expect(ephemerals(relay)).toEqual([{ channel: CHANNEL, user: ALICE.id, text: COUNTED }]);
    const [update] = updates();
    expect(update?.args).toMatchObject({ channel: CHANNEL, ts: MESSAGE_TS });
    expect(JSON.stringify(update?.args.blocks)).toContain(`Approvals 1 of 2: <@${ALICE.id}>`);
    expect(labels(update)).toEqual(QUORUM_BUTTONS);
    expect((await relay.service.get(record.id))?.status).toBe("pending");
    expect(await agent.stillWaiting()).toBe(true);
    relay.api.done();
  });

  it("a non-approver is told who may answer and that two approvals are needed", async () => {
    relay.api.onPost().on("chat.postEphemeral");
    const record = await relay.create(permission);
    await click(Action.allow, record.id, MALLORY);
    const who = `<@${ALICE.id}>, <@${BOB.id}>, <@${CAROL.id}>`;
    expect(ephemerals(relay)).toEqual([{ channel: CHANNEL, user: MALLORY.id, text: `🔒 Only ${who} can answer this request. It needs 2 approvals.` }]);
    expect((await relay.service.get(record.id))?.approvals).toBeUndefined();
    relay.api.done();
  });

  it("an Edit… submission (not offered here) is ignored: every approver approves the call as asked", async () => {
    relay.api.onPost();
    const record = await relay.create(permission);
    const values = { [Field.editJson.block]: { [Field.editJson.action]: state.text('{"command":"helm uninstall api"}') } };
    const privateMetadata = encodeMetadata({ r: record.id, c: CHANNEL, ts: MESSAGE_TS });
    expect((await relay.post(viewSubmission({ callbackId: View.edit, privateMetadata, values, user: ALICE }))).status).toBe(200);
    await relay.settle();
    const now = await relay.service.get(record.id);
    expect(now?.status).toBe("pending");
    expect(now?.approvals).toBeUndefined();
    relay.api.done();
  });

  it("the same approver approving again is told they already approved, and nothing changes", async () => {
    relay.api.onPost().on("chat.postEphemeral", { ok: true }, 2).on("chat.update");
    const record = await relay.create(permission);
    await click(Action.allow, record.id, ALICE);
    await click(Action.allow, record.id, ALICE);
    expect(ephemerals(relay)[1]).toEqual({ channel: CHANNEL, user: ALICE.id, text: "You already approved this request (1 of 2)." });
    expect(updates()).toHaveLength(1);
    const now = await relay.service.get(record.id);
    expect(now?.status).toBe("pending");
    expect(now?.approvals?.map(({ person }) => person)).toEqual([ALICE]);
    relay.api.done();
  });

  it("a second approver's Approve allows: the agent gets the original input and the message ends showing both approvals", async () => {
    const answered = await twoAnswers(permission, clicks(Action.allow, ALICE), clicks(Action.allow, BOB));
    expect(answered.decision).toStrictEqual({ behavior: "allow", updatedInput: input });
    expect(answered.answeredBy).toEqual(BOB);
    const final = updates()[1];
    expect(JSON.stringify(final?.args.blocks)).toContain(`Approvals 2 of 2: <@${ALICE.id}>, <@${BOB.id}>`);
    expect(hasNoButtons(final?.args.blocks)).toBe(true);
    expect(ephemerals(relay)).toHaveLength(1);
  });

  it("a Deny after one approval is a veto: the agent gets deny at once", async () => {
    const answered = await twoAnswers(permission, clicks(Action.allow, ALICE), clicks(Action.deny, BOB));
    expect(answered.decision).toStrictEqual({ behavior: "deny", message: "Denied by bob in Slack." });
    expect(answered.answeredBy).toEqual(BOB);
    expect(hasNoButtons(updates()[1]?.args.blocks)).toBe(true);
  });

  it("the request's view lists each counted approval: who, by id and name, and when", async () => {
    relay.advance(5_000);
    const from = Date.now() + 5_000;
    const answered = await twoAnswers(permission, clicks(Action.allow, ALICE), clicks(Action.allow, CAROL));
    const { approvals } = toView(answered);
    expect(approvals).toEqual([
      { person: { id: ALICE.id, name: ALICE.name }, at: expect.any(String) },
      { person: { id: CAROL.id, name: CAROL.name }, at: expect.any(String) },
    ]);
    for (const { at } of approvals!) expect(Date.parse(at)).toBeGreaterThanOrEqual(from);
    expect(Date.parse(approvals![0]!.at)).toBeLessThanOrEqual(Date.parse(approvals![1]!.at));
  });
});

describe("step gates that need two approvals", () => {
  it("a second y from the same approver in the thread is told it already counted, next to the reply", async () => {
    relay.api.onPost().on("chat.postEphemeral", { ok: true }, 2).on("chat.update");
    const record = await relay.create(stepGate);
    await reply("y", ALICE, "1700000050.000301");
    await reply("yes", ALICE, "1700000051.000302");
    expect(ephemerals(relay)[1]).toEqual({ channel: CHANNEL, user: ALICE.id, text: "You already approved this request (1 of 2).", thread_ts: MESSAGE_TS });
    expect((await relay.service.get(record.id))?.approvals).toHaveLength(1);
    relay.api.done();
  });

  it("Yes from one approver is counted and Yes from a second answers the agent y", async () => {
    const answered = await twoAnswers(stepGate, clicks(Action.stepYes, BOB), clicks(Action.stepYes, CAROL));
    expect(ephemerals(relay)).toEqual([{ channel: CHANNEL, user: BOB.id, text: COUNTED }]);
    expect(answered.decision).toStrictEqual({ reply: "y" });
  });

  it("No after a Yes is a veto: the agent gets n at once", async () => {
    const answered = await twoAnswers(stepGate, clicks(Action.stepYes, BOB), clicks(Action.stepNo, ALICE));
    expect(answered.decision).toStrictEqual({ reply: "n" });
    expect(answered.approvals?.map(({ person }) => person)).toEqual([BOB]);
  });

  it("a y in the thread counts, told next to the reply; a second approver's yes answers y", async () => {
    const answered = await twoAnswers(stepGate, replies("y", ALICE, "1700000050.000301"), replies("yes", BOB, "1700000051.000302"));
    expect(ephemerals(relay)).toEqual([{ channel: CHANNEL, user: ALICE.id, text: COUNTED, thread_ts: MESSAGE_TS }]);
    expect(JSON.stringify(updates()[0]?.args.blocks)).toContain(`Approvals 1 of 2: <@${ALICE.id}>`);
    expect(answered.decision).toStrictEqual({ reply: "y" });
    expect(answered.approvals?.map(({ person }) => person.id)).toEqual([ALICE.id, BOB.id]);
  });

  it("an n in the thread after a y is a veto: the agent gets n at once", async () => {
    const answered = await twoAnswers(stepGate, replies("y", ALICE, "1700000050.000301"), replies("n", CAROL, "1700000051.000302"));
    expect(answered.decision).toStrictEqual({ reply: "n" });
    expect(answered.answeredBy).toEqual({ id: CAROL.id });
  });
});
