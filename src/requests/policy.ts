/**
 * Who may answer a request, how many must agree, and when its thread
 * reminds and escalates (docs/architecture.md §7), all read from the policy the record was
 * created under, so every instance and every answer path (button, modal
 * submit, thread reply) applies the same rules. Pure, but for user group
 * membership, which the PeopleDirectory serves from its cache.
 *
 * People are Slack user ids, never names. A person from another workspace
 * (a Slack Connect guest) answers only where their id is listed in `users`:
 * group membership and `approvers: any` reach the relay's own workspace only.
 */
import type { Decision } from "../protocol/decisions.js";
import type { ApproverList } from "../protocol/request-body.js";
import type { Person } from "../protocol/request-view.js";
import type { Escalation } from "./vocabulary.js";
import { DirectoryUnavailableError, type PeopleDirectory } from "./directory.js";
import { questionsForPerson } from "./interactive.js";
import type { RequestPolicy, RequestRecord } from "./model.js";
import type { ReminderEntry } from "./store.js";

/** The person behind an answer. */
export interface Answerer extends Person {
  /** Team id of the person's own workspace, as Slack's payload gives it; another than the relay's marks a Slack Connect guest. */
  teamId?: string;
}

/**
 * The teamId given to a person whose Slack payload names no workspace. It is
 * never the relay's own (Slack team ids are upper case), so such a person is
 * refused as from another workspace unless listed by id: a payload without
 * Slack's team fields fails closed instead of skipping the check.
 */
export const UNPLACED_TEAM = "unplaced";

/** The person as an answerer, placed in `teamId` or else in UNPLACED_TEAM. */
export function answererIn(person: Person, teamId: string | undefined): Answerer {
  return { ...person, teamId: teamId ?? UNPLACED_TEAM };
}

export type RefusalReason =
  /** Not among the approvers (by id, or as a member of a listed group). */
  | "not_approver"
  /** The requestedBy person, with `selfApproval: deny`. */
  | "self_approval"
  /** From another workspace and not listed by id. */
  | "other_workspace"
  /** Membership could not be checked (Slack did not answer): fail closed. */
  | "unverified";

export interface Refusal {
  reason: RefusalReason;
  /** Who may answer at this moment; undefined → anyone of the relay's workspace. */
  approvers?: ApproverList;
}

/**
 * True when the request counts approvals towards a quorum: permission and
 * step_gate requests, and the yes/no gate (`approval-relay ask` without
 * --choice or --text: one confirm question for a person), whose Yes is an
 * approval and No a veto. Other question kinds take the first valid answer
 * of an approver.
 */
export function takesQuorum(record: Pick<RequestRecord, "body">): boolean {
  const body = record.body;
  if (body.kind === "permission" || body.kind === "step_gate") return true;
  if (body.kind !== "interactive_questions") return false;
  const asked = questionsForPerson(body);
  return asked.length === 1 && asked[0]!.type === "confirm";
}

/** Distinct approvals the request needs: its policy's quorum where a quorum applies, else 1. */
export function quorumOf(record: RequestRecord): number {
  return takesQuorum(record) ? (record.policy?.quorum ?? 1) : 1;
}

/** True for a decision that approves (counts towards a quorum): allow, y, or Yes to the yes/no gate. Anything else vetoes. */
export function isApproval(record: RequestRecord, decision: Decision): boolean {
  if ("behavior" in decision) return decision.behavior === "allow";
  if ("reply" in decision) return decision.reply === "y";
  if (record.body.kind !== "interactive_questions" || !("answers" in decision)) return false;
  const question = questionsForPerson(record.body)[0];
  return question !== undefined && decision.answers[question.id] === true;
}

/**
 * One entry of a request's reminder schedule, each queued, claimed, retried
 * and completed on its own: a reminder (a thread reply), an escalation's
 * thread reply, and an escalation's post in its own `channel` (its own entry,
 * so a retry of one never repeats the other).
 */
export type ScheduleEntry =
  | { index: number; afterSeconds: number; type: "reminder" }
  | { index: number; afterSeconds: number; type: "escalation"; escalation: Escalation }
  | { index: number; afterSeconds: number; type: "escalation_post"; escalation: Escalation; channel: string };

