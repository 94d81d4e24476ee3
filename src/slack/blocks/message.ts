/**
 * The request message, pending (with its buttons) and ended (buttons gone,
 * an outcome line in their place). The text budget is shared here: the
 * fixed parts are measured first, the agent's texts share what is left, and
 * room is kept for the outcome so the ended message fits as well.
 *
 * The "View full input" button sits in a section (not an actions block) and
 * stays in the ended message: it answers nothing, and after the decision
 * people still want to read what was approved.
 */
import type { KnownBlock } from "@slack/types";
import type { RequestRecord } from "../../requests/model.js";
import { Action, encodeButton } from "../ids.js";
import { approvalsBlocks } from "./approvers.js";
import { askUserQuestionView } from "./ask-user-question.js";
import { allocate, Fitter } from "./budget.js";
import { commonLeaves, headerText, topBlocks, type Mode } from "./common.js";
import { button, section } from "./elements.js";
import { interactiveView } from "./interactive.js";
import type { KindView, KindViewOf } from "./kind.js";
import { LIMITS } from "./limit-values.js";
import { withMoreTime } from "./more-time.js";
import { textObjectsLength, type SlackMessage } from "./limits.js";
import { OUTCOME_MAX, outcomeHeadline, outcomeText } from "./outcome.js";
import { permissionView } from "./permission.js";
import { stepGateView } from "./step-gate.js";
import { cutMiddle, oneLine } from "./text.js";
import { anyHidden } from "../../protocol/visible-text.js";

/** Kept free for safety: rounding in the shares and small decorations. */
const MARGIN = 300;
/** What an ended message adds: the outcome section and a longer fallback text. */
const ENDED_EXTRA = OUTCOME_MAX + 300;

const VIEWS: Record<RequestRecord["body"]["kind"], KindViewOf> = {
  permission: permissionView,
  step_gate: stepGateView,
  ask_user_question: askUserQuestionView,
  interactive_questions: interactiveView,
};

export function requestMessage(record: RequestRecord): SlackMessage {
  return render(record, "pending");
}

export function endedMessage(record: RequestRecord): SlackMessage {
  return render(record, record.status === "pending" ? "pending" : "ended");
}

function render(record: RequestRecord, mode: Mode): SlackMessage {
  const view = VIEWS[record.body.kind](record);
  const leaves = [...commonLeaves(record.body), ...view.leaves];
  const skeleton = compose(record, view, new Fitter(leaves), "pending", true);
  const fixed = skeleton.text.length + textObjectsLength(skeleton.blocks);
  const budget = LIMITS.messageText - MARGIN - ENDED_EXTRA - fixed;
  return compose(record, view, new Fitter(leaves, allocate(leaves, budget)), mode, false);
}

function compose(record: RequestRecord, view: KindView, fit: Fitter, mode: Mode, withNotice: boolean): SlackMessage {
  const blocks: KnownBlock[] = [...topBlocks(record, fit, mode), ...view.content(fit, mode)];
  if (withNotice || fit.cut) blocks.push(fullInputNotice(record));
  blocks.push(...approvalsBlocks(record));
  if (mode === "pending") blocks.push(...withMoreTime(record, view.controls()));
  else blocks.push(section("outcome", outcomeText(record)));
  return { text: fallbackText(record, view, mode), blocks };
}

function fullInputNotice(record: RequestRecord): KnownBlock {
  const open = button("View full input", Action.viewInput, encodeButton({ r: record.id, p: 0 }));
  return section("full_input", "_Some of this request was cut to fit in Slack._", open);
}

/** The notification text: what is asked (its tail never cut off), a warning when it hides characters, and once ended, how it ended. */
function fallbackText(record: RequestRecord, view: KindView, mode: Mode): string {
  const warning = anyHidden(record.body) ? "⚠️ Hidden characters · " : "";
  const asked = `${warning}${headerText(record.body)}: ${cutMiddle(oneLine(view.summary), 200)}`;
  return mode === "pending" ? asked : `${outcomeHeadline(record)} · ${asked}`;
}

/** What is asked, in one escaped line of at most `max` characters past the header: "Permission request: Bash: npm test". */
export function askedLine(record: RequestRecord, max = 200): string {
  return `${headerText(record.body)}: ${cutMiddle(oneLine(VIEWS[record.body.kind](record).summary), max)}`;
}
