/**
 * Which requests "Allow for a while" rules concern, as pure functions of
 * the record (docs/architecture.md §7), so the message that offers the button, the click
 * that creates a rule and the create that a rule answers all apply the same
 * conditions:
 *
 * - only permission and step_gate requests, and only those with an agent
 *   session (`agent.sessionId`): a rule never spans sessions;
 * - never where the policy says `allowRules: false`;
 * - never under a quorum: where several approvals decide, one person's
 *   rule must not decide alone.
 *
 * What the person who created the rule may answer is checked apart
 * (./rule-book.ts), since it needs the people directory.
 */
import { DEFAULT_RULE_MINUTES } from "./vocabulary.js";
import type { Decision } from "../protocol/decisions.js";
import type { RequestRecord } from "./model.js";
import { quorumOf } from "./policy.js";
import type { Rule, RuleScope } from "./rules.js";

/** The scope a rule created on (or matching) this request has; undefined for a kind without a tool or a request without a session. */
export function ruleScopeOf(record: RequestRecord): RuleScope | undefined {
  const body = record.body;
  if (body.kind !== "permission" && body.kind !== "step_gate") return undefined;
  const sessionId = body.agent?.sessionId;
  if (sessionId === undefined || sessionId === "") return undefined;
  return { token: record.tokenName, sessionId, toolName: body.toolName };
}

/**
 * True when rules concern this request: the kind and session give a scope,
 * the policy allows rules and one approval decides. Its pending message
 * offers "Allow for a while" then (whatever its status: an ended message is
 * measured as its pending one was, so that it is cut the same).
 */
export function takesRules(record: RequestRecord): boolean {
  return ruleScopeOf(record) !== undefined && record.policy?.allowRules !== false && quorumOf(record) <= 1;
}

/** Minutes a rule created on this request lasts. */
export function ruleMinutesOf(record: RequestRecord): number {
  return record.policy?.ruleMinutes ?? DEFAULT_RULE_MINUTES;
}

/** The decision a rule gives (and its click): permission → allow with the input unchanged; step_gate → y. */
export function ruleDecision(record: RequestRecord): Decision {
  const body = record.body;
  if (body.kind === "permission") return { behavior: "allow", updatedInput: body.input };
  if (body.kind === "step_gate") return { reply: "y" };
  throw new Error(`a ${body.kind} request takes no rule`);
}

/** True when `rule` lives at `now` (Unix ms). */
export function ruleLives(rule: Pick<Rule, "expiresAt">, now: number): boolean {
  return rule.expiresAt > now;
}

/** `record` (new, pending) as `rule` answers it at `at`: answered in its creator's name, ended in the step that creates it. */
export function answeredByRule(record: RequestRecord, rule: Rule, at: number): RequestRecord {
  const { id, name } = rule.createdBy;
  return { ...record, status: "answered", decision: ruleDecision(record), answeredBy: name === undefined ? { id } : { id, name }, endedAt: at };
}
