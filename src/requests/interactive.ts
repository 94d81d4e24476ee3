/**
 * InteractiveQuestion rules: which questions go to a person (autonomous
 * mode), and how submitted values become a valid `answers` object.
 */
import type { InteractiveAnswer, InteractiveQuestionsDecision } from "../protocol/decisions.js";
import { matchPattern } from "../protocol/pattern.js";
import type { InteractiveQuestion, InteractiveQuestionsBody } from "../protocol/request-body.js";

/** The questions a person must see; in autonomous mode only those with no default that are required. */
export function questionsForPerson(body: InteractiveQuestionsBody): InteractiveQuestion[] {
  if (!body.autonomous) return body.questions;
  return body.questions.filter((q) => q.default === undefined && q.required);
}

/** Answers the relay gives itself in autonomous mode: every default. */
export function autonomousAnswers(body: InteractiveQuestionsBody): Record<string, InteractiveAnswer> {
  const answers: Record<string, InteractiveAnswer> = {};
  for (const q of body.questions) if (q.default !== undefined) answers[q.id] = q.default;
  return answers;
}

export type SubmittedValues = Record<string, InteractiveAnswer | undefined>;

export type InteractiveResult =
  | { ok: true; decision: InteractiveQuestionsDecision }
  /** Errors keyed by question id. */
  | { ok: false; errors: Record<string, string> };

/**
 * Checks what a person submitted for the questions they were shown and
 * builds the decision: defaults fill the rest, empty non-required answers
 * take their default or are left out. Patterns match in linear time
 * (src/protocol/pattern.ts), so every answer is checked, however busy the
 * relay is.
 */
export function resolveInteractiveAnswers(body: InteractiveQuestionsBody, submitted: SubmittedValues): InteractiveResult {
  const shown = new Set(questionsForPerson(body).map((q) => q.id));
  const answers: Record<string, InteractiveAnswer> = {};
  const errors: Record<string, string> = {};
  for (const q of body.questions) {
    const value = shown.has(q.id) ? normalise(q, submitted[q.id]) : undefined;
    if (value === undefined) {
      if (q.default !== undefined) answers[q.id] = q.default;
      else if (q.required && shown.has(q.id)) errors[q.id] = "This question needs an answer.";
      continue;
    }
    const problem = check(q, value);
    if (problem) errors[q.id] = problem;
    else answers[q.id] = value;
  }
  return Object.keys(errors).length > 0 ? { ok: false, errors } : { ok: true, decision: { answers } };
}

/** Empty strings and empty selections count as "no answer". */
function normalise(q: InteractiveQuestion, value: InteractiveAnswer | undefined): InteractiveAnswer | undefined {
  if (value === undefined) return undefined;
  if (typeof value === "string" && value.trim() === "" && q.type !== "confirm") return undefined;
  if (Array.isArray(value) && value.length === 0) return undefined;
  return value;
}

function check(q: InteractiveQuestion, value: InteractiveAnswer): string | undefined {
  switch (q.type) {
    case "confirm":
      return typeof value === "boolean" ? undefined : "Choose Yes or No.";
    case "choice":
      return typeof value === "string" && (q.options ?? []).includes(value) ? undefined : "Choose one of the options.";
    case "multiChoice":
      return Array.isArray(value) && value.every((v) => (q.options ?? []).includes(v)) ? undefined : "Choose among the options.";
    case "text": {
      if (typeof value !== "string") return "Type an answer.";
      return q.pattern === undefined || matchPattern(q.pattern, value) ? undefined : `The answer must match the format ${q.pattern}`;
    }
  }
}
