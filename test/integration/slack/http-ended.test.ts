/**
 * Clicks and submissions that land on a request that has already ended:
 * nothing changes, and only the person who clicked is told why.
 */
import { describe, expect, it } from "vitest";
import { Action, encodeButton, encodeMetadata, Field, View } from "../../../src/slack/ids.js";
import { useSlackRelay, type SlackRelay } from "../../helpers/slack-relay.js";
import { blockAction, CHANNEL, MESSAGE_TS, state, viewSubmission } from "../../helpers/slack.js";
import { ALICE, BOB } from "../../fixtures/people.js";

const permission = { kind: "permission", toolName: "Bash", input: { command: "make deploy" }, timeoutSeconds: 60 };

let relay: SlackRelay;
useSlackRelay((started) => (relay = started));

async function click(actionId: string, id: string, user = ALICE) {
  const response = await relay.post(blockAction({ actionId, value: encodeButton({ r: id }), user }));
  expect(response.status).toBe(200);
  await relay.settle();
}

function ephemerals() {
  return relay.api.callsTo("chat.postEphemeral").map((call) => call.args);
}

describe("a second click", () => {
  it("on an answered request changes nothing and tells the clicker who answered and how", async () => {
    relay.api.onPost().on("chat.update").on("chat.postEphemeral");
    const record = await relay.create(permission);
    await click(Action.allow, record.id, ALICE);
    await click(Action.deny, record.id, BOB);
    const final = await relay.service.get(record.id);
    expect(final?.decision).toStrictEqual({ behavior: "allow", updatedInput: permission.input });
    expect(final?.answeredBy?.id).toBe(ALICE.id);
    expect(relay.api.callsTo("chat.update")).toHaveLength(1);
    expect(ephemerals()).toEqual([{ channel: CHANNEL, user: BOB.id, text: `This request was already answered: ✅ Allowed by <@${ALICE.id}>` }]);
    relay.api.done();
  });

  it("of the same button by the same person (a double click) is told the same, once per extra click", async () => {
    relay.api.onPost().on("chat.update").on("chat.postEphemeral");
    const record = await relay.create(permission);
    await Promise.all([click(Action.denyAndStop, record.id), click(Action.denyAndStop, record.id)]);
    expect((await relay.service.get(record.id))?.decision).toStrictEqual({ behavior: "deny", message: "Denied by alice in Slack.", interrupt: true });
    expect(ephemerals()).toEqual([{ channel: CHANNEL, user: ALICE.id, text: `This request was already answered: ❌ Denied and stopped by <@${ALICE.id}>` }]);
    relay.api.done();
  });
});

describe("a late click", () => {
  it("on an expired request is told it expired", async () => {
    relay.api.onPost().on("chat.update").on("chat.postEphemeral");
    const record = await relay.create(permission);
    relay.advance(61_000);
    expect(await relay.service.expireDue()).toBe(1);
    await relay.settle();
    await click(Action.allow, record.id);
    expect((await relay.service.get(record.id))?.status).toBe("expired");
    expect(ephemerals()).toEqual([{ channel: CHANNEL, user: ALICE.id, text: "This request expired." }]);
    relay.api.done();
  });

  it("on a cancelled request is told it was cancelled", async () => {
    relay.api.onPost().on("chat.update").on("chat.postEphemeral");
    const record = await relay.create(permission);
    await relay.service.cancel(record.id, "agent");
    await relay.settle();
    await click(Action.deny, record.id);
    expect((await relay.service.get(record.id))?.status).toBe("cancelled");
    expect(ephemerals()).toEqual([{ channel: CHANNEL, user: ALICE.id, text: "This request was cancelled." }]);
    relay.api.done();
  });

  it("on a button that opens a modal does not open it and tells the person instead", async () => {
    relay.api.onPost().on("chat.update").on("chat.postEphemeral");
    const record = await relay.create(permission);
    await relay.service.cancel(record.id, "agent");
    await relay.settle();
    await click(Action.edit, record.id);
    expect(relay.api.callsTo("views.open")).toEqual([]);
    expect(ephemerals()).toEqual([{ channel: CHANNEL, user: ALICE.id, text: "This request was cancelled." }]);
    relay.api.done();
  });
});

describe("a modal submitted after the request ended", () => {
  it("closes the modal, records nothing and tells the person", async () => {
    relay.api.onPost().on("chat.update").on("chat.postEphemeral");
    const record = await relay.create(permission);
    await click(Action.allow, record.id, BOB);
    const response = await relay.post(
      viewSubmission({
        callbackId: View.denyReason,
        privateMetadata: encodeMetadata({ r: record.id, c: CHANNEL, ts: MESSAGE_TS }),
        values: { [Field.denyReason.block]: { [Field.denyReason.action]: state.text("too late") } },
      }),
    );
    expect(response.status).toBe(200);
    expect(response.text).toBe("");
    await relay.settle();
    expect((await relay.service.get(record.id))?.decision).toMatchObject({ behavior: "allow" });
    expect(ephemerals()).toEqual([{ channel: CHANNEL, user: ALICE.id, text: `This request was already answered: ✅ Allowed by <@${BOB.id}>` }]);
    relay.api.done();
  });
});
