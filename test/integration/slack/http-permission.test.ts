/**
 * Permission requests through the real Bolt HTTP receiver: every button and
 * modal, the exact PermissionResult the waiting agent gets, and the message
 * rewritten without buttons.
 */
import { describe, expect, it } from "vitest";
import { endedMessage, inputModal } from "../../../src/slack/blocks/index.js";
import { Action, decodeMetadata, encodeButton, encodeMetadata, Field, View } from "../../../src/slack/ids.js";
import { hasNoButtons, useSlackRelay, type SlackRelay } from "../../helpers/slack-relay.js";
import { blockAction, CHANNEL, MESSAGE_TS, state, viewSubmission } from "../../helpers/slack.js";
import { ALICE } from "../../fixtures/people.js";

const input = { command: "rm -rf build", description: "clean the build" };
const suggestions = [{ type: "addRules", rules: [{ toolName: "Bash", ruleContent: "rm -rf build" }], behavior: "allow", destination: "session" }];
const permission = (extra: Record<string, unknown> = {}) => ({ kind: "permission", toolName: "Bash", input, ...extra });

let relay: SlackRelay;
useSlackRelay((started) => (relay = started));

async function click(actionId: string, id: string, extra: Record<string, unknown> = {}) {
  const response = await relay.post(blockAction({ actionId, value: encodeButton({ r: id }), ...extra }));
  expect(response.status).toBe(200);
  await relay.settle();
}

async function expectAnswered(id: string, decision: unknown) {
  const record = await relay.service.wait(id, 1000);
  expect(record?.status).toBe("answered");
  expect(record?.decision).toStrictEqual(decision);
  expect(record?.answeredBy).toEqual({ id: ALICE.id, name: ALICE.name });
  const [update] = relay.api.callsTo("chat.update");
  expect(update?.args).toMatchObject({ channel: CHANNEL, ts: MESSAGE_TS });
  expect(update?.args.blocks).toEqual(endedMessage(record!).blocks);
  expect(hasNoButtons(update?.args.blocks)).toBe(true);
  relay.api.done();
  return record!;
}

describe("permission buttons", () => {
  it("when the approver clicks Allow, the waiting agent receives allow with the original input", async () => {
    relay.api.onPost().on("chat.update");
    const record = await relay.create(permission());
    const waiting = relay.service.wait(record.id, 5000);
    await click(Action.allow, record.id);
    expect((await waiting)?.decision).toStrictEqual({ behavior: "allow", updatedInput: input });
    await expectAnswered(record.id, { behavior: "allow", updatedInput: input });
  });

  it("when the approver clicks Always allow, the agent also receives the suggested permission updates", async () => {
    relay.api.onPost().on("chat.update");
    const record = await relay.create(permission({ suggestions }));
    await click(Action.alwaysAllow, record.id);
    await expectAnswered(record.id, { behavior: "allow", updatedInput: input, updatedPermissions: suggestions });
  });

  it.each([
    ["there are no suggestions", {}],
    ["suppressAlwaysAllowRule is set", { suggestions, suppressAlwaysAllowRule: true }],
  ])("when %s, an Always allow click is acked and ignored", async (_label, extra) => {
    relay.api.onPost();
    const record = await relay.create(permission(extra));
    await click(Action.alwaysAllow, record.id);
    expect((await relay.service.get(record.id))?.status).toBe("pending");
    relay.api.done();
  });

  it("when the approver clicks Deny, the agent receives deny with 'Denied by <name> in Slack.'", async () => {
    relay.api.onPost().on("chat.update");
    const record = await relay.create(permission());
    await click(Action.deny, record.id);
    await expectAnswered(record.id, { behavior: "deny", message: "Denied by alice in Slack." });
  });

  it("when the approver clicks Deny and stop, the deny carries interrupt", async () => {
    relay.api.onPost().on("chat.update");
    const record = await relay.create(permission());
    await click(Action.denyAndStop, record.id);
    await expectAnswered(record.id, { behavior: "deny", message: "Denied by alice in Slack.", interrupt: true });
  });
});

describe("Always allow grants nothing that was not shown", () => {
  const setMode = { type: "setMode", mode: "bypassPermissions", destination: "session" };
  const everyBash = { type: "addRules", rules: [{ toolName: "Bash", ruleContent: "*" }], behavior: "allow", destination: "userSettings" };
  const posted = () => JSON.stringify(relay.api.callsTo("chat.postMessage")[0]?.args.blocks);

  it("passes back only the rule for the asked tool; a hidden Bash(*) in userSettings and bypassPermissions are shown as not offered and never granted", async () => {
    relay.api.onPost().on("chat.update");
    const record = await relay.create(permission({ suggestions: [everyBash, ...suggestions, setMode] }));
    await relay.settle();
    expect(posted()).toContain("_Always allow_ also saves: allow Bash(rm -rf build) (session)");
    expect(posted()).toContain("_Not offered:_ 2 more suggestions");
    await click(Action.alwaysAllow, record.id);
    await expectAnswered(record.id, { behavior: "allow", updatedInput: input, updatedPermissions: suggestions });
  });

  it("rules too long for the message open a confirm modal listing every one; submitting it grants exactly those", async () => {
    relay.api.onPost().on("views.open").on("chat.update");
    const rules = Array.from({ length: 4 }, (_, i) => ({
      ...suggestions[0],
      rules: [{ toolName: "Bash", ruleContent: `${"rm -rf build/cache ".repeat(50)}${i}` }],
    }));
    const record = await relay.create(permission({ suggestions: rules }));
    await click(Action.alwaysAllow, record.id, { triggerId: "trigger-always" });
    expect((await relay.service.get(record.id))?.status).toBe("pending");
    const [open] = relay.api.callsTo("views.open");
    expect(open?.args.trigger_id).toBe("trigger-always");
    const view = open?.args.view as { callback_id: string; private_metadata: string };
    expect(view.callback_id).toBe(View.alwaysAllow);
    for (const rule of rules) expect(JSON.stringify(view)).toContain(rule.rules[0]!.ruleContent);
    const response = await relay.post(viewSubmission({ callbackId: View.alwaysAllow, privateMetadata: view.private_metadata, values: {} }));
    expect(response.status).toBe(200);
    await relay.settle();
    await expectAnswered(record.id, { behavior: "allow", updatedInput: input, updatedPermissions: rules });
  });
});

