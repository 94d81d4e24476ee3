/**
 * The ephemeral texts a person gets when their answer was refused (docs/architecture.md
 * §7: they are told who may answer, and nothing changed) or counted towards
 * a quorum. Pure: the listeners post them (src/slack/listeners/notices.ts).
 * Mentions come only from ids (./people.ts); no agent text appears here.
 */
import type { ApproverList } from "../../protocol/request-body.js";
import type { RequestRecord } from "../../requests/model.js";
import { quorumOf, type Refusal } from "../../requests/policy.js";
import { barredRequester } from "./approvers.js";
import { mentionList, userMention } from "./people.js";

/** Room for the mentions of a notice (Slack takes far more; a notice should stay readable). */
const NOTICE_MENTIONS = 1500;

/** Why the person may not answer, who may, and that nothing changed. */
export function refusalNotice(refusal: Refusal, record: RequestRecord): string {
  const barred = barredRequester(record);
  const who = refusal.approvers ? mentionList(refusal.approvers, NOTICE_MENTIONS, barred ? [barred] : []) : "";
  switch (refusal.reason) {
    case "not_approver":
      return who ? `Only ${who} can answer this request.${quorumNote(record)}` : "You are not among the approvers of this request.";
    case "self_approval": {
      const requester = barred && userMention(barred);
      const forWhom = requester ? ` (it is for ${requester})` : "";
      return `You asked for this request${forWhom}, so you cannot answer it yourself.${who ? ` Only ${who} can.` : " Someone else must."}`;
    }
    case "other_workspace":
      return otherWorkspaceNotice(refusal.approvers, barred);
    case "unverified":
      return "The relay could not check your user group membership (or workspace) with Slack just now, so nothing changed. Try again in a moment.";
  }
}

/** Guests from another workspace answer only where listed by id: say who is. */
function otherWorkspaceNotice(approvers: ApproverList | undefined, barred: string | undefined): string {
  const listed = mentionList({ users: approvers?.users ?? [] }, NOTICE_MENTIONS, barred ? [barred] : []);
  const start = "You are in another workspace than the relay's";
  return listed ? `${start}: from there only ${listed} can answer this request.` : `${start}: only people of its own workspace can answer this request.`;
}

/** " It needs 2 approvals." where several are needed. */
function quorumNote(record: RequestRecord): string {
  const quorum = quorumOf(record);
  return quorum > 1 ? ` It needs ${quorum} approvals.` : "";
}

/** "Your approval counted: 1 of 2. Waiting for 1 more." `record` is the request as the count left it. */
export function approvalCountedNotice(record: RequestRecord): string {
  const count = record.approvals?.length ?? 0;
  const quorum = quorumOf(record);
  return `Your approval counted: ${count} of ${quorum}. Waiting for ${Math.max(0, quorum - count)} more.`;
}

/** "You already approved this request (1 of 2)." */
export function duplicateApprovalNotice(record: RequestRecord): string {
  return `You already approved this request (${record.approvals?.length ?? 0} of ${quorumOf(record)}).`;
}
