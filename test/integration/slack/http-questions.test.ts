/**
 * AskUserQuestion and InteractiveQuestion requests through the real Bolt
 * HTTP receiver: one-tap buttons, the Other… and Answer… modals (errors
 * next to the field, nothing recorded until valid), and free-text replies.
 */
import { describe, expect, it } from "vitest";
import { Action, decodeMetadata, encodeButton, encodeMetadata, Field, OTHER_VALUE, View } from "../../../src/slack/ids.js";
import { hasNoButtons, useSlackRelay, type SlackRelay } from "../../helpers/slack-relay.js";
import { blockAction, CHANNEL, MESSAGE_TS, messageEvent, state, viewSubmission } from "../../helpers/slack.js";

const colour = { question: "Which colour?", header: "Colour", options: [{ label: "Red" }, { label: "Green" }, { label: "Blue" }] };
const toppings = { question: "Which toppings?", header: "Toppings", options: [{ label: "Cheese" }, { label: "Ham" }, { label: "Olives" }], multiSelect: true };
const ask = (...questions: unknown[]) => ({ kind: "ask_user_question", questions });
const interactive = (questions: unknown[], extra: Record<string, unknown> = {}) => ({ kind: "interactive_questions", questions, ...extra });

let relay: SlackRelay;
useSlackRelay((started) => (relay = started));

async function click(actionId: string, value: Record<string, unknown>) {
  const response = await relay.post(blockAction({ actionId, value: encodeButton(value as { r: string }) }));
  expect(response.status).toBe(200);
  await relay.settle();
}

/** Clicks a button that opens a modal and returns the modal's metadata as Slack would send it back. */
async function openModal(actionId: string, value: Record<string, unknown>, callbackId: string) {
  await click(actionId, value);
  const view = relay.api.callsTo("views.open").at(-1)?.args.view as { callback_id: string; private_metadata: string };
  expect(view.callback_id).toBe(callbackId);
  return view.private_metadata;
}

const submit = (callbackId: string, privateMetadata: string, values: Record<string, Record<string, unknown>>) =>
  relay.post(viewSubmission({ callbackId, privateMetadata, values }));
const at = (field: { block: string; action: string }, element: unknown) => ({ [field.block]: { [field.action]: element } });

async function decisionOf(id: string) {
  const record = await relay.service.wait(id, 1000);
  expect(record?.status).toBe("answered");
  expect(hasNoButtons(relay.api.callsTo("chat.update")[0]?.args.blocks)).toBe(true);
  return record?.decision;
}

describe("AskUserQuestion", () => {
  it("a one-tap option button answers with the option's label", async () => {
    relay.api.onPost().on("chat.update");
    const record = await relay.create(ask(colour));
    await click(Action.option, { r: record.id, q: 0, o: 2 });
    expect(await decisionOf(record.id)).toStrictEqual({ answers: { "Which colour?": "Blue" } });
    relay.api.done();
  });

  it("Other… opens a modal for the question; empty text is refused, typed text becomes the answer", async () => {
    relay.api.onPost().on("views.open").on("chat.update");
    const record = await relay.create(ask(colour));
    const meta = await openModal(Action.other, { r: record.id, q: 0 }, View.other);
    expect(decodeMetadata(meta)).toMatchObject({ r: record.id, q: 0 });

    const refused = await submit(View.other, meta, at(Field.otherText, state.text("   ")));
    expect(refused.json()).toEqual({ response_action: "errors", errors: { [Field.otherText.block]: expect.any(String) } });
    await relay.settle();
    expect((await relay.service.get(record.id))?.status).toBe("pending");

    const accepted = await submit(View.other, meta, at(Field.otherText, state.text("Mauve")));
    expect(accepted.text).toBe("");
    await relay.settle();
    expect(await decisionOf(record.id)).toStrictEqual({ answers: { "Which colour?": "Mauve" } });
    relay.api.done();
  });

  it("several questions go through the Answer… modal; missing answers are refused per question, then labels come back joined", async () => {
    relay.api.onPost().on("views.open").on("chat.update");
    const record = await relay.create(ask(colour, toppings));
    const meta = await openModal(Action.answer, { r: record.id }, View.answer);

    const refused = await submit(View.answer, meta, { ...at(Field.question(0), state.radio(null)), ...at(Field.question(1), state.checkboxes([OTHER_VALUE])) });
    expect(refused.json()).toEqual({
      response_action: "errors",
      errors: { [Field.question(0).block]: "Choose an answer.", [Field.questionOther(1).block]: expect.any(String) },
    });
    await relay.settle();
    expect((await relay.service.get(record.id))?.status).toBe("pending");

    await submit(View.answer, meta, {
      ...at(Field.question(0), state.radio("1")),
      ...at(Field.question(1), state.checkboxes(["2", OTHER_VALUE, "0"])),
      ...at(Field.questionOther(1), state.text("Pineapple")),
    });
    await relay.settle();
    expect(await decisionOf(record.id)).toStrictEqual({ answers: { "Which colour?": "Green", "Which toppings?": "Cheese, Olives, Pineapple" } });
    relay.api.done();
  });

  it("a reply in the thread answers every question in free text", async () => {
    relay.api.onPost().on("chat.update");
    const record = await relay.create(ask(colour, toppings));
    await relay.post(messageEvent({ text: "Green, and no toppings please", threadTs: MESSAGE_TS }));
    await relay.settle();
    const text = "Green, and no toppings please";
    expect(await decisionOf(record.id)).toStrictEqual({ answers: { "Which colour?": text, "Which toppings?": text }, response: text });
  });

  it("an Other… submission for a request with several questions is closed and ignored", async () => {
    relay.api.onPost();
    const record = await relay.create(ask(colour, toppings));
    const meta = encodeMetadata({ r: record.id, q: 0, c: CHANNEL, ts: MESSAGE_TS });
    const response = await submit(View.other, meta, at(Field.otherText, state.text("Mauve")));
    expect(response.text).toBe("");
    await relay.settle();
    expect((await relay.service.get(record.id))?.status).toBe("pending");
  });

  it("an option button on a request that is not one-tap is ignored", async () => {
    relay.api.onPost();
    const record = await relay.create(ask(colour, toppings));
    await click(Action.option, { r: record.id, q: 0, o: 0 });
    expect((await relay.service.get(record.id))?.status).toBe("pending");
  });
});