describe("permission modals", () => {
  const meta = (id: string) => encodeMetadata({ r: id, c: CHANNEL, ts: MESSAGE_TS });

  it("Edit… opens the edit modal with the click's trigger_id, tied to the request's message", async () => {
    relay.api.onPost().on("views.open");
    const record = await relay.create(permission());
    await click(Action.edit, record.id, { triggerId: "trigger-edit" });
    const [open] = relay.api.callsTo("views.open");
    expect(open?.args.trigger_id).toBe("trigger-edit");
    const view = open?.args.view as { callback_id: string; private_metadata: string };
    expect(view.callback_id).toBe(View.edit);
    expect(decodeMetadata(view.private_metadata)).toMatchObject({ r: record.id, c: CHANNEL, ts: MESSAGE_TS });
    expect(JSON.stringify(view)).toContain(Field.editJson.block);
    expect((await relay.service.get(record.id))?.status).toBe("pending");
    relay.api.done();
  });

  it("a submitted edit that is not a JSON object is refused next to the field and nothing is recorded; a valid one then allows with it", async () => {
    relay.api.onPost().on("chat.update");
    const record = await relay.create(permission());
    const submit = (text: string) =>
      relay.post(
        viewSubmission({
          callbackId: View.edit,
          privateMetadata: meta(record.id),
          values: { [Field.editJson.block]: { [Field.editJson.action]: state.text(text) } },
        }),
      );

    for (const bad of ["{not json", "[1, 2]", "null"]) {
      const refused = await submit(bad);
      expect(refused.status).toBe(200);
      expect(refused.json()).toEqual({ response_action: "errors", errors: { [Field.editJson.block]: expect.any(String) } });
      await relay.settle();
      expect((await relay.service.get(record.id))?.status).toBe("pending");
    }
    const accepted = await submit('{"command":"rm -rf build/tmp"}');
    expect(accepted.text).toBe("");
    await relay.settle();
    await expectAnswered(record.id, { behavior: "allow", updatedInput: { command: "rm -rf build/tmp" } });
  });

  it("Deny with reason opens its modal; the reason and 'stop the agent' come back to the agent", async () => {
    relay.api.onPost().on("views.open").on("chat.update");
    const record = await relay.create(permission());
    await click(Action.denyWithReason, record.id);
    const view = relay.api.callsTo("views.open")[0]?.args.view as { callback_id: string; private_metadata: string };
    expect(view.callback_id).toBe(View.denyReason);
    const response = await relay.post(
      viewSubmission({
        callbackId: View.denyReason,
        privateMetadata: view.private_metadata,
        values: {
          [Field.denyReason.block]: { [Field.denyReason.action]: state.text("  Not during the freeze. ") },
          [Field.denyInterrupt.block]: { [Field.denyInterrupt.action]: state.checkboxes(["interrupt"]) },
        },
      }),
    );
    expect(response.status).toBe(200);
    expect(response.text).toBe("");
    await relay.settle();
    await expectAnswered(record.id, { behavior: "deny", message: "Not during the freeze.", interrupt: true });
  });

  it("an empty reason denies with the default message naming the person", async () => {
    relay.api.onPost().on("chat.update");
    const record = await relay.create(permission());
    await relay.post(viewSubmission({ callbackId: View.denyReason, privateMetadata: meta(record.id), values: {} }));
    await relay.settle();
    await expectAnswered(record.id, { behavior: "deny", message: "Denied by alice in Slack." });
  });

  it("View full input opens the input modal, and its page buttons swap pages in place", async () => {
    const big = { command: "x".repeat(20_000) };
    relay.api.onPost().on("views.open").on("views.update");
    const record = await relay.create(permission({ input: big }));
    await click(Action.viewInput, record.id);
    const opened = relay.api.callsTo("views.open")[0]?.args.view;
    expect(opened).toEqual(JSON.parse(JSON.stringify(inputModal(record, 0))));
    const page = await relay.post(
      blockAction({
        actionId: Action.viewPage,
        value: encodeButton({ r: record.id, p: 1 }),
        view: { id: "V0INPUT", hash: "h-1", privateMetadata: (opened as { private_metadata: string }).private_metadata },
      }),
    );
    expect(page.status).toBe(200);
    await relay.settle();
    const [update] = relay.api.callsTo("views.update");
    expect(update?.args).toMatchObject({ view_id: "V0INPUT", hash: "h-1" });
    expect(update?.args.view).toEqual(JSON.parse(JSON.stringify(inputModal(record, 1))));
    expect((await relay.service.get(record.id))?.status).toBe("pending");
    relay.api.done();
  });
});
