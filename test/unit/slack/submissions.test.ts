import { describe, expect, it } from "vitest";
import type { AskUserQuestionBody, InteractiveQuestionsBody } from "../../../src/protocol/request-body.js";
import { Field, OTHER_VALUE } from "../../../src/slack/ids.js";
import {
  MESSAGES,
  optionIndex,
  parseAskSubmission,
  parseDenyReasonSubmission,
  parseEditSubmission,
  parseInteractiveSubmission,
  parseOtherSubmission,
  parseStateValues,
} from "../../../src/slack/submissions.js";
import { recordOf, state } from "../../helpers/slack.js";

const at = (field: { block: string; action: string }, element: unknown) => ({ [field.block]: { [field.action]: element } });
const values = (...parts: Array<Record<string, Record<string, unknown>>>) => parseStateValues(Object.assign({}, ...parts));

const askBody = (questions: unknown[]) => recordOf({ kind: "ask_user_question", questions }).body as AskUserQuestionBody;
const interactiveBody = (questions: unknown[], autonomous?: boolean) =>
  recordOf({ kind: "interactive_questions", questions, ...(autonomous ? { autonomous } : {}) }).body as InteractiveQuestionsBody;

const colour = {
  question: "Which colour?",
  header: "Colour",
  options: [{ label: "Red" }, { label: "Green" }, { label: "Blue" }],
  multiSelect: false,
};
const toppings = { question: "Which toppings?", header: "Toppings", options: [{ label: "Cheese" }, { label: "Ham" }, { label: "Olives" }], multiSelect: true };

describe("edit modal", () => {
  it("when the edited input is a JSON object, the decision allows with that input", () => {
    const result = parseEditSubmission(values(at(Field.editJson, state.text('{"command":"ls -la","timeout":5}'))));
    expect(result).toEqual({ ok: true, decision: { behavior: "allow", updatedInput: { command: "ls -la", timeout: 5 } } });
  });

  it("when the text is not JSON, the error sits on the JSON field", () => {
    const result = parseEditSubmission(values(at(Field.editJson, state.text('{"command": "ls"'))));
    expect(result).toEqual({ ok: false, errors: { [Field.editJson.block]: MESSAGES.notJson } });
  });

  it.each([["[1,2]"], ["null"], ['"ls"'], ["42"], ["true"]])("when the JSON is %s rather than an object, it is refused", (text) => {
    const result = parseEditSubmission(values(at(Field.editJson, state.text(text))));
    expect(result).toEqual({ ok: false, errors: { [Field.editJson.block]: MESSAGES.notObject } });
  });

  it("when the field came back empty, it is refused as not JSON", () => {
    expect(parseEditSubmission(values())).toEqual({ ok: false, errors: { [Field.editJson.block]: MESSAGES.notJson } });
    expect(parseEditSubmission(values(at(Field.editJson, state.text(null))))).toEqual({ ok: false, errors: { [Field.editJson.block]: MESSAGES.notJson } });
  });
});

describe("deny-with-reason modal", () => {
  it("when a reason is typed, it becomes the deny message, trimmed", () => {
    const result = parseDenyReasonSubmission(values(at(Field.denyReason, state.text("  Not on a Friday.  "))), "alice");
    expect(result).toEqual({ ok: true, decision: { behavior: "deny", message: "Not on a Friday." } });
  });

  it.each([[null], [""], ["   "]])("when the reason is %j, the message names who denied", (text) => {
    const result = parseDenyReasonSubmission(values(at(Field.denyReason, state.text(text))), "alice");
    expect(result).toEqual({ ok: true, decision: { behavior: "deny", message: "Denied by alice in Slack." } });
  });

  it("when 'stop the agent' is ticked, the deny carries interrupt", () => {
    const result = parseDenyReasonSubmission(values(at(Field.denyReason, state.text("no")), at(Field.denyInterrupt, state.checkboxes(["interrupt"]))), "alice");
    expect(result).toEqual({ ok: true, decision: { behavior: "deny", message: "no", interrupt: true } });
  });

  it("when the box is left unticked, there is no interrupt key at all", () => {
    const result = parseDenyReasonSubmission(values(at(Field.denyInterrupt, state.checkboxes([]))), "bob");
    expect(result.ok && result.decision).toStrictEqual({ behavior: "deny", message: "Denied by bob in Slack." });
  });
});

