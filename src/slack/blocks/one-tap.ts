/**
 * Whether a request is answered with the buttons in its message (Allow,
 * Yes / No / Stop, one button per option) rather than from the Answer… modal.
 */
import type { RequestRecord } from "../../requests/model.js";
import { askIsOneTap } from "./ask-user-question.js";
import { oneTapQuestion } from "./interactive.js";

export function isOneTap(record: RequestRecord): boolean {
  const body = record.body;
  switch (body.kind) {
    case "permission":
    case "step_gate":
      return true;
    case "ask_user_question":
      return askIsOneTap(body);
    case "interactive_questions":
      return oneTapQuestion(body) !== undefined;
  }
}
