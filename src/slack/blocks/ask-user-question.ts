/**
 * Claude's AskUserQuestion: each question with its header chip, options,
 * descriptions and previews. A single single-select question is answered in
 * one tap (a button per option, plus Other…); anything else opens the
 * answer modal from an Answer… button. The question, its header chip and
 * each option are the agent's words, so every line of them is block-quoted
 * under "The agent asks:": none can pass for the relay's own status lines.
 */
import type { RequestRecord } from "../../requests/model.js";
import type { AskUserQuestionBody } from "../../protocol/request-body.js";
import { Action, encodeButton } from "../ids.js";
import type { Leaf } from "./budget.js";
import { actions, button, section } from "./elements.js";
import type { KindViewOf } from "./kind.js";
import { LIMITS } from "./limit-values.js";
import { cutShort } from "./text.js";
import { boldFirstLine, quoteLines } from "./escape.js";
import { AGENT_ASKS } from "./common.js";

/** Header chips are meant to be short; longer ones are cut for display. */
export const CHIP_LENGTH = 30;

function bodyOf(record: RequestRecord): AskUserQuestionBody {
  if (record.body.kind !== "ask_user_question") throw new Error(`not an AskUserQuestion request: ${record.body.kind}`);
  return record.body;
}

/** One question, single-select: answered with the buttons in the message. */
export function askIsOneTap(body: AskUserQuestionBody): boolean {
  return body.questions.length === 1 && body.questions[0]?.multiSelect === false;
}

export const askUserQuestionView: KindViewOf = (record) => {
  const body = bodyOf(record);
  return {
    leaves: askLeaves(body),
    content(fit, mode) {
      const oneTap = mode === "pending" && askIsOneTap(body);
      return body.questions.flatMap((question, i) => {
        const chip = question.header ? `${boldFirstLine(quoteLines(cutShort(question.header, CHIP_LENGTH)))}\n` : "";
        const multi = question.multiSelect ? "\n_Choose one or more._" : "";
        const options = question.options.map((option, j) => {
          const key = `q${i}_o${j}`;
          let text = boldFirstLine(fit.text(`${key}_label`));
          if (option.description) text += `\n${fit.text(`${key}_desc`)}`;
          if (option.preview) text += `\n${fit.code(`${key}_preview`)[0] ?? ""}`;
          const pick = oneTap ? button(cutShort(option.label, LIMITS.buttonText), Action.option, encodeButton({ r: record.id, q: i, o: j })) : undefined;
          return section(key, text, pick);
        });
        return [section(`q${i}`, `${AGENT_ASKS}${chip}${fit.text(`q${i}`)}${multi}`), ...options];
      });
    },
    controls() {
      if (askIsOneTap(body)) {
        return [actions("actions", [button("Other…", Action.other, encodeButton({ r: record.id, q: 0 }))])];
      }
      return [actions("actions", [button("Answer…", Action.answer, encodeButton({ r: record.id }), { style: "primary" })])];
    },
    summary: body.questions[0]?.question ?? "",
  };
};

function askLeaves(body: AskUserQuestionBody): Leaf[] {
  const leaves: Leaf[] = [];
  body.questions.forEach((question, i) => {
    leaves.push({ key: `q${i}`, raw: question.question, encoding: "quote", weight: 3, cap: 1500 });
    question.options.forEach((option, j) => {
      const key = `q${i}_o${j}`;
      leaves.push({ key: `${key}_label`, raw: option.label, encoding: "quote", weight: 1, cap: 300 });
      if (option.description) leaves.push({ key: `${key}_desc`, raw: option.description, encoding: "quote", weight: 2, cap: 1200 });
      if (option.preview) {
        leaves.push({ key: `${key}_preview`, raw: option.preview, encoding: "code", weight: 2, cap: 1300, perChunk: 1300 });
      }
    });
  });
  return leaves;
}