describe("Other… modal", () => {
  const body = askBody([colour]);

  it("when text is typed, it answers the question", () => {
    const result = parseOtherSubmission(body, 0, values(at(Field.otherText, state.text(" Mauve "))));
    expect(result).toEqual({ ok: true, decision: { answers: { "Which colour?": "Mauve" } } });
  });

  it.each([[null], ["   "]])("when the text is %j, the error asks for an answer", (text) => {
    const result = parseOtherSubmission(body, 0, values(at(Field.otherText, state.text(text))));
    expect(result).toEqual({ ok: false, errors: { [Field.otherText.block]: MESSAGES.typeAnswer } });
  });

  it("when the metadata names a question that does not exist, nothing is accepted", () => {
    const result = parseOtherSubmission(body, 3, values(at(Field.otherText, state.text("Mauve"))));
    expect(result.ok).toBe(false);
  });
});

describe("answer modal for AskUserQuestion", () => {
  it("a single choice by radio or select answers with the option's label", () => {
    const body = askBody([colour]);
    expect(parseAskSubmission(body, values(at(Field.question(0), state.radio("1"))))).toEqual({
      ok: true,
      decision: { answers: { "Which colour?": "Green" } },
    });
    expect(parseAskSubmission(body, values(at(Field.question(0), state.select("2"))))).toEqual({
      ok: true,
      decision: { answers: { "Which colour?": "Blue" } },
    });
  });

  it("a multi-select joins the chosen labels with ', ' in option order", () => {
    const body = askBody([toppings]);
    const result = parseAskSubmission(body, values(at(Field.question(0), state.checkboxes(["2", "0"]))));
    expect(result).toEqual({ ok: true, decision: { answers: { "Which toppings?": "Cheese, Olives" } } });
    const viaSelect = parseAskSubmission(body, values(at(Field.question(0), state.multiSelect(["1"]))));
    expect(viaSelect).toEqual({ ok: true, decision: { answers: { "Which toppings?": "Ham" } } });
  });

  it("a multi-select with Other adds the typed text after the labels", () => {
    const body = askBody([toppings]);
    const result = parseAskSubmission(
      body,
      values(at(Field.question(0), state.checkboxes([OTHER_VALUE, "1"])), at(Field.questionOther(0), state.text("Pineapple"))),
    );
    expect(result).toEqual({ ok: true, decision: { answers: { "Which toppings?": "Ham, Pineapple" } } });
  });

  it("Other on a single choice puts the typed text as the value", () => {
    const body = askBody([colour]);
    const result = parseAskSubmission(body, values(at(Field.question(0), state.radio(OTHER_VALUE)), at(Field.questionOther(0), state.text(" Teal "))));
    expect(result).toEqual({ ok: true, decision: { answers: { "Which colour?": "Teal" } } });
  });

  it("text typed in the Other box without choosing Other counts as Other", () => {
    const body = askBody([colour]);
    const result = parseAskSubmission(body, values(at(Field.question(0), state.radio(null)), at(Field.questionOther(0), state.text("Teal"))));
    expect(result).toEqual({ ok: true, decision: { answers: { "Which colour?": "Teal" } } });
  });

  it("Other chosen with no text puts the error on the Other box", () => {
    const body = askBody([colour]);
    const result = parseAskSubmission(body, values(at(Field.question(0), state.radio(OTHER_VALUE)), at(Field.questionOther(0), state.text("  "))));
    expect(result).toEqual({ ok: false, errors: { [Field.questionOther(0).block]: MESSAGES.otherNeedsText } });
  });

  it("nothing chosen puts 'Choose an answer.' on the question", () => {
    const body = askBody([colour]);
    expect(parseAskSubmission(body, values(at(Field.question(0), state.radio(null))))).toEqual({
      ok: false,
      errors: { [Field.question(0).block]: "Choose an answer." },
    });
    expect(parseAskSubmission(body, values())).toEqual({ ok: false, errors: { [Field.question(0).block]: "Choose an answer." } });
  });

  it("a single choice with an option and Other text is refused: it takes one answer", () => {
    const body = askBody([colour]);
    const result = parseAskSubmission(body, values(at(Field.question(0), state.radio("0")), at(Field.questionOther(0), state.text("Teal"))));
    expect(result).toEqual({ ok: false, errors: { [Field.questionOther(0).block]: MESSAGES.oneAnswerOnly } });
  });

  it.each([["7"], ["-1"], ["01"], ["abc"], [""]])("an option value %j that names no option is refused", (value) => {
    const body = askBody([colour]);
    expect(parseAskSubmission(body, values(at(Field.question(0), state.radio(value))))).toEqual({
      ok: false,
      errors: { [Field.question(0).block]: MESSAGES.unknownOption },
    });
  });

  it("with several questions, every problem is reported at once and nothing is answered", () => {
    const body = askBody([colour, toppings]);
    const result = parseAskSubmission(body, values(at(Field.question(0), state.radio(null)), at(Field.question(1), state.checkboxes([OTHER_VALUE]))));
    expect(result).toEqual({
      ok: false,
      errors: { [Field.question(0).block]: "Choose an answer.", [Field.questionOther(1).block]: MESSAGES.otherNeedsText },
    });
  });

  it("with several questions all answered, each question text maps to its answer", () => {
    const body = askBody([colour, toppings]);
    const result = parseAskSubmission(body, values(at(Field.question(0), state.radio("0")), at(Field.question(1), state.checkboxes(["1", "0"]))));
    expect(result).toEqual({ ok: true, decision: { answers: { "Which colour?": "Red", "Which toppings?": "Cheese, Ham" } } });
  });
});