describe("InteractiveQuestion", () => {
  it.each([
    [Action.confirmYes, true],
    [Action.confirmNo, false],
  ])("a one-tap confirm %s answers %s", async (actionId, answer) => {
    relay.api.onPost().on("chat.update");
    const record = await relay.create(interactive([{ id: "deploy", question: "Deploy v1.2.3 to production?", type: "confirm" }]));
    await click(actionId, { r: record.id, q: 0 });
    expect(await decisionOf(record.id)).toStrictEqual({ answers: { deploy: answer } });
  });

  it("a one-tap choice answers with the option, and defaults fill the questions nobody was shown", async () => {
    relay.api.onPost().on("chat.update");
    const record = await relay.create(
      interactive(
        [
          { id: "region", question: "Region?", type: "choice", options: ["eu", "us"], default: "eu" },
          { id: "env", question: "Environment?", type: "choice", options: ["staging", "production"] },
        ],
        { autonomous: true },
      ),
    );
    await click(Action.option, { r: record.id, q: 1, o: 1 });
    expect(await decisionOf(record.id)).toStrictEqual({ answers: { region: "eu", env: "production" } });
  });

  it("the Answer… modal enforces pattern and required next to each field before anything is recorded", async () => {
    relay.api.onPost().on("views.open").on("chat.update");
    const record = await relay.create(
      interactive([
        { id: "ticket", question: "Ticket?", type: "text", pattern: "[A-Z]+-\\d+" },
        { id: "regions", question: "Regions?", type: "multiChoice", options: ["eu", "us", "ap"] },
        { id: "note", question: "Note?", type: "text", required: false, default: "none" },
      ]),
    );
    const meta = await openModal(Action.answer, { r: record.id }, View.answer);

    const refused = await submit(View.answer, meta, {
      ...at(Field.question(0), state.text("ops 1")),
      ...at(Field.question(1), state.multiSelect([])),
      ...at(Field.question(2), state.text(null)),
    });
    expect(refused.json()).toEqual({
      response_action: "errors",
      errors: { [Field.question(0).block]: "The answer must match the format [A-Z]+-\\d+", [Field.question(1).block]: "This question needs an answer." },
    });
    await relay.settle();
    expect((await relay.service.get(record.id))?.status).toBe("pending");

    await submit(View.answer, meta, {
      ...at(Field.question(0), state.text("OPS-1")),
      ...at(Field.question(1), state.multiSelect(["2", "0"])),
      ...at(Field.question(2), state.text(null)),
    });
    await relay.settle();
    expect(await decisionOf(record.id)).toStrictEqual({ answers: { ticket: "OPS-1", regions: ["eu", "ap"], note: "none" } });
    relay.api.done();
  });

  it("in autonomous mode with nothing left for a person, the request is answered at once and nothing is posted", async () => {
    const record = await relay.create(interactive([{ id: "env", question: "Env?", type: "choice", options: ["a", "b"], default: "b" }], { autonomous: true }));
    expect(record.status).toBe("answered");
    expect(record.decision).toStrictEqual({ answers: { env: "b" } });
    expect(relay.api.calls).toEqual([]);
  });
});
