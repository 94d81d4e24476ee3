/**
 * After a click on "Allow for a while" (actions.ts records its answer within
 * the budget, as for any answer button): the rule is waited for within what
 * is left of the budget, so it is usually stored before the ack too, then
 * the ack, then the clicker is told, only them: the rule's scope, its end
 * and how to revoke it, or that the request was allowed but the rule could
 * not be saved. A click that did not apply (refused, already ended) is
 * told as any answer is, and made no rule.
 */
import type { RequestRecord } from "../../requests/model.js";
import type { RuleGrant } from "../../requests/service.js";
import { ruleCreatedNotice, ruleNotSavedNotice } from "../blocks/rules.js";
import { withinBudget, type Ack, type ListenerDeps } from "./context.js";
import { reportOutcome, tellPerson, type NoticeTarget } from "./notices.js";

export async function reportRule(
  deps: ListenerDeps,
  grant: RuleGrant,
  record: RequestRecord,
  target: NoticeTarget,
  { ack, budgetMs }: { ack: Ack; budgetMs: number },
): Promise<void> {
  const { answer, rule } = grant;
  if (!rule) {
    await ack();
    return reportOutcome(deps, answer, target);
  }
  const early = await withinBudget(rule, budgetMs);
  await ack();
  // RuleBook.create never rejects: a rule it could not store resolves undefined.
  const saved = early.ok ? early.value : await rule;
  deps.home?.acted(target.user);
  await tellPerson(deps, target, saved ? ruleCreatedNotice(saved) : ruleNotSavedNotice(record));
}