describe("answer modal for interactive questions", () => {
  const questions = [
    { id: "env", question: "Environment?", type: "choice", options: ["staging", "production"] },
    { id: "regions", question: "Regions?", type: "multiChoice", options: ["eu", "us", "ap"] },
    { id: "ticket", question: "Ticket?", type: "text", pattern: "[A-Z]+-\\d+" },
    { id: "notify", question: "Notify?", type: "confirm" },
  ];

  it("each question type becomes its value: choice string, multiChoice array in option order, text, confirm boolean", () => {
    const result = parseInteractiveSubmission(
      interactiveBody(questions),
      values(
        at(Field.question(0), state.radio("1")),
        at(Field.question(1), state.checkboxes(["2", "0"])),
        at(Field.question(2), state.text("OPS-42")),
        at(Field.question(3), state.radio("no")),
      ),
    );
    expect(result).toEqual({
      ok: true,
      decision: { answers: { env: "production", regions: ["eu", "ap"], ticket: "OPS-42", notify: false } },
    });
  });

  it("a text that misses its pattern and an unanswered required question get errors on their blocks", () => {
    const result = parseInteractiveSubmission(
      interactiveBody(questions),
      values(
        at(Field.question(0), state.select(null)),
        at(Field.question(1), state.multiSelect(["0"])),
        at(Field.question(2), state.text("ops 42")),
        at(Field.question(3), state.radio("yes")),
      ),
    );
    expect(result).toEqual({
      ok: false,
      errors: {
        [Field.question(0).block]: "This question needs an answer.",
        [Field.question(2).block]: "The answer must match the format [A-Z]+-\\d+",
      },
    });
  });

  it("an empty optional question takes its default", () => {
    const body = interactiveBody([{ id: "note", question: "Note?", type: "text", required: false, default: "none" }]);
    expect(parseInteractiveSubmission(body, values(at(Field.question(0), state.text(null))))).toEqual({
      ok: true,
      decision: { answers: { note: "none" } },
    });
  });

  it("in autonomous mode only the shown question is read; defaults fill the rest", () => {
    const body = interactiveBody(
      [
        { id: "env", question: "Environment?", type: "choice", options: ["staging", "production"], default: "staging" },
        { id: "ticket", question: "Ticket?", type: "text" },
      ],
      true,
    );
    const result = parseInteractiveSubmission(body, values(at(Field.question(1), state.text("OPS-1"))));
    expect(result).toEqual({ ok: true, decision: { answers: { env: "staging", ticket: "OPS-1" } } });
  });

  it.each([
    ["a choice index out of range", 0, state.radio("5")],
    ["a multiChoice index that is not a number", 1, state.checkboxes(["0", "x"])],
    ["a confirm value other than yes/no", 3, state.radio("maybe")],
  ])("%s is refused on its block", (_label, index, element) => {
    const result = parseInteractiveSubmission(interactiveBody(questions), values(at(Field.question(index), element)));
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.errors[Field.question(index).block]).toBe(MESSAGES.unknownOption);
  });
});

describe("state values from Slack", () => {
  it("a payload that is not Slack's shape counts as empty", () => {
    expect(parseStateValues("nope")).toEqual({});
    expect(parseStateValues({ q0: { value: { selected_options: "not a list" } } })).toEqual({});
  });

  it("option values are plain non-negative integers only", () => {
    expect(optionIndex("0")).toBe(0);
    expect(optionIndex("12")).toBe(12);
    expect(optionIndex("1e2")).toBe(-1);
    expect(optionIndex(" 1")).toBe(-1);
  });
});
