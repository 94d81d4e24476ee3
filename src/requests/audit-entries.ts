/**
 * What each event of a request's life writes to the audit trail
 * (./audit.ts): pure builders from the record, so every event names the
 * request the same way (id, token, kind, route, channel) and the reasons are
 * worded in one place.
 */
import { describeDecision } from "./decisions.js";
import type { AuditEntry, AuditEventType } from "./audit.js";
import type { Decision } from "../protocol/decisions.js";
import type { Person } from "../protocol/request-view.js";
import type { RequestRecord } from "./model.js";
import type { Refusal } from "./policy.js";
import { quorumOf, type ScheduleEntry } from "./policy.js";
import type { Rule, RuleRevoker } from "./rules.js";

/** Where the service sends its events; AuditTrail in production, nothing without one. */
export interface AuditRecorder {
  /** Never throws and never waits: appending is side work. */
  record(entry: AuditEntry): void;
}

export const NO_AUDIT: AuditRecorder = { record: () => undefined };

/** The fields every event of this request carries. */
function about(record: RequestRecord, type: AuditEventType, at: number): AuditEntry {
  const entry: AuditEntry = { at, type, requestId: record.id, token: record.tokenName, kind: record.body.kind, channel: record.channel };
  if (record.policy?.route !== undefined) entry.route = record.policy.route;
  return entry;
}

/** Only the person's id, name and where they answered (the console; absent → Slack) reach the trail. */
function who(person: Person): Person {
  return { id: person.id, ...(person.name === undefined ? {} : { name: person.name }), ...(person.via === undefined ? {} : { via: person.via }) };
}

export function createdEntry(record: RequestRecord): AuditEntry {
  const entry = about(record, "created", record.createdAt);
  if (record.policy?.requestedBy) entry.person = { id: record.policy.requestedBy.id };
  return entry;
}

/** Creates of the agent token `token` refused by a limit (./limits.ts); `requestId` as AuditEventType's `limited` says. */
export function limitedEntry(token: string, requestId: string, reason: string, at: number): AuditEntry {
  return { at, type: "limited", requestId, token, reason };
}

export function postedEntry(record: RequestRecord, at: number): AuditEntry {
  const entry = about(record, "posted", at);
  if (record.slack) entry.reason = `message ${record.slack.ts}`;
  return entry;
}

const REFUSAL_REASONS: Record<Refusal["reason"], string> = {
  not_approver: "not an approver of this request",
  self_approval: "asked for this request (selfApproval: deny)",
  other_workspace: "from another workspace and not listed by id",
  unverified: "user group membership could not be checked (Slack did not answer)",
};

export function refusedEntry(record: RequestRecord, person: Person, refusal: Refusal, at: number): AuditEntry {
  return { ...about(record, "refused", at), person: who(person), reason: REFUSAL_REASONS[refusal.reason] };
}

/** An approval counted towards the quorum; `record` holds the approvals as they now are. */
export function approvalEntry(record: RequestRecord, person: Person, at: number): AuditEntry {
  const count = record.approvals?.length ?? 0;
  return { ...about(record, "approval", at), person: who(person), approvals: { count, quorum: quorumOf(record) } };
}

/** A pending request given more time by `person`; `record` holds the new deadline (the reason names it, ISO 8601). */
export function extendedEntry(record: RequestRecord, person: Person, at: number): AuditEntry {
  return { ...about(record, "extended", at), person: who(person), reason: `new deadline ${new Date(record.expiresAt).toISOString()}` };
}

/** A request that just left pending, as the store returned it. */
export function endedEntry(record: RequestRecord): AuditEntry {
  const at = record.endedAt ?? record.createdAt;
  const status = record.status === "pending" ? "answered" : record.status;
  const entry: AuditEntry = { ...about(record, status, at), status };
  switch (record.status) {
    case "answered":
      if (record.answeredBy) entry.person = who(record.answeredBy);
      if (record.decision) entry.reason = decisionReason(record.decision);
      if (record.approvals) entry.approvals = { count: record.approvals.length, quorum: quorumOf(record) };
      break;
    case "cancelled":
      entry.reason = [record.cancelledBy, record.error].filter(Boolean).join(": ") || "cancelled";
      break;
    case "failed":
      if (record.error) entry.reason = record.error;
      break;
    case "expired": {
      // A decision here is the route's onTimeout: halt (./timeout.ts).
      const halted = record.decision && `onTimeout halt: ${decisionReason(record.decision)}`;
      const reason = [record.error, halted].filter(Boolean).join("; ");
      if (reason) entry.reason = reason;
      break;
    }
  }
  return entry;
}

/** "Approved (y)", "Denied and stopped": how a decision reads in the trail. */
function decisionReason(decision: Decision): string {
  const { verb } = describeDecision(decision);
  return "reply" in decision ? `${verb} (${decision.reply})` : verb;
}

/** A reminder or an escalation sent; `mentioned` lists who was mentioned in it. */
export function reminderEntry(record: RequestRecord, entry: ScheduleEntry, at: number): AuditEntry {
  const type = entry.type === "reminder" ? "reminded" : "escalated";
  const event = about(record, type, at);
  if (entry.type === "escalation") {
    const { users = [], usergroups = [], channel } = entry.escalation;
    const to = [...users, ...usergroups];
    event.reason = `after ${entry.afterSeconds} s${to.length > 0 ? `, to ${to.join(", ")}` : ""}${channel ? `, posted in ${channel}` : ""}`;
  } else {
    event.reason = `after ${entry.afterSeconds} s`;
  }
  return event;
}

/** "Bash calls of agent session 5f1c… with token ci-bot": a rule's scope, in words. */
export function ruleScopeText(rule: Rule): string {
  return `${rule.toolName} calls of agent session ${rule.sessionId} with token ${rule.token}`;
}

/** A rule created by a click on `record` (the request it answered). */
export function ruleCreatedEntry(record: RequestRecord, rule: Rule): AuditEntry {
  const minutes = Math.round((rule.expiresAt - rule.createdAt) / 60_000);
  const until = new Date(rule.expiresAt).toISOString();
  return {
    ...about(record, "rule_created", rule.createdAt),
    person: who(rule.createdBy),
    reason: `rule ${rule.id}: ${ruleScopeText(rule)}, for ${minutes} min (until ${until})`,
  };
}

/** A new request (`record`, answered at its create) that `rule` answered; the person is the rule's creator. */
export function ruleUsedEntry(record: RequestRecord, rule: Rule): AuditEntry {
  return { ...about(record, "rule_used", record.endedAt ?? record.createdAt), person: who(rule.createdBy), reason: `rule ${rule.id}` };
}

/** A rule removed before its time, under the request that created it. */
export function ruleRevokedEntry(rule: Rule, by: RuleRevoker, at: number): AuditEntry {
  const entry: AuditEntry = { at, type: "rule_revoked", requestId: rule.requestId, token: rule.token };
  if ("person" in by) return { ...entry, person: who(by.person), reason: `rule ${rule.id}: ${ruleScopeText(rule)}` };
  if ("token" in by) return { ...entry, reason: `rule ${rule.id}: ${ruleScopeText(rule)}, revoked with token ${by.token}` };
  return { ...entry, person: who(by.replacedBy.createdBy), reason: `rule ${rule.id}: replaced by rule ${by.replacedBy.id} in the same scope` };
}
