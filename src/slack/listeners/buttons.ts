/**
 * What a click on a request message's button means, as a pure function:
 * a decision to record, a modal to open, or nothing (a button that does not
 * belong to this kind of request). Kept apart from the Bolt wiring so every
 * rule is testable on plain data.
 */
import { defaultDenyMessage } from "../../requests/decisions.js";
import { type Decision } from "../../protocol/decisions.js";
import { questionsForPerson, resolveInteractiveAnswers } from "../../requests/interactive.js";
import type { RequestRecord } from "../../requests/model.js";
import type { InteractiveQuestionsBody } from "../../protocol/request-body.js";
import { isOneTap } from "../blocks/index.js";
import { alwaysAllowGrant, alwaysAllowScope } from "../../requests/always-allow.js";
import { alwaysAllowListFits, offersEdit, showsAlwaysAllow } from "../blocks/permission.js";
import { Action, type ButtonValue } from "../ids.js";
import { takesRules } from "../../requests/rule-matching.js";

export type ModalName = "edit" | "denyReason" | "other" | "answer" | "input" | "alwaysAllow";

export type ButtonOutcome =
  | { type: "decision"; decision: Decision }
  /** "Allow for a while": the service answers and creates the rule (RequestService.allowForAWhile). */
  | { type: "rule" }
  | { type: "modal"; modal: ModalName; questionIndex?: number }
  | { type: "ignore"; reason: string };

/**
 * @param clickerName the clicker's Slack name, for "Denied by <name> in Slack."
 */
export function interpretButton(record: RequestRecord, actionId: string, value: ButtonValue, clickerName: string): ButtonOutcome {
  const body = record.body;
  if (actionId === Action.viewInput) return modal("input");
  // Whatever the request's status: a click on an ended one is told so, like any answer.
  if (actionId === Action.allowForAWhile) return takesRules(record) ? { type: "rule" } : ignore("no rule on this request");
  switch (body.kind) {
    case "permission":
      switch (actionId) {
        case Action.allow:
          return decide({ behavior: "allow", updatedInput: body.input });
        case Action.alwaysAllow:
          if (!showsAlwaysAllow(record)) return ignore("no always-allow rule to offer");
          // Rules too long for the message are shown in full in a confirm modal before anything is granted.
          if (!alwaysAllowListFits(record)) return modal("alwaysAllow");
          return decide({ behavior: "allow", updatedInput: body.input, updatedPermissions: alwaysAllowGrant(body, alwaysAllowScope(record)).granted });
        case Action.edit:
          // Not offered under a quorum: every approver approves the call as asked.
          return offersEdit(record) ? modal("edit") : ignore("no Edit… on this request");
        case Action.deny:
          return decide({ behavior: "deny", message: defaultDenyMessage(clickerName) });
        case Action.denyWithReason:
          return modal("denyReason");
        case Action.denyAndStop:
          return decide({ behavior: "deny", message: defaultDenyMessage(clickerName), interrupt: true });
      }
      break;
    case "step_gate":
      switch (actionId) {
        case Action.stepYes:
          return decide({ reply: "y" });
        case Action.stepNo:
          return decide({ reply: "n" });
        case Action.stepStop:
          return decide({ reply: "q" });
      }
      break;
    case "ask_user_question": {
      if (actionId === Action.answer) return modal("answer");
      if (!isOneTap(record)) break;
      const index = value.q ?? 0;
      const question = body.questions[index];
      if (!question || question.multiSelect) return ignore("not a one-tap question");
      if (actionId === Action.other) return modal("other", index);
      if (actionId !== Action.option) break;
      const option = value.o === undefined ? undefined : question.options[value.o];
      if (!option) return ignore("unknown option");
      return decide({ answers: { [question.question]: option.label } });
    }
    case "interactive_questions": {
      if (actionId === Action.answer) return modal("answer");
      if (!isOneTap(record)) break;
      if (actionId === Action.option) return oneTapInteractive(body, value, "choice");
      if (actionId === Action.confirmYes) return oneTapInteractive(body, value, "confirm", true);
      if (actionId === Action.confirmNo) return oneTapInteractive(body, value, "confirm", false);
      break;
    }
  }
  return ignore(`${actionId} does not apply to a ${body.kind} request`);
}

/** A one-tap choice or confirm answers the one question a person sees; defaults fill the rest. */
function oneTapInteractive(body: InteractiveQuestionsBody, value: ButtonValue, type: "choice" | "confirm", confirmed?: boolean): ButtonOutcome {
  const question = value.q === undefined ? questionsForPerson(body)[0] : body.questions[value.q];
  if (!question || question.type !== type || !questionsForPerson(body).includes(question)) {
    return ignore("not the question this request shows");
  }
  const answer = type === "confirm" ? confirmed : value.o === undefined ? undefined : question.options?.[value.o];
  if (answer === undefined) return ignore("unknown option");
  const result = resolveInteractiveAnswers(body, { [question.id]: answer });
  return result.ok ? decide(result.decision) : ignore(`answer rejected: ${Object.values(result.errors).join("; ")}`);
}

const decide = (decision: Decision): ButtonOutcome => ({ type: "decision", decision });
const ignore = (reason: string): ButtonOutcome => ({ type: "ignore", reason });
function modal(name: ModalName, questionIndex?: number): ButtonOutcome {
  return questionIndex === undefined ? { type: "modal", modal: name } : { type: "modal", modal: name, questionIndex };
}
