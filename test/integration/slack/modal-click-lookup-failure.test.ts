/**
 * A click on a button that opens a modal (Edit…, Deny with reason…) on a
 * copy of the request's message the store has not recorded, while Slack's
 * conversations.history fails: the relay cannot confirm the message is the
 * request's, so it cannot open the modal, and must say so (as when the
 * store hangs, modal-click-store-hang.test.ts) instead of ignoring the click.
 * A click on the request's recorded message needs no lookup and is not
 * affected; a copy Slack says is not the request's is still ignored. An
 * answer click there is not recorded, and the person is told so too.
 * Slack's Web API is the stand-in with the test's script; signed payloads go
 * to the real Bolt receiver.
 */
import { afterEach, expect, it } from "vitest";
import { NOT_OPENED, NOT_RECORDED } from "../../../src/slack/listeners/context.js";
import { Action, encodeButton } from "../../../src/slack/ids.js";
import { startSlackRelay, type SlackRelay } from "../../helpers/slack-relay.js";
import { blockAction, CHANNEL, MESSAGE_TS } from "../../helpers/slack.js";
import { ALICE, RELAY_BOT } from "../../fixtures/people.js";

const permission = { kind: "permission", toolName: "Bash", input: { command: "make deploy" } };
/** A message in the request's channel that the store does not know (MESSAGE_TS is the recorded one). */
const COPY_TS = "1700000999.000100";

let relay: SlackRelay | undefined;

afterEach(async () => {
  await relay?.close();
  expect(relay?.unexpected).toEqual([]);
});

/** A relay with a request posted at MESSAGE_TS; then a click of `actionId` on COPY_TS, after `script` told Slack how to answer. */
async function clickOnCopy(actionId: string, script: (api: SlackRelay["api"]) => void) {
  relay = await startSlackRelay();
  relay.api.onPost();
  const record = await relay.create(permission);
  expect(record.slack).toEqual({ channel: CHANNEL, ts: MESSAGE_TS });
  script(relay.api);
  const response = await relay.post(blockAction({ actionId, value: encodeButton({ r: record.id }), ts: COPY_TS }));
  expect(response.status).toBe(200);
  await relay.settle();
  return { relay, record };
}

/** Slack's history failing: auth.test answers, conversations.history does not; the person's notice is expected. */
const historyFails = (api: SlackRelay["api"]) =>
  api
    .on("auth.test", { ok: true, user_id: RELAY_BOT.userId, bot_id: RELAY_BOT.botId })
    .on("conversations.history", { ok: false, error: "internal_error" })
    .on("chat.postEphemeral");

it.each([
  ["Edit…", Action.edit],
  ["Deny with reason…", Action.denyWithReason],
])(
  "when Slack's history cannot confirm the message a click on %s came from, the person is told nothing opened and to try again",
  { timeout: 15_000 },
  async (_name, actionId) => {
    const { relay } = await clickOnCopy(actionId, historyFails);
    expect(relay.api.callsTo("conversations.history").map((call) => call.args)).toMatchObject([{ channel: CHANNEL, latest: COPY_TS, oldest: COPY_TS }]);
    expect(relay.api.callsTo("chat.postEphemeral").map((call) => call.args)).toEqual([{ channel: CHANNEL, user: ALICE.id, text: NOT_OPENED }]);
    expect(relay.api.callsTo("views.open")).toEqual([]);
    relay.api.done();
  },
);

it("when Slack's history cannot confirm the message an Allow click came from, nothing is recorded and the person is told so", { timeout: 15_000 }, async () => {
  const { relay, record } = await clickOnCopy(Action.allow, historyFails);
  expect(relay.api.callsTo("chat.postEphemeral").map((call) => call.args)).toEqual([{ channel: CHANNEL, user: ALICE.id, text: NOT_RECORDED }]);
  expect((await relay.service.get(record.id))?.status).toBe("pending");
  relay.api.done();
});

it("a click on a copy Slack says is not the request's is still ignored: no modal, no notice", { timeout: 15_000 }, async () => {
  const { relay } = await clickOnCopy(Action.edit, (api) => api.onHistory([{ ts: COPY_TS, bot_id: "B0SOMEONEELSE", text: "look-alike" }]));
  expect(relay.api.callsTo("conversations.history")).toHaveLength(1);
  expect(relay.api.callsTo("chat.postEphemeral")).toEqual([]);
  expect(relay.api.callsTo("views.open")).toEqual([]);
  relay.api.done();
});
