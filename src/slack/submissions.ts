/**
 * Turns what Slack sends back from a modal (view.state.values) into a
 * decision, or into errors keyed by block_id for `response_action: "errors"`.
 * Pure and synchronous: the view_submission listener validates before it
 * acks, and nothing is recorded until the answer is valid.
 */
import { z } from "zod";
import { defaultDenyMessage } from "../requests/decisions.js";
import { type Decision } from "../protocol/decisions.js";
import { resolveInteractiveAnswers, type SubmittedValues } from "../requests/interactive.js";
import type { AskQuestion, AskUserQuestionBody, InteractiveQuestion, InteractiveQuestionsBody } from "../protocol/request-body.js";
import { Field, OTHER_VALUE } from "./ids.js";

const Option = z.looseObject({ value: z.string() });
const ElementState = z.looseObject({
  type: z.string().optional(),
  value: z.string().nullish(),
  selected_option: Option.nullish(),
  selected_options: z.array(Option).nullish(),
});
/** view.state.values: block_id → action_id → element state. */
export const StateValues = z.record(z.string(), z.record(z.string(), ElementState));
export type StateValues = z.infer<typeof StateValues>;

export type SubmissionResult =
  | { ok: true; decision: Decision }
  /** Messages keyed by block_id, as Slack's `response_action: "errors"` wants them. */
  | { ok: false; errors: Record<string, string> };

export const MESSAGES = {
  notJson: "This is not valid JSON. Fix it and submit again.",
  notObject: "The tool input must be a JSON object ({ … }), not an array, a string or null.",
  typeAnswer: "Type an answer.",
  chooseAnswer: "Choose an answer.",
  otherNeedsText: "Type your answer for Other, or choose another option.",
  oneAnswerOnly: "This question takes one answer: clear this text or choose Other.",
  unknownOption: "Choose one of the options.",
} as const;

/** Parses state values; anything that is not Slack's shape counts as empty. */
export function parseStateValues(raw: unknown): StateValues {
  const result = StateValues.safeParse(raw);
  return result.success ? result.data : {};
}

/** Edit… modal: the edited tool input must be a JSON object. */
export function parseEditSubmission(values: StateValues): SubmissionResult {
  const text = textOf(values, Field.editJson);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return fail(Field.editJson.block, MESSAGES.notJson);
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    return fail(Field.editJson.block, MESSAGES.notObject);
  }
  return { ok: true, decision: { behavior: "allow", updatedInput: parsed as Record<string, unknown> } };
}

/** Deny-with-reason modal; `name` is who denied, for the default message. */
export function parseDenyReasonSubmission(values: StateValues, name: string): SubmissionResult {
  const reason = textOf(values, Field.denyReason).trim();
  const interrupt = selectedValues(values, Field.denyInterrupt).includes("interrupt");
  const decision: Decision = { behavior: "deny", message: reason || defaultDenyMessage(name) };
  if (interrupt) decision.interrupt = true;
  return { ok: true, decision };
}

/** Other… modal of a one-tap AskUserQuestion: the typed text answers question `index`. */
export function parseOtherSubmission(body: AskUserQuestionBody, index: number, values: StateValues): SubmissionResult {
  const question = body.questions[index];
  const text = textOf(values, Field.otherText).trim();
  if (!question || text === "") return fail(Field.otherText.block, MESSAGES.typeAnswer);
  return { ok: true, decision: { answers: { [question.question]: text } } };
}

/** Answer… modal of an AskUserQuestion request. */
export function parseAskSubmission(body: AskUserQuestionBody, values: StateValues): SubmissionResult {
  const answers: Record<string, string> = {};
  const errors: Record<string, string> = {};
  body.questions.forEach((question, i) => {
    const result = askAnswer(question, i, values);
    if ("error" in result) errors[result.block] = result.error;
    else answers[question.question] = result.answer;
  });
  return Object.keys(errors).length > 0 ? { ok: false, errors } : { ok: true, decision: { answers } };
}

