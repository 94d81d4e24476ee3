/**
 * Who may answer, for answers given through a modal (docs/architecture.md §7), through the
 * real Bolt HTTP receiver: the person is checked before the modal opens (a
 * non-approver gets no modal) and again when they submit it, since who may
 * answer can change in between (a user group loses them, the request is
 * theirs). A refused submission records nothing; the person is told why.
 */
import { describe, expect, it } from "vitest";
import { MEMBERS_MAX_AGE_MS } from "../../../src/slack/directory.js";
import { Action, encodeMetadata, Field, View } from "../../../src/slack/ids.js";
import type { Person } from "../../../src/protocol/request-view.js";
import { useSlackRelay, type SlackRelay } from "../../helpers/slack-relay.js";
import { clickAs, ephemerals, members } from "../../helpers/slack-approvers.js";
import { CHANNEL, MESSAGE_TS, state, viewSubmission } from "../../helpers/slack.js";
import { ALICE, BOB, CAROL } from "../../fixtures/people.js";
import { approverRoutes, NOT_YOUR_OWN, ONLY_ALICE_AND_ONCALL as ONLY } from "../../fixtures/routes.js";

const permission = (extra: Record<string, unknown> = {}) => ({ kind: "permission", toolName: "Bash", input: { command: "make release" }, ...extra });
const twoQuestions = {
  kind: "ask_user_question",
  questions: [
    { question: "Which pool?", header: "Pool", options: [{ label: "Blue" }, { label: "Green" }] },
    { question: "Drain first?", header: "Drain", options: [{ label: "Yes" }, { label: "No" }] },
  ],
};

let relay: SlackRelay;
useSlackRelay((started) => (relay = started), { routes: approverRoutes });

const click = (actionId: string, id: string, user: Person) => clickAs(relay, actionId, id, user);

async function submitDenyReason(privateMetadata: string, user: Person) {
  const values = { [Field.denyReason.block]: { [Field.denyReason.action]: state.text("Not this week.") } };
  const response = await relay.post(viewSubmission({ callbackId: View.denyReason, privateMetadata, values, user }));
  expect(response.status).toBe(200);
  await relay.settle();
  return response;
}

describe("before a modal opens", () => {
  it("a non-approver clicking Deny with reason… is told who may answer, and no modal opens", async () => {
    relay.api.onPost().on("usergroups.users.list", members(CAROL.id)).on("chat.postEphemeral");
    const record = await relay.create(permission());
    await click(Action.denyWithReason, record.id, BOB);
    expect(ephemerals(relay)).toEqual([{ channel: CHANNEL, user: BOB.id, text: ONLY }]);
    expect(relay.api.callsTo("views.open")).toEqual([]);
    expect((await relay.service.get(record.id))?.status).toBe("pending");
    relay.api.done();
  });

  it("a non-approver clicking Answer… is told who may answer, and no modal opens", async () => {
    relay.api.onPost().on("usergroups.users.list", members(CAROL.id)).on("chat.postEphemeral");
    const record = await relay.create(twoQuestions);
    await click(Action.answer, record.id, BOB);
    expect(ephemerals(relay)).toEqual([{ channel: CHANNEL, user: BOB.id, text: ONLY }]);
    expect(relay.api.callsTo("views.open")).toEqual([]);
    relay.api.done();
  });
});

describe("when a modal is submitted", () => {
  it("a group member who left the group after opening Deny with reason… is refused at submit: nothing is recorded and they are told", async () => {
    relay.api.onPost().on("usergroups.users.list", members(BOB.id)).on("views.open");
    const record = await relay.create(permission());
    await click(Action.denyWithReason, record.id, BOB);
    const view = relay.api.callsTo("views.open")[0]?.args.view as { callback_id: string; private_metadata: string };
    expect(view.callback_id).toBe(View.denyReason);

    // A minute later the group no longer holds Bob, and the cached membership is too old to serve.
    relay.advance(MEMBERS_MAX_AGE_MS + 1_000);
    relay.api.on("usergroups.users.list", members(CAROL.id)).on("chat.postEphemeral");
    const response = await submitDenyReason(view.private_metadata, BOB);
    expect(response.text).toBe("");
    expect(ephemerals(relay)).toEqual([{ channel: CHANNEL, user: BOB.id, text: ONLY }]);
    const now = await relay.service.get(record.id);
    expect(now?.status).toBe("pending");
    expect(now?.decision).toBeUndefined();
    expect(relay.api.callsTo("chat.update")).toEqual([]);
    relay.api.done();
  });

  it("the person a request is for submitting Deny with reason is refused at submit and told why", async () => {
    relay.api.onPost().on("chat.postEphemeral");
    const record = await relay.create(permission({ labels: { policy: "self" }, requestedBy: { slackUserId: BOB.id } }));
    await submitDenyReason(encodeMetadata({ r: record.id, c: CHANNEL, ts: MESSAGE_TS }), BOB);
    expect(ephemerals(relay)).toEqual([{ channel: CHANNEL, user: BOB.id, text: NOT_YOUR_OWN }]);
    expect((await relay.service.get(record.id))?.status).toBe("pending");
    relay.api.done();
  });

  it("a non-approver's Answer… submission is refused at submit and nothing is recorded", async () => {
    relay.api.onPost().on("usergroups.users.list", members(CAROL.id)).on("chat.postEphemeral");
    const record = await relay.create(twoQuestions);
    const values = {
      [Field.question(0).block]: { [Field.question(0).action]: state.radio("1") },
      [Field.question(1).block]: { [Field.question(1).action]: state.radio("0") },
    };
    const privateMetadata = encodeMetadata({ r: record.id, c: CHANNEL, ts: MESSAGE_TS });
    await relay.post(viewSubmission({ callbackId: View.answer, privateMetadata, values, user: BOB }));
    await relay.settle();
    expect(ephemerals(relay)).toEqual([{ channel: CHANNEL, user: BOB.id, text: ONLY }]);
    expect((await relay.service.get(record.id))?.status).toBe("pending");
    relay.api.done();
  });

  it("an approver's Deny with reason… submission answers with their reason", async () => {
    relay.api.onPost().on("views.open").on("chat.update");
    const record = await relay.create(permission());
    await click(Action.denyWithReason, record.id, ALICE);
    const view = relay.api.callsTo("views.open")[0]?.args.view as { private_metadata: string };
    await submitDenyReason(view.private_metadata, ALICE);
    expect((await relay.service.get(record.id))?.decision).toStrictEqual({ behavior: "deny", message: "Not this week." });
    relay.api.done();
  });
});
