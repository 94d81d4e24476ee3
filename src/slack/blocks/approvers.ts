/**
 * Who a request is for and who may answer it, as its message shows them
 * (docs/architecture.md §7): "For <@U…>" and, while pending, "Who may answer: <@U…>,
 * <!subteam^S…> · needs 2 approvals · any deny ends it · not <@U…>, who
 * asked for it"; on a request that needs several approvals, the count so
 * far ("Approvals 1 of 2: <@alice>"), pending and ended. The policy's own
 * approvers are shown; those an escalation adds are announced in the
 * thread when they are due (./reminders.ts).
 */
import type { KnownBlock } from "@slack/types";
import { quorumOf } from "../../requests/policy.js";
import type { RequestRecord } from "../../requests/model.js";
import { context } from "./elements.js";
import { joinWithin, mentionList, personText, userMention } from "./people.js";

/** Room for the approver mentions of the "Who may answer" line (a context element holds 2,000). */
export const APPROVERS_LINE = 1200;
/** Room for the people of the "Approvals 1 of 2" line. */
const APPROVALS_LINE = 1000;

/** The requestedBy person's id when the policy keeps them from answering (`selfApproval: deny`). */
export function barredRequester(record: RequestRecord): string | undefined {
  const policy = record.policy;
  return policy?.selfApproval === "deny" ? policy.requestedBy?.id : undefined;
}

/** "For <@U…>" and, while pending, the "Who may answer" line, as one context block; none when the policy says nothing to show. */
export function policyBlocks(record: RequestRecord, pending: boolean): KnownBlock[] {
  const texts: string[] = [];
  const requester = record.policy?.requestedBy && userMention(record.policy.requestedBy.id);
  if (requester) texts.push(`For ${requester}`);
  if (pending) {
    const who = whoMayAnswer(record);
    if (who) texts.push(who);
  }
  return texts.length > 0 ? [context("policy", texts)] : [];
}

/** "Who may answer: … · needs 2 approvals · any deny ends it · not <@U…>, who asked for it"; undefined when anyone may and one answer does. */
function whoMayAnswer(record: RequestRecord): string | undefined {
  const parts: string[] = [];
  const approvers = record.policy?.approvers;
  const barred = barredRequester(record);
  if (approvers) parts.push(`Who may answer: ${mentionList(approvers, APPROVERS_LINE, barred ? [barred] : []) || "nobody listed"}`);
  const quorum = quorumOf(record);
  if (quorum > 1) parts.push(`needs ${quorum} approvals · any deny ends it`);
  const barredMention = barred && userMention(barred);
  if (barredMention) parts.push(`not ${barredMention}, who asked for it`);
  if (parts.length === 0) return undefined;
  const line = parts.join(" · ");
  return line.charAt(0).toUpperCase() + line.slice(1);
}

/** "Approvals 1 of 2: <@alice>" on a request that needs several approvals; undefined on one that needs one. */
export function approvalsText(record: RequestRecord): string | undefined {
  const quorum = quorumOf(record);
  if (quorum <= 1) return undefined;
  const approvals = record.approvals ?? [];
  const who = joinWithin(
    approvals.map(({ person }) => personText(person)),
    APPROVALS_LINE,
  );
  return `Approvals ${approvals.length} of ${quorum}${who ? `: ${who}` : ""}`;
}

/** The approvals line as a context block, shown above the buttons (pending) or the outcome (ended). */
export function approvalsBlocks(record: RequestRecord): KnownBlock[] {
  const text = approvalsText(record);
  return text ? [context("approvals", [text])] : [];
}