/**
 * Every reminder, then every escalation, then the channel post of every
 * escalation that names a channel, indexed in that order (the store queues
 * them by index; a policy's first entries keep the indexes they had before
 * the posts became entries of their own).
 */
export function reminderSchedule(policy: RequestPolicy | undefined): ScheduleEntry[] {
  const reminders = (policy?.reminders ?? []).map((afterSeconds, index): ScheduleEntry => ({ index, afterSeconds, type: "reminder" }));
  const escalate = policy?.escalate ?? [];
  const escalations = escalate.map((escalation, i): ScheduleEntry => ({
    index: reminders.length + i,
    afterSeconds: escalation.after,
    type: "escalation",
    escalation,
  }));
  const posts = escalate.flatMap((escalation) => (escalation.channel === undefined ? [] : [{ escalation, channel: escalation.channel }]));
  const channelPosts = posts.map(({ escalation, channel }, i): ScheduleEntry => ({
    index: reminders.length + escalate.length + i,
    afterSeconds: escalation.after,
    type: "escalation_post",
    escalation,
    channel,
  }));
  return [...reminders, ...escalations, ...channelPosts];
}

/**
 * Who may answer at `now` (Unix ms): the policy's approvers plus those of
 * every escalation due by then (counted from `postedAt`); undefined → anyone.
 */
export function approversAt(record: RequestRecord, now: number): ApproverList | undefined {
  const base = record.policy?.approvers;
  if (!base) return undefined;
  const users = new Set(base.users ?? []);
  const usergroups = new Set(base.usergroups ?? []);
  const postedAt = record.postedAt;
  for (const escalation of record.policy?.escalate ?? []) {
    if (postedAt === undefined || postedAt + escalation.after * 1000 > now) continue;
    for (const user of escalation.users ?? []) users.add(user);
    for (const group of escalation.usergroups ?? []) usergroups.add(group);
  }
  return { users: [...users], usergroups: [...usergroups] };
}

/**
 * Why `person` may not answer the request at `now`, or undefined when they
 * may. Listed users are checked before any group, so a listed approver costs
 * no lookup; groups are asked in order until one holds the person.
 */
export async function refusalFor(record: RequestRecord, person: Answerer, now: number, directory: PeopleDirectory): Promise<Refusal | undefined> {
  const policy = record.policy;
  const approvers = approversAt(record, now);
  if (policy?.selfApproval === "deny" && policy.requestedBy?.id === person.id) return withApprovers({ reason: "self_approval" }, approvers);
  const listed = approvers?.users?.includes(person.id) ?? false;
  if (listed) return undefined;
  if (person.teamId !== undefined) {
    let home: string | undefined;
    try {
      home = await directory.homeTeamId();
    } catch (error) {
      if (!(error instanceof DirectoryUnavailableError)) throw error;
    }
    if (home === undefined) return withApprovers({ reason: "unverified" }, approvers);
    if (person.teamId !== home) return withApprovers({ reason: "other_workspace" }, approvers);
  }
  if (!approvers) return undefined;
  try {
    for (const group of approvers.usergroups ?? []) {
      if ((await directory.usergroupMembers(group)).has(person.id)) return undefined;
    }
  } catch (error) {
    if (error instanceof DirectoryUnavailableError) return { reason: "unverified", approvers };
    throw error;
  }
  return { reason: "not_approver", approvers };
}

function withApprovers(refusal: Refusal, approvers: ApproverList | undefined): Refusal {
  return approvers ? { ...refusal, approvers } : refusal;
}

/** The schedule entries a request posted at `postedAt` (Unix ms) queues: those due before its deadline. */
export function remindersToQueue(record: RequestRecord, postedAt: number): ReminderEntry[] {
  return reminderSchedule(record.policy)
    .map((entry) => ({ index: entry.index, dueAt: postedAt + entry.afterSeconds * 1000 }))
    .filter((entry) => entry.dueAt < record.expiresAt);
}
