/**
 * Questions on a route that needs two approvals (docs/architecture.md §7), through the
 * real Bolt HTTP receiver: the yes/no gate (`approval-relay ask` without
 * --choice or --text, one confirm question) counts each Yes and ends on a
 * No; any other question cannot collect two approvals, so the route refuses
 * it at create (asking as a choice does not dodge the quorum) and posts nothing.
 */
import { describe, expect, it } from "vitest";
import { Action, encodeButton } from "../../../src/slack/ids.js";
import type { Person } from "../../../src/protocol/request-view.js";
import { useSlackRelay, type SlackRelay } from "../../helpers/slack-relay.js";
import { ephemerals, watchAgent } from "../../helpers/slack-approvers.js";
import { blockAction, CHANNEL } from "../../helpers/slack.js";
import { ALICE, BOB } from "../../fixtures/people.js";
import { quorumRoutes } from "../../fixtures/routes.js";

const yesNo = { kind: "interactive_questions", questions: [{ id: "deploy", question: "Deploy v1.2.3 to production?", type: "confirm" }] };
const region = { kind: "interactive_questions", questions: [{ id: "region", question: "Which region?", type: "choice", options: ["eu", "us"] }] };

let relay: SlackRelay;
useSlackRelay((started) => (relay = started), { routes: quorumRoutes });

async function tap(actionId: string, value: { r: string; q?: number; o?: number }, user: Person) {
  const response = await relay.post(blockAction({ actionId, value: encodeButton(value), user }));
  expect(response.status).toBe(200);
  await relay.settle();
}

describe("the yes/no gate", () => {
  it("needs two Yes: the first is counted and told, the second answers the agent true", async () => {
    relay.api.onPost().on("chat.postEphemeral").on("chat.update", { ok: true }, 2);
    const record = await relay.create(yesNo);
    const agent = watchAgent(relay, record.id);
    await tap(Action.confirmYes, { r: record.id, q: 0 }, ALICE);
    expect(ephemerals(relay)).toEqual([{ channel: CHANNEL, user: ALICE.id, text: "Your approval counted: 1 of 2. Waiting for 1 more." }]);
    expect(await agent.stillWaiting()).toBe(true);
    await tap(Action.confirmYes, { r: record.id, q: 0 }, BOB);
    expect((await agent.answer)?.decision).toStrictEqual({ answers: { deploy: true } });
    relay.api.done();
  });

  it("a No after a Yes is a veto: the agent gets false at once", async () => {
    relay.api.onPost().on("chat.postEphemeral").on("chat.update", { ok: true }, 2);
    const record = await relay.create(yesNo);
    const agent = watchAgent(relay, record.id);
    await tap(Action.confirmYes, { r: record.id, q: 0 }, ALICE);
    await tap(Action.confirmNo, { r: record.id, q: 0 }, BOB);
    expect((await agent.answer)?.decision).toStrictEqual({ answers: { deploy: false } });
    relay.api.done();
  });
});

it("a one-choice question, which one tap would answer, is refused at create with 400 on kind and never posted", async () => {
  await expect(relay.create(region)).rejects.toMatchObject({
    code: "relay_invalid_request",
    details: [{ path: "kind", message: expect.stringContaining("needs 2 approvals") as unknown }],
  });
  await relay.settle();
  expect(relay.api.callsTo("chat.postMessage")).toEqual([]);
});
