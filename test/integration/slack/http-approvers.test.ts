/**
 * Who may answer (docs/architecture.md §7), through the real Bolt HTTP receiver: routes as
 * an operator writes them in RELAY_CONFIG_FILE, signed clicks and thread
 * replies from approvers, strangers, people who share an approver's name,
 * Slack Connect guests and the person a request is for. A refused person is
 * told who may answer, only they see it, and nothing changes: no post in
 * the channel, no message update, the agent still waiting.
 */
import { describe, expect, it } from "vitest";
import { Action, encodeButton } from "../../../src/slack/ids.js";
import type { Person } from "../../../src/protocol/request-view.js";
import type { RequestRecord } from "../../../src/requests/model.js";
import { useSlackRelay, type SlackRelay } from "../../helpers/slack-relay.js";
import { clickAs, ephemerals, members, watchAgent, type WatchedAgent } from "../../helpers/slack-approvers.js";
import { blockAction, CHANNEL, MESSAGE_TS, messageEvent } from "../../helpers/slack.js";
import { ALICE, BOB, CAROL, OTHER_TEAM } from "../../fixtures/people.js";
import { ONCALL } from "../../fixtures/policies.js";
import { approverRoutes, NOT_YOUR_OWN, ONLY_ALICE_AND_ONCALL as ONLY } from "../../fixtures/routes.js";

/** Same name as Alice, another Slack user. */
const NAMESAKE = { id: "U0NAMESAK1", name: ALICE.name } satisfies Person;

const input = { command: "kubectl rollout restart deploy/api" };
const permission = (extra: Record<string, unknown> = {}) => ({ kind: "permission", toolName: "Bash", input, ...extra });
const stepGate = { kind: "step_gate", toolName: "Bash", input: { command: "terraform apply" } };

let relay: SlackRelay;
useSlackRelay((started) => (relay = started), { routes: approverRoutes });

const click = (actionId: string, id: string, user: Person, teamId?: string) => clickAs(relay, actionId, id, user, teamId);

/** The person was told `text` (ephemeral, to them only), and nothing else changed. */
async function expectRefused(record: RequestRecord, person: Person, text: string, agent?: WatchedAgent) {
  expect(ephemerals(relay)).toEqual([{ channel: CHANNEL, user: person.id, text }]);
  expect(relay.api.callsTo("chat.postMessage")).toHaveLength(1);
  expect(relay.api.callsTo("chat.update")).toEqual([]);
  const now = await relay.service.get(record.id);
  expect(now?.status).toBe("pending");
  expect(now?.approvals).toBeUndefined();
  if (agent) expect(await agent.stillWaiting()).toBe(true);
  relay.api.done();
}

