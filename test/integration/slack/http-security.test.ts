/**
 * What the Slack endpoint refuses or ignores: forged and stale signatures
 * (401, nothing happens), and signed interactions that cannot be tied to a
 * request's message (acked with 200, ignored, nobody told).
 */
import { describe, expect, it } from "vitest";
import { Action, encodeButton, encodeMetadata, Field, View } from "../../../src/slack/ids.js";
import { useSlackRelay, type SlackRelay } from "../../helpers/slack-relay.js";
import { blockAction, CHANNEL, MESSAGE_TS, messageEvent, sign, state, viewSubmission } from "../../helpers/slack.js";

const permission = { kind: "permission", toolName: "Bash", input: { command: "make deploy" } };

let relay: SlackRelay;
useSlackRelay((started) => (relay = started));

/** The request is still pending and nothing was said or changed in Slack (looking a message up is all that may happen). */
async function expectStillPending(id: string) {
  await relay.settle();
  expect((await relay.service.get(id))?.status).toBe("pending");
  const lookups = new Set(["auth.test", "conversations.history"]);
  expect(relay.api.calls.map((call) => call.method).filter((method) => !lookups.has(method))).toEqual(["chat.postMessage"]);
}

describe("signatures", () => {
  it("a payload signed with another secret gets 401 and changes nothing", async () => {
    relay.api.onPost();
    const record = await relay.create(permission);
    const response = await relay.post(blockAction({ actionId: Action.allow, value: encodeButton({ r: record.id }) }), { secret: "not-the-signing-secret" });
    expect(response.status).toBe(401);
    await expectStillPending(record.id);
  });

  it("a payload with a garbage signature gets 401", async () => {
    relay.api.onPost();
    const record = await relay.create(permission);
    const response = await relay.post(blockAction({ actionId: Action.allow, value: encodeButton({ r: record.id }) }), { signature: "v0=deadbeef" });
    expect(response.status).toBe(401);
    await expectStillPending(record.id);
  });

  it("a correctly signed payload more than 5 minutes old is refused as a replay with 401", async () => {
    relay.api.onPost();
    const record = await relay.create(permission);
    const stale = Math.floor(Date.now() / 1000) - 6 * 60;
    const response = await relay.post(blockAction({ actionId: Action.allow, value: encodeButton({ r: record.id }) }), { timestamp: stale });
    expect(response.status).toBe(401);
    await expectStillPending(record.id);
  });

  it("a correctly signed payload dated more than 5 minutes ahead is refused like a stale one with 401", async () => {
    relay.api.onPost();
    const record = await relay.create(permission);
    for (const ahead of [6 * 60, 365 * 24 * 60 * 60]) {
      const future = Math.floor(Date.now() / 1000) + ahead;
      const response = await relay.post(blockAction({ actionId: Action.allow, value: encodeButton({ r: record.id }) }), { timestamp: future });
      expect(response.status).toBe(401);
    }
    await expectStillPending(record.id);
  });

  it("a body changed after signing gets 401", async () => {
    relay.api.onPost();
    const record = await relay.create(permission);
    const timestamp = Math.floor(Date.now() / 1000);
    const signedFor = new URLSearchParams({
      payload: JSON.stringify(blockAction({ actionId: Action.deny, value: encodeButton({ r: record.id }) })),
    }).toString();
    const response = await relay.post(blockAction({ actionId: Action.allow, value: encodeButton({ r: record.id }) }), {
      timestamp,
      signature: sign(signedFor, undefined, timestamp),
    });
    expect(response.status).toBe(401);
    await expectStillPending(record.id);
  });

  it("a thread reply with a forged signature gets 401", async () => {
    relay.api.onPost();
    const record = await relay.create({ kind: "step_gate", toolName: "Bash", input: {} });
    const response = await relay.post(messageEvent({ text: "y", threadTs: MESSAGE_TS }), { secret: "forged-secret-value" });
    expect(response.status).toBe(401);
    await expectStillPending(record.id);
  });
});

describe("interactions that belong to no request", () => {
  it("a click naming an unknown request id is acked with 200 and ignored", async () => {
    relay.api.onPost();
    const record = await relay.create(permission);
    const response = await relay.post(blockAction({ actionId: Action.allow, value: encodeButton({ r: "no-such-request" }) }));
    expect(response.status).toBe(200);
    await expectStillPending(record.id);
  });

  it("a click from another channel's message is acked and ignored", async () => {
    relay.api.onPost();
    const record = await relay.create(permission);
    const response = await relay.post(blockAction({ actionId: Action.allow, value: encodeButton({ r: record.id }), channel: "C0ELSEWHERE" }));
    expect(response.status).toBe(200);
    await expectStillPending(record.id);
  });

  it("a click from another message in the same channel is acked and ignored when Slack's history does not show it as the request's", async () => {
    relay.api.onPost();
    const record = await relay.create(permission);
    // A message at that ts by someone else, carrying the request's metadata: still not the relay's own.
    const forged = {
      type: "message",
      ts: "1699999999.000001",
      bot_id: "B0SOMEONE",
      metadata: { event_type: "approval_relay_request", event_payload: { request_id: record.id } },
    };
    relay.api.onHistory([forged]);
    const response = await relay.post(blockAction({ actionId: Action.allow, value: encodeButton({ r: record.id }), ts: "1699999999.000001" }));
    expect(response.status).toBe(200);
    await expectStillPending(record.id);
    expect(relay.api.callsTo("conversations.history")[0]?.args).toMatchObject({ channel: CHANNEL, latest: "1699999999.000001", inclusive: "true" });
    relay.api.done();
  });

  it.each([["not json"], ['{"r": 42}'], [undefined]])("a click whose value is %j is acked and ignored", async (value) => {
    relay.api.onPost();
    const record = await relay.create(permission);
    const response = await relay.post(blockAction({ actionId: Action.allow, value }));
    expect(response.status).toBe(200);
    await expectStillPending(record.id);
  });

  it("an action id the relay does not own is acked and ignored", async () => {
    relay.api.onPost();
    const record = await relay.create(permission);
    const response = await relay.post(blockAction({ actionId: "someone_elses_button", value: encodeButton({ r: record.id }) }));
    expect(response.status).toBe(200);
    await expectStillPending(record.id);
  });

  it("a modal whose metadata names another channel's message is closed and ignored", async () => {
    relay.api.onPost();
    const record = await relay.create(permission);
    const response = await relay.post(
      viewSubmission({
        callbackId: View.edit,
        privateMetadata: encodeMetadata({ r: record.id, c: "C0ELSEWHERE", ts: MESSAGE_TS }),
        values: { [Field.editJson.block]: { [Field.editJson.action]: state.text("{}") } },
      }),
    );
    expect(response.status).toBe(200);
    expect(response.text).toBe("");
    await expectStillPending(record.id);
  });

  it("a modal with undecodable metadata is closed and ignored", async () => {
    relay.api.onPost();
    const record = await relay.create(permission);
    const response = await relay.post(viewSubmission({ callbackId: View.edit, privateMetadata: "{broken" }));
    expect(response.status).toBe(200);
    await expectStillPending(record.id);
  });

  it("a modal of the wrong kind for the request is closed and ignored", async () => {
    relay.api.onPost();
    const record = await relay.create(permission);
    const response = await relay.post(
      viewSubmission({ callbackId: View.other, privateMetadata: encodeMetadata({ r: record.id, q: 0, c: CHANNEL, ts: MESSAGE_TS }) }),
    );
    expect(response.status).toBe(200);
    await expectStillPending(record.id);
  });
});
