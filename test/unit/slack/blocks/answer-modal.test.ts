import { describe, expect, it } from "vitest";
import { answerModal } from "../../../../src/slack/blocks/index.js";
import { checkViewLimits } from "../../../helpers/block-kit-limits.js";
import { encodeMetadata, Field, OTHER_VALUE, View, type ModalMetadata } from "../../../../src/slack/ids.js";
import { askRecord, interactiveRecord } from "../../../fixtures/records.js";
import { block, hiddenCharacters } from "../../../helpers/blocks.js";

const meta: ModalMetadata = { r: "req-0001", c: "C0123456789", ts: "1700000000.000100" };
const plain = (text: string) => ({ type: "plain_text", text });
const opt = (text: string, value: string, description?: string) =>
  description === undefined ? { text: plain(text), value } : { text: plain(text), value, description: plain(description) };

describe("Answer… modal for AskUserQuestion", () => {
  const record = askRecord({
    questions: [
      {
        question: "Which database?",
        header: "Database",
        options: [{ label: "PostgreSQL", description: "Relational" }, { label: "SQLite" }],
      },
      { question: "Which checks?", header: "", multiSelect: true, options: [{ label: "lint" }, { label: "test" }] },
    ],
  });

  it("puts radio buttons for a single-select question, with Other, and an optional Other answer box", () => {
    const view = answerModal(record, meta);
    expect(view).toMatchObject({
      callback_id: View.answer,
      submit: plain("Submit"),
      close: plain("Cancel"),
      private_metadata: encodeMetadata(meta),
    });
    expect(block(view, Field.question(0).block)).toEqual({
      type: "input",
      block_id: "q0",
      dispatch_action: false,
      optional: true,
      label: plain("Database"),
      hint: plain("Which database?"),
      element: {
        type: "radio_buttons",
        action_id: Field.question(0).action,
        options: [opt("PostgreSQL", "0", "Relational"), opt("SQLite", "1"), opt("Other", OTHER_VALUE)],
      },
    });
    expect(block(view, Field.questionOther(0).block)).toEqual({
      type: "input",
      block_id: "q0_other",
      dispatch_action: false,
      optional: true,
      label: plain("Other answer"),
      element: { type: "plain_text_input", action_id: Field.questionOther(0).action, multiline: false },
    });
    expect(checkViewLimits(view)).toEqual([]);
  });

  it("puts checkboxes for a multi-select question, labelled with its text when the header is empty", () => {
    const question = block(answerModal(record, meta), Field.question(1).block);
    expect(question).toMatchObject({
      label: plain("Which checks?"),
      optional: true,
      element: { type: "checkboxes", options: [opt("lint", "0"), opt("test", "1"), opt("Other", OTHER_VALUE)] },
    });
    expect(question?.hint).toBeUndefined();
  });

  it("cuts option texts and descriptions to 75 characters and puts a cut question in the hint", () => {
    const long = askRecord({
      questions: [{ question: "Q".repeat(3000), options: [{ label: "L".repeat(1000), description: "D".repeat(5000) }, { label: "b" }] }],
    });
    const view = answerModal(long, meta);
    const input = block(view, "q0") as { label: { text: string }; hint: { text: string } };
    expect(input.label.text).toBe(`${"Q".repeat(1999)}…`);
    expect(input.hint.text).toBe(`${"Q".repeat(1499)}…`);
    expect(checkViewLimits(view)).toEqual([]);
  });
});

describe("Answer… modal for InteractiveQuestion", () => {
  it("builds one input per question shown, with defaults as initial values", () => {
    const many = Array.from({ length: 12 }, (_, i) => `o${i}`);
    const record = interactiveRecord({
      questions: [
        { id: "env", question: "Env?", type: "choice", options: ["staging", "prod"], default: "prod" },
        { id: "big", question: "Big?", type: "choice", options: many, required: false },
        { id: "regions", question: "Regions?", type: "multiChoice", options: ["eu", "us"], default: ["us"] },
        { id: "many", question: "Many?", type: "multiChoice", options: many, default: ["o11"] },
        { id: "name", question: "Name?", type: "text", default: "svc" },
        { id: "ver", question: "Version?", type: "text", pattern: "\\d+" },
        { id: "ok", question: "OK?", type: "confirm", default: true },
      ],
    });
    const view = answerModal(record, meta);
    expect(view).toMatchObject({ callback_id: View.answer, submit: plain("Submit"), close: plain("Cancel") });
    const element = (i: number) => block(view, `q${i}`)?.element;
    expect(element(0)).toEqual({
      type: "radio_buttons",
      action_id: "value",
      options: [opt("staging", "0"), opt("prod", "1")],
      initial_option: opt("prod", "1"),
    });
    expect(element(1)).toMatchObject({ type: "static_select", placeholder: plain("Choose one") });
    expect(block(view, "q1")?.optional).toBe(true);
    expect(block(view, "q0")?.optional).toBe(false);
    expect(element(2)).toEqual({
      type: "checkboxes",
      action_id: "value",
      options: [opt("eu", "0"), opt("us", "1")],
      initial_options: [opt("us", "1")],
    });
    expect(element(3)).toMatchObject({ type: "multi_static_select", initial_options: [opt("o11", "11")] });
    expect(element(4)).toEqual({ type: "plain_text_input", action_id: "value", multiline: true, initial_value: "svc" });
    expect(element(5)).toEqual({ type: "plain_text_input", action_id: "value", multiline: false });
    expect(block(view, "q5")?.hint).toEqual(plain("Must match the format \\d+"));
    expect(element(6)).toEqual({
      type: "radio_buttons",
      action_id: "value",
      options: [opt("Yes", "yes"), opt("No", "no")],
      initial_option: opt("Yes", "yes"),
    });
    expect(block(view, "q6")?.label).toEqual(plain("OK?"));
    expect(checkViewLimits(view)).toEqual([]);
  });

  it("leaves out the questions autonomous mode answers itself", () => {
    const record = interactiveRecord({
      autonomous: true,
      questions: [
        { id: "a", question: "A?", type: "confirm", default: true },
        { id: "b", question: "B?", type: "text" },
      ],
    });
    const ids = answerModal(record, meta).blocks.map((b) => b.block_id);
    expect(ids).toEqual(["q1"]);
  });

  it("does not pre-fill a text default too long for a text box, and says empty keeps it", () => {
    const record = interactiveRecord({ questions: [{ id: "t", question: "T?", type: "text", default: "d".repeat(5000) }] });
    const view = answerModal(record, meta);
    expect(block(view, "q0")?.element).not.toHaveProperty("initial_value");
    expect(block(view, "q0")?.hint).toEqual(plain("Leave empty to keep the default (5000 characters)"));
    expect(block(view, "q0")?.optional).toBe(true);
    expect(checkViewLimits(view)).toEqual([]);
  });

  it("does not pre-fill a text default with hidden characters, which a text box would show raw (issue 16.1)", () => {
    const record = interactiveRecord({ questions: [{ id: "t", question: "Branch?", type: "text", default: "main\u202E; rm -rf ~" }] });
    const view = answerModal(record, meta);
    expect(block(view, "q0")?.element).not.toHaveProperty("initial_value");
    expect(block(view, "q0")?.hint).toEqual(plain("Leave empty to keep the default shown in the message (it has hidden characters)"));
    expect(block(view, "q0")?.optional).toBe(true);
    expect(hiddenCharacters(view)).toEqual([]);
  });
});
