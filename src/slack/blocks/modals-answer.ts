/**
 * The Answer… modal: one input block per question (label: the question's
 * header or text; the full question in the hint when the label is not the
 * whole of it). Option values are option indexes; AskUserQuestion adds an
 * "Other" choice and an "Other answer" text box per question. Validation
 * happens in the listener, which returns errors next to each field.
 */
import type { InputBlock, InputBlockElement, KnownBlock, ModalView, PlainTextOption } from "@slack/types";
import type { RequestRecord } from "../../requests/model.js";
import type { AskQuestion, InteractiveQuestion } from "../../protocol/request-body.js";
import { Field, OTHER_VALUE, View, type ModalMetadata } from "../ids.js";
import { plain, section } from "./elements.js";
import { escapeMrkdwn } from "./escape.js";
import { shownQuestions } from "./interactive.js";
import { LIMITS } from "./limit-values.js";
import { modal, noticeModal, textInput } from "./modals.js";
import { cutShort } from "./text.js";
import { hasHidden } from "../../protocol/visible-text.js";

const HINT_QUESTION_MAX = 1500;

export function answerModal(record: RequestRecord, meta: ModalMetadata): ModalView {
  const body = record.body;
  let questions: KnownBlock[] = [];
  if (body.kind === "ask_user_question") questions = body.questions.flatMap((question, i) => askInputs(question, i));
  if (body.kind === "interactive_questions") {
    questions = shownQuestions(body).map(({ question, index }) => interactiveInput(question, index));
  }
  if (questions.length === 0) return noticeModal(View.answer, "Answer the agent", "There is nothing to answer here.", meta);
  const intro = body.title ? [section("intro", `*${cutShort(body.title, 500)}*`)] : [];
  return modal({ callbackId: View.answer, title: "Answer the agent", submit: "Submit", metadata: meta, blocks: [...intro, ...questions] });
}

function option(text: string, value: string, description?: string): PlainTextOption {
  const result: PlainTextOption = { text: plain(cutShort(text, LIMITS.optionText) || value), value };
  if (description) result.description = plain(cutShort(description, LIMITS.optionDescription));
  return result;
}

/** Label and hint for a question: the label is `label` cut to fit; the question goes to the hint unless the label shows it whole. */
function labelled(label: string, question: string, extraHint: string[], optional: boolean, element: InputBlockElement, index: number): InputBlock {
  const shownLabel = cutShort(label, LIMITS.inputLabel);
  const showsWholeQuestion = label === question && shownLabel === escapeMrkdwn(question);
  const hints = showsWholeQuestion ? [] : [cutShort(question, HINT_QUESTION_MAX)];
  const block: InputBlock = {
    type: "input",
    block_id: Field.question(index).block,
    dispatch_action: false,
    optional,
    label: plain(shownLabel),
    element,
  };
  const hint = [...hints, ...extraHint].join(" · ");
  if (hint) block.hint = plain(cutShort(hint, LIMITS.inputHint));
  return block;
}

function askInputs(question: AskQuestion, index: number): InputBlock[] {
  const options = [...question.options.map((choice, j) => option(choice.label, String(j), choice.description)), option("Other", OTHER_VALUE)];
  const action_id = Field.question(index).action;
  const element: InputBlockElement = question.multiSelect ? { type: "checkboxes", action_id, options } : { type: "radio_buttons", action_id, options };
  return [
    labelled(question.header || question.question, question.question, [], true, element, index),
    textInput(Field.questionOther(index), "Other answer", { multiline: false, optional: true }),
  ];
}

function interactiveInput(question: InteractiveQuestion, index: number): InputBlock {
  const action_id = Field.question(index).action;
  const choices = (question.options ?? []).map((text, o) => option(text, String(o)));
  const pick = (value: string) => choices.find((choice) => choice.value === String((question.options ?? []).indexOf(value)));
  const hints: string[] = [];
  let element: InputBlockElement;
  // A default kept out of the text box may be left empty, even on a required question: empty takes the default.
  let emptyKeepsDefault = false;
  switch (question.type) {
    case "choice": {
      const initial = typeof question.default === "string" ? pick(question.default) : undefined;
      element =
        choices.length <= LIMITS.choiceOptions
          ? { type: "radio_buttons", action_id, options: choices }
          : { type: "static_select", action_id, options: choices, placeholder: plain("Choose one") };
      if (initial) element.initial_option = initial;
      break;
    }
    case "multiChoice": {
      const initial = Array.isArray(question.default) ? question.default.map(pick).filter((o) => o !== undefined) : [];
      element =
        choices.length <= LIMITS.choiceOptions
          ? { type: "checkboxes", action_id, options: choices }
          : { type: "multi_static_select", action_id, options: choices, placeholder: plain("Choose any") };
      if (initial.length > 0) element.initial_options = initial;
      break;
    }
    case "confirm": {
      const yesNo = [option("Yes", "yes"), option("No", "no")];
      element = { type: "radio_buttons", action_id, options: yesNo };
      if (typeof question.default === "boolean") element.initial_option = question.default ? yesNo[0] : yesNo[1];
      break;
    }
    case "text": {
      element = { type: "plain_text_input", action_id, multiline: question.pattern === undefined };
      if (question.pattern !== undefined) hints.push(`Must match the format ${cutShort(question.pattern, 300)}`);
      if (typeof question.default === "string") {
        // A text box shows its text raw, so a default with hidden characters is kept out of it: the message shows it marked.
        if (hasHidden(question.default)) hints.push("Leave empty to keep the default shown in the message (it has hidden characters)");
        else if (question.default.length <= LIMITS.initialValue) element.initial_value = question.default;
        else hints.push(`Leave empty to keep the default (${question.default.length} characters)`);
        emptyKeepsDefault = element.initial_value === undefined;
      }
      break;
    }
  }
  return labelled(question.question, question.question, hints, !question.required || emptyKeepsDefault, element, index);
}