describe("approvers by id and user group", () => {
  it("when a non-approver clicks Allow, only they are told who may answer, and the agent keeps waiting", async () => {
    relay.api.onPost().on("usergroups.users.list", members(CAROL.id)).on("chat.postEphemeral");
    const record = await relay.create(permission());
    const agent = watchAgent(relay, record.id);
    await click(Action.allow, record.id, BOB);
    await expectRefused(record, BOB, ONLY, agent);
    expect(relay.api.callsTo("usergroups.users.list")[0]?.args).toEqual({ usergroup: ONCALL });
  });

  it("when a non-approver clicks Yes on a step gate, they are refused and the step stays pending", async () => {
    relay.api.onPost().on("usergroups.users.list", members(CAROL.id)).on("chat.postEphemeral");
    const record = await relay.create(stepGate);
    const agent = watchAgent(relay, record.id);
    await click(Action.stepYes, record.id, BOB);
    await expectRefused(record, BOB, ONLY, agent);
  });

  it("a member of a listed user group may answer: the agent gets allow with the original input", async () => {
    relay.api.onPost().on("usergroups.users.list", members(BOB.id)).on("chat.update");
    const record = await relay.create(permission());
    const agent = watchAgent(relay, record.id);
    await click(Action.allow, record.id, BOB);
    expect((await agent.answer)?.decision).toStrictEqual({ behavior: "allow", updatedInput: input });
    expect((await relay.service.get(record.id))?.answeredBy).toEqual(BOB);
    expect(ephemerals(relay)).toEqual([]);
    relay.api.done();
  });

  it("an approver listed by id answers without any user group lookup", async () => {
    relay.api.onPost().on("chat.update");
    const record = await relay.create(permission());
    await click(Action.allow, record.id, ALICE);
    expect((await relay.service.get(record.id))?.answeredBy).toEqual(ALICE);
    expect(relay.api.callsTo("usergroups.users.list")).toEqual([]);
    relay.api.done();
  });

  it("someone with an approver's name but another id is refused", async () => {
    relay.api.onPost().on("usergroups.users.list", members(CAROL.id)).on("chat.postEphemeral");
    const record = await relay.create(permission());
    await click(Action.allow, record.id, NAMESAKE);
    await expectRefused(record, NAMESAKE, ONLY);
  });

  it("a non-approver's y in a step gate's thread is refused next to their reply, and nothing changes", async () => {
    relay.api.onPost().on("usergroups.users.list", members(CAROL.id)).on("chat.postEphemeral");
    const record = await relay.create(stepGate);
    const response = await relay.post(messageEvent({ text: "y", user: BOB.id, threadTs: MESSAGE_TS }));
    expect(response.status).toBe(200);
    await relay.settle();
    expect(ephemerals(relay)).toEqual([{ channel: CHANNEL, user: BOB.id, text: ONLY, thread_ts: MESSAGE_TS }]);
    expect(relay.api.callsTo("chat.update")).toEqual([]);
    expect((await relay.service.get(record.id))?.status).toBe("pending");
    relay.api.done();
  });

  it("when Slack cannot say who is in the group, the click is refused (fail closed) and the person is asked to try again", async () => {
    relay.api.onPost().on("usergroups.users.list", { status: 500 }).on("chat.postEphemeral");
    const record = await relay.create(permission());
    const agent = watchAgent(relay, record.id);
    await click(Action.allow, record.id, BOB);
    await expectRefused(
      record,
      BOB,
      "🔒 The relay could not check your user group membership (or workspace) with Slack just now, so nothing changed. Try again in a moment.",
      agent,
    );
  });
});

