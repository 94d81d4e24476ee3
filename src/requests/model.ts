/**
 * The stored request: what the agent asked, where it was posted and how it
 * ended. Parsed with zod on every read from a store (a trust boundary).
 */
import { z } from "zod";
import { Decision } from "../protocol/decisions.js";
import { ApproverList, Quorum, SlackUserId, StoredRequestBody } from "../protocol/request-body.js";
import { Person, RequestStatus, SlackRef, type RequestView } from "../protocol/request-view.js";
import { AfterSeconds, AlwaysAllowScope, Escalation, SelfApproval } from "../config-file.js";
import { MAX_RULE_MINUTES } from "../config-policy.js";

/**
 * The rules a request was created under, fixed at create so that every
 * instance, and the message and the click alike, apply the same ones.
 */
export const RequestPolicy = z.object({
  alwaysAllow: AlwaysAllowScope,
  /** The approver route the request fell under (`routes.<index>` or `default`); absent on requests stored before routes existed. */
  route: z.string().max(100).optional(),
  /** Who may answer (the route's, narrowed by the request's own); absent → anyone who sees the message. */
  approvers: ApproverList.optional(),
  /** Distinct approvals that allow the request where a quorum applies (see ./policy.ts); absent → 1. */
  quorum: Quorum.optional(),
  /** `deny`: the requestedBy person may not answer; absent → `allow`. */
  selfApproval: SelfApproval.optional(),
  /** The Slack user the request is made for, resolved at create (an email becomes its user id). */
  requestedBy: z.object({ id: SlackUserId, email: z.string().max(254).optional() }).optional(),
  /** Seconds after posting at which the thread reminds the approvers. */
  reminders: z.array(AfterSeconds).optional(),
  /** Escalations, in the route's order (see ./policy.ts for the schedule). */
  escalate: z.array(Escalation).optional(),
  /** `false`: the message offers no "Allow for a while" rule; absent → offered where one approval decides. */
  allowRules: z.literal(false).optional(),
  /** Minutes an "Allow for a while" rule created on this request lasts; absent → DEFAULT_RULE_MINUTES. */
  ruleMinutes: z.number().int().min(1).max(MAX_RULE_MINUTES).optional(),
  /** `halt`: expiring also stops the agent (step_gate q, permission deny with interrupt); absent → deny. */
  onTimeout: z.literal("halt").optional(),
});
export type RequestPolicy = z.infer<typeof RequestPolicy>;

/** One counted approval of a request that needs several (docs/architecture.md §7). */
export const Approval = z.object({
  person: Person,
  /** Unix time in milliseconds. */
  at: z.number(),
});
export type Approval = z.infer<typeof Approval>;

export const RequestRecord = z.object({
  id: z.string(),
  status: RequestStatus,
  /** Name of the agent token that created the request. */
  tokenName: z.string(),
  /** Slack channel or user id the request is posted to. */
  channel: z.string(),
  /** The agent's request, as validated at create (read back without rerunning its patterns). */
  body: StoredRequestBody,
  /** Unix time in milliseconds. */
  createdAt: z.number(),
  /** Absent on requests stored before policies existed: the defaults apply. */
  policy: RequestPolicy.optional(),
  /** Unix time in milliseconds after which the request expires. */
  expiresAt: z.number(),
  slack: SlackRef.optional(),
  /** Unix time in milliseconds the Slack message was recorded: reminders and escalations count from it. */
  postedAt: z.number().optional(),
  /** Approvals counted so far, oldest first (requests that need several); the one that completed the quorum is the last. */
  approvals: z.array(Approval).optional(),
  /**
   * Other messages posted for this request, found after a retry whose first
   * reply from Slack was lost: a click on them counts, and they show the
   * outcome too. Oldest first.
   */
  otherMessages: z.array(SlackRef).optional(),
  decision: Decision.optional(),
  answeredBy: Person.optional(),
  /** Unix time in milliseconds of the final transition. */
  endedAt: z.number().optional(),
  /** Why the request failed or was cancelled. */
  error: z.string().optional(),
  /** Who cancelled, when known ("agent", "hook disconnected", …). */
  cancelledBy: z.string().optional(),
});
export type RequestRecord = z.infer<typeof RequestRecord>;

/** The request as the HTTP API shows it (src/protocol/request-view.ts). */
export function toView(record: RequestRecord): RequestView {
  const view: RequestView = {
    id: record.id,
    kind: record.body.kind,
    status: record.status,
    createdAt: new Date(record.createdAt).toISOString(),
    expiresAt: new Date(record.expiresAt).toISOString(),
  };
  if (record.decision) view.decision = record.decision;
  if (record.answeredBy) view.answeredBy = record.answeredBy;
  if (record.status === "answered" && record.endedAt !== undefined) view.answeredAt = new Date(record.endedAt).toISOString();
  if (record.slack) view.slack = record.slack;
  if (record.approvals) view.approvals = record.approvals.map(({ person, at }) => ({ person, at: new Date(at).toISOString() }));
  if (record.error) view.error = record.error;
  return view;
}
