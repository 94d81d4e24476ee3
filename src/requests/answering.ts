/**
 * A person's answer to a pending request, from the check of who they are to
 * the store step it makes (docs/architecture.md §7). Every answer path — a button, a modal
 * submission, a thread reply — comes through here, so the rules hold
 * whichever way a person answers:
 *
 * - someone who may not answer (not an approver, the requester under
 *   `selfApproval: deny`, a guest from another workspace not listed by id,
 *   or a group that could not be checked: fail closed) is refused and
 *   nothing changes;
 * - where a quorum applies, an approval is counted (one person once) and the
 *   one that makes the quorum ends the request, in one atomic store step; a
 *   deny (n, q, No) ends it at once: a veto;
 * - otherwise the first answer wins, as before.
 */
import type { Decision } from "../protocol/decisions.js";
import type { Person } from "../protocol/request-view.js";
import { approvalEntry, refusedEntry, type AuditRecorder } from "./audit-entries.js";
import type { PeopleDirectory } from "./directory.js";
import type { RequestRecord } from "./model.js";
import { isApproval, quorumOf, refusalFor, type Answerer, type Refusal } from "./policy.js";
import type { AnsweredTransition, ApproveResult, RequestStore, TransitionResult } from "./store.js";
import type { UpdateOutbox } from "./update-outbox.js";

export type AnswerResult =
  | TransitionResult
  /** The approval counted; the request waits for more (`record.approvals`). */
  | { outcome: "counted"; record: RequestRecord }
  /** This person had already approved; nothing changed. */
  | { outcome: "duplicate"; record: RequestRecord }
  /** This person may not answer; nothing changed. */
  | { outcome: "refused"; record: RequestRecord; refusal: Refusal };

export interface AnswerDeps {
  store: Pick<RequestStore, "approve">;
  directory: PeopleDirectory;
  audit: AuditRecorder;
  /** Unix time in milliseconds. */
  now: () => number;
  /** This instance's one ending step (waiters woken, message updated, audited); `step` replaces the plain transition. */
  ending: { end(id: string, change: AnsweredTransition, step?: () => Promise<ApproveResult>): Promise<ApproveResult> };
  /** Shows a counted approval in the request's message. */
  updates: Pick<UpdateOutbox, "show">;
}

/** `record` is pending and within its deadline, and `decision` fits its kind. */
export async function answerPending(deps: AnswerDeps, record: RequestRecord, decision: Decision, answerer: Answerer): Promise<AnswerResult> {
  const at = deps.now();
  const person = personOf(answerer);
  const refusal = await refusalFor(record, answerer, at, deps.directory);
  if (refusal) {
    deps.audit.record(refusedEntry(record, person, refusal, at));
    return { outcome: "refused", record, refusal };
  }
  const quorum = quorumOf(record);
  if (quorum <= 1 || !isApproval(record, decision)) {
    return deps.ending.end(record.id, { status: "answered", decision, answeredBy: person, at });
  }
  const final: AnsweredTransition = { status: "answered", decision: plainApproval(record, decision), answeredBy: person, at };
  // Audited in the step, so the approval that makes the quorum comes before the answer end() audits.
  const approve = async () => {
    const result = await deps.store.approve(record.id, { person, at }, quorum, final);
    if (result.outcome === "counted" || result.outcome === "applied") deps.audit.record(approvalEntry(result.record, person, at));
    return result;
  };
  const result = await deps.ending.end(record.id, final, approve);
  if (result.outcome === "counted") deps.updates.show(result.record);
  return result;
}

/**
 * Under a quorum every approver approves the same thing: the call as asked
 * (no edited input, no Always allow rules, which the message does not offer).
 */
function plainApproval(record: RequestRecord, decision: Decision): Decision {
  if (record.body.kind === "permission") return { behavior: "allow", updatedInput: record.body.input };
  return decision;
}

/** Only the id and name of a person are kept, and `via` for an answer from the web console. */
function personOf(answerer: Answerer): Person {
  return { id: answerer.id, ...(answerer.name === undefined ? {} : { name: answerer.name }), ...(answerer.via === undefined ? {} : { via: answerer.via }) };
}