describe("Slack Connect guests", () => {
  const guestOnly = "🔒 You are in another workspace than the relay's: only people of its own workspace can answer this request.";

  it("a guest from another workspace is refused where anyone may answer", async () => {
    relay.api.onPost().on("chat.postEphemeral");
    const record = await relay.create(permission({ labels: { policy: "anyone" } }));
    const agent = watchAgent(relay, record.id);
    await click(Action.allow, record.id, BOB, OTHER_TEAM);
    await expectRefused(record, BOB, guestOnly, agent);
  });

  it("a guest is refused even as a member of a listed user group, and told who may answer from there", async () => {
    relay.api.onPost().on("chat.postEphemeral");
    const record = await relay.create(permission());
    await click(Action.allow, record.id, BOB, OTHER_TEAM);
    await expectRefused(record, BOB, `🔒 You are in another workspace than the relay's: from there only <@${ALICE.id}> can answer this request.`);
    // The same person from the relay's own workspace is in the group, and answers.
    relay.api.on("usergroups.users.list", members(BOB.id)).on("chat.update");
    await click(Action.allow, record.id, BOB);
    expect((await relay.service.get(record.id))?.answeredBy).toEqual(BOB);
    relay.api.done();
  });

  it("a guest's y in a thread is refused too (the event's user_team says where they are from)", async () => {
    relay.api.onPost().on("chat.postEphemeral");
    const record = await relay.create({ ...stepGate, labels: { policy: "anyone" } });
    const reply = messageEvent({ text: "y", user: BOB.id, threadTs: MESSAGE_TS });
    const fromGuest = { ...reply, event: { ...reply.event, user_team: OTHER_TEAM } };
    await relay.post(fromGuest);
    await relay.settle();
    expect(ephemerals(relay)).toEqual([{ channel: CHANNEL, user: BOB.id, text: guestOnly, thread_ts: MESSAGE_TS }]);
    expect((await relay.service.get(record.id))?.status).toBe("pending");
    relay.api.done();
  });

  it("a click whose payload names no workspace is refused as from another workspace (fail closed)", async () => {
    relay.api.onPost().on("chat.postEphemeral");
    const record = await relay.create(permission({ labels: { policy: "anyone" } }));
    const agent = watchAgent(relay, record.id);
    const payload = blockAction({ actionId: Action.allow, value: encodeButton({ r: record.id }), user: BOB });
    const { team_id: _dropped, ...unplaced } = payload.user;
    const fromNowhere = { ...payload, user: unplaced };
    expect((await relay.post(fromNowhere)).status).toBe(200);
    await relay.settle();
    await expectRefused(record, BOB, guestOnly, agent);
  });

  it("a y in a thread whose event names no workspace is refused as from another workspace", async () => {
    relay.api.onPost().on("chat.postEphemeral");
    const record = await relay.create({ ...stepGate, labels: { policy: "anyone" } });
    const reply = messageEvent({ text: "y", user: BOB.id, threadTs: MESSAGE_TS });
    const { team: _dropped, ...unplaced } = reply.event;
    const fromNowhere = { ...reply, event: unplaced };
    await relay.post(fromNowhere);
    await relay.settle();
    expect(ephemerals(relay)).toEqual([{ channel: CHANNEL, user: BOB.id, text: guestOnly, thread_ts: MESSAGE_TS }]);
    expect((await relay.service.get(record.id))?.status).toBe("pending");
    relay.api.done();
  });

  it("a guest listed by id answers", async () => {
    relay.api.onPost().on("chat.update");
    const record = await relay.create(permission({ labels: { policy: "guest-listed" } }));
    await click(Action.allow, record.id, CAROL, OTHER_TEAM);
    const answered = await relay.service.get(record.id);
    expect(answered?.decision).toStrictEqual({ behavior: "allow", updatedInput: input });
    expect(answered?.answeredBy).toEqual(CAROL);
    relay.api.done();
  });
});

describe("selfApproval: deny", () => {
  const self = () => permission({ labels: { policy: "self" }, requestedBy: { slackUserId: BOB.id } });

  it("the person the request is for is refused and told why, though they are an approver", async () => {
    relay.api.onPost().on("chat.postEphemeral");
    const record = await relay.create(self());
    const agent = watchAgent(relay, record.id);
    await click(Action.allow, record.id, BOB);
    await expectRefused(record, BOB, NOT_YOUR_OWN, agent);
  });

  it("a request made for an email address bars the Slack user the address belongs to", async () => {
    relay.api
      .on("users.lookupByEmail", { ok: true, user: { id: BOB.id } })
      .onPost()
      .on("chat.postEphemeral");
    const record = await relay.create(permission({ labels: { policy: "self" }, requestedBy: { email: "bob@example.com" } }));
    expect(relay.api.callsTo("users.lookupByEmail")[0]?.args).toEqual({ email: "bob@example.com" });
    await click(Action.allow, record.id, BOB);
    await expectRefused(record, BOB, NOT_YOUR_OWN);
  });

  it("another approver answers the same request", async () => {
    relay.api.onPost().on("chat.update");
    const record = await relay.create(self());
    await click(Action.deny, record.id, ALICE);
    expect((await relay.service.get(record.id))?.decision).toStrictEqual({ behavior: "deny", message: "Denied by alice in Slack." });
    relay.api.done();
  });
});