type AskAnswer = { answer: string } | { block: string; error: string };

/** One question: chosen labels in option order, then the Other text; joined with ", ". */
function askAnswer(question: AskQuestion, i: number, values: StateValues): AskAnswer {
  const block = Field.question(i).block;
  const otherBlock = Field.questionOther(i).block;
  const chosen = selectedValues(values, Field.question(i));
  const otherText = textOf(values, Field.questionOther(i)).trim();
  const picked = new Set<number>();
  for (const value of chosen) {
    if (value === OTHER_VALUE) continue;
    const index = optionIndex(value);
    if (!question.options[index]) return { block, error: MESSAGES.unknownOption };
    picked.add(index);
  }
  const otherChosen = chosen.includes(OTHER_VALUE) || otherText !== "";
  if (otherChosen && otherText === "") return { block: otherBlock, error: MESSAGES.otherNeedsText };
  if (!otherChosen && picked.size === 0) return { block, error: MESSAGES.chooseAnswer };
  if (!question.multiSelect && otherChosen && picked.size > 0) return { block: otherBlock, error: MESSAGES.oneAnswerOnly };
  const labels = question.options.filter((_, index) => picked.has(index)).map((option) => option.label);
  return { answer: [...labels, ...(otherChosen ? [otherText] : [])].join(", ") };
}

/** Answer… modal of an interactive_questions request; the rules live in requests/interactive.ts. */
export function parseInteractiveSubmission(body: InteractiveQuestionsBody, values: StateValues): SubmissionResult {
  const submitted: SubmittedValues = {};
  const errors: Record<string, string> = {};
  body.questions.forEach((question, i) => {
    const field = Field.question(i);
    if (!values[field.block]) return;
    const value = submittedValue(question, values, field);
    if (value === INVALID) errors[field.block] = MESSAGES.unknownOption;
    else submitted[question.id] = value;
  });
  if (Object.keys(errors).length > 0) return { ok: false, errors };
  const result = resolveInteractiveAnswers(body, submitted);
  if (result.ok) return { ok: true, decision: result.decision };
  const byBlock: Record<string, string> = {};
  body.questions.forEach((question, i) => {
    const message = result.errors[question.id];
    if (message !== undefined) byBlock[Field.question(i).block] = message;
  });
  return { ok: false, errors: byBlock };
}

const INVALID = Symbol("invalid option");
type FieldIds = { block: string; action: string };

function submittedValue(question: InteractiveQuestion, values: StateValues, field: FieldIds): SubmittedValues[string] | typeof INVALID {
  switch (question.type) {
    case "text":
      return textOf(values, field);
    case "confirm": {
      const [value] = selectedValues(values, field);
      if (value === undefined) return undefined;
      return value === "yes" ? true : value === "no" ? false : INVALID;
    }
    case "choice":
    case "multiChoice": {
      const options = question.options ?? [];
      const picked = selectedValues(values, field).map((value) => options[optionIndex(value)]);
      if (picked.some((option) => option === undefined)) return INVALID;
      const labels = picked as string[];
      return question.type === "choice" ? labels[0] : options.filter((option) => labels.includes(option));
    }
  }
}

/** "2" → 2; anything that is not a plain non-negative integer → -1 (never an option). */
export function optionIndex(value: string): number {
  return /^(0|[1-9]\d{0,2})$/.test(value) ? Number(value) : -1;
}

function element(values: StateValues, field: FieldIds) {
  return values[field.block]?.[field.action];
}

function textOf(values: StateValues, field: FieldIds): string {
  return element(values, field)?.value ?? "";
}

/** The chosen option values of a radio, select, checkboxes or multi-select element. */
function selectedValues(values: StateValues, field: FieldIds): string[] {
  const state = element(values, field);
  if (!state) return [];
  if (state.selected_options) return state.selected_options.map((o) => o.value);
  return state.selected_option ? [state.selected_option.value] : [];
}

function fail(block: string, message: string): SubmissionResult {
  return { ok: false, errors: { [block]: message } };
}
