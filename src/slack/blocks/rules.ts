/**
 * What "Allow for a while" rules look like in Slack (docs/architecture.md §7): the
 * **Allow for 15 min** button beside Allow / Yes, the ephemeral notice its
 * clicker gets once the rule is saved (or could not be), and the thread
 * reply that counts the rule's uses. Pure; the listeners and the messenger
 * post them. Agent text (the tool name) is escaped and cut; people are
 * mentions from ids only (./people.ts).
 */
import type { Button, ConfirmationDialog } from "@slack/types";
import type { RequestRecord } from "../../requests/model.js";
import { ruleMinutesOf, takesRules } from "../../requests/rule-matching.js";
import type { Rule } from "../../requests/rules.js";
import { Action } from "../ids.js";
import { slackDate } from "./common.js";
import { button } from "./elements.js";
import { personText } from "./people.js";
import { cutShort } from "./text.js";

/** "15 min", "1 h", "90 min", "12 h": how long a rule lasts, for a button. */
export function ruleLength(minutes: number): string {
  return minutes >= 60 && minutes % 60 === 0 ? `${minutes / 60} h` : `${minutes} min`;
}

/** "Allow for 15 min": the button's label, from the request's ruleMinutes. */
export function ruleButtonLabel(record: RequestRecord): string {
  return `Allow for ${ruleLength(ruleMinutesOf(record))}`;
}

/** The button, where the request offers a rule (./permission.ts and ./step-gate.ts place it beside Allow / Yes); `confirm` as Allow's. */
export function ruleButtons(record: RequestRecord, value: string, confirm?: (verb: string) => ConfirmationDialog): Button[] {
  if (!takesRules(record)) return [];
  const label = ruleButtonLabel(record);
  return [button(label, Action.allowForAWhile, value, { confirm: confirm?.(label) })];
}

/** The tool name as the texts show it: escaped and cut (cutShort escapes). */
const toolOf = (rule: Pick<Rule, "toolName">) => cutShort(rule.toolName, 100);

/** "Auto-approved 3 more Bash calls under @alice's rule · until 12:15": the thread reply under the message the rule was created on. */
export function ruleTallyText(rule: Rule): string {
  const calls = rule.uses === 1 ? "call" : "calls";
  return `🔁 Auto-approved ${rule.uses} more ${toolOf(rule)} ${calls} under ${personText(rule.createdBy)}'s rule · until ${slackDate(rule.expiresAt)}`;
}

/** What the clicker is told once their rule is saved: its scope, its end, and how to revoke it. */
export function ruleCreatedNotice(rule: Rule): string {
  const length = ruleLength(Math.round((rule.expiresAt - rule.createdAt) / 60_000));
  return (
    `⏱️ Allowed, and for the next ${length} (until ${slackDate(rule.expiresAt)}) every ${toolOf(rule)} call of this agent session is allowed without asking; ` +
    `each is counted in this thread. Revoke the rule in the relay's App Home tab or with \`DELETE /v1/rules/${rule.id}\`.`
  );
}

/** What the clicker is told when the request was allowed but the rule could not be saved. */
export function ruleNotSavedNotice(record: RequestRecord): string {
  const tool = record.body.kind === "permission" || record.body.kind === "step_gate" ? toolOf(record.body) : "tool";
  return `⚠️ Allowed, but the ${ruleLength(ruleMinutesOf(record))} rule could not be saved just now: the next ${tool} calls will ask again.`;
}
