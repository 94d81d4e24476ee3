/**
 * InteractiveQuestion[]: only the questions a person must answer (autonomous
 * mode answers the rest), each with its type, format, default and whether it
 * is optional. One confirm or one choice is answered in one tap; anything
 * else opens the answer modal. The question, its options, format and default
 * are the agent's words, so every line of them is block-quoted under "The
 * agent asks:" (labels such as "Default:" are the relay's own): none can pass
 * for the relay's own status lines.
 */
import type { KnownBlock } from "@slack/types";
import { questionsForPerson } from "../../requests/interactive.js";
import type { RequestRecord } from "../../requests/model.js";
import type { InteractiveQuestion, InteractiveQuestionsBody } from "../../protocol/request-body.js";
import { Action, encodeButton } from "../ids.js";
import type { Leaf } from "./budget.js";
import { actions, button, section } from "./elements.js";
import type { KindViewOf } from "./kind.js";
import { LIMITS } from "./limit-values.js";
import { cutShort } from "./text.js";
import { boldFirstLine } from "./escape.js";
import { AGENT_ASKS } from "./common.js";

/** More options than this and a choice is answered in the modal instead of with buttons. */
export const MAX_CHOICE_BUTTONS = 20;

function bodyOf(record: RequestRecord): InteractiveQuestionsBody {
  if (record.body.kind !== "interactive_questions") throw new Error(`not an interactive request: ${record.body.kind}`);
  return record.body;
}

/** The questions shown to a person, with their index in body.questions. */
export function shownQuestions(body: InteractiveQuestionsBody): Array<{ question: InteractiveQuestion; index: number }> {
  return questionsForPerson(body).map((question) => ({ question, index: body.questions.indexOf(question) }));
}

/** The one question answered with buttons in the message, if the request is one tap. */
export function oneTapQuestion(body: InteractiveQuestionsBody): { question: InteractiveQuestion; index: number } | undefined {
  const shown = shownQuestions(body);
  const only = shown[0];
  if (shown.length !== 1 || !only) return undefined;
  const { type, options = [] } = only.question;
  return type === "confirm" || (type === "choice" && options.length <= MAX_CHOICE_BUTTONS) ? only : undefined;
}

/** A default or an answer as people read it. */
export function displayValue(value: string | string[] | boolean): string {
  if (typeof value === "boolean") return value ? "Yes" : "No";
  return Array.isArray(value) ? value.join(", ") : value;
}

const HINTS = { choice: "Choose one", multiChoice: "Choose any", text: "Type an answer", confirm: "Yes or no" } as const;

export const interactiveView: KindViewOf = (record) => {
  const body = bodyOf(record);
  const shown = shownQuestions(body);
  const only = oneTapQuestion(body);
  return {
    leaves: shown.flatMap(({ question, index }) => questionLeaves(question, index, only?.index !== index)),
    content(fit) {
      if (shown.length === 0) return [section("none", "_Every question was answered automatically._")];
      return shown.map(({ question, index }) => {
        const lines = [`${AGENT_ASKS}${boldFirstLine(fit.text(`q${index}`))}`, `_${HINTS[question.type]}${question.required ? "" : " · optional"}_`];
        const options = fit.text(`q${index}_opts`);
        if (options) lines.push(options);
        if (question.pattern) lines.push(`Format:\n${fit.text(`q${index}_pattern`)}`);
        if (question.default !== undefined) lines.push(`Default:\n${fit.text(`q${index}_default`)}`);
        return section(`q${index}`, lines.join("\n"));
      });
    },
    controls() {
      if (only?.question.type === "confirm") {
        const value = encodeButton({ r: record.id, q: only.index });
        return [actions("actions", [button("Yes", Action.confirmYes, value, { style: "primary" }), button("No", Action.confirmNo, value)])];
      }
      if (only) {
        return (only.question.options ?? []).map((option, o): KnownBlock =>
          actions(`q${only.index}_o${o}`, [button(cutShort(option, LIMITS.buttonText), Action.option, encodeButton({ r: record.id, q: only.index, o }))]),
        );
      }
      if (shown.length === 0) return [];
      return [actions("actions", [button("Answer…", Action.answer, encodeButton({ r: record.id }), { style: "primary" })])];
    },
    summary: (shown[0]?.question ?? body.questions[0])?.question ?? "",
  };
};

function questionLeaves(question: InteractiveQuestion, index: number, listOptions: boolean): Leaf[] {
  const leaves: Leaf[] = [{ key: `q${index}`, raw: question.question, encoding: "quote", weight: 3, cap: 1200 }];
  if (question.options && listOptions) {
    const raw = question.options.map((option) => `• ${option}`).join("\n");
    leaves.push({ key: `q${index}_opts`, raw, encoding: "quote", weight: 1, cap: 1000 });
  }
  if (question.default !== undefined) {
    leaves.push({ key: `q${index}_default`, raw: displayValue(question.default), encoding: "quote", weight: 1, cap: 400 });
  }
  if (question.pattern) leaves.push({ key: `q${index}_pattern`, raw: question.pattern, encoding: "quote", weight: 1, cap: 200 });
  return leaves;
}
