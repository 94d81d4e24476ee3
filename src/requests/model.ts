/**
 * The stored request: what the agent asked, where it was posted and how it
 * ended. Parsed with zod on every read from a store (a trust boundary).
 */
import { z } from "zod";
import { Decision } from "../protocol/decisions.js";
import { SlackUserId, StoredRequestBody } from "../protocol/request-body.js";
import { Person, RequestStatus, SlackRef, type RequestView } from "../protocol/request-view.js";
import { AlwaysAllowScope, PolicySettings } from "./vocabulary.js";

/**
 * The rules a request was created under, fixed at create so that every
 * instance, and the message and the click alike, apply the same ones.
 */
export const RequestPolicy = z.object({
  alwaysAllow: AlwaysAllowScope,
  /** The approver route the request fell under (`routes.<index>` or `default`); absent on requests stored before routes existed. */
  route: z.string().max(100).optional(),
  /** The Slack user the request is made for, resolved at create (an email becomes its user id). */
  requestedBy: z.object({ id: SlackUserId, email: z.string().max(254).optional() }).optional(),
  ...PolicySettings.shape,
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

/**
 * Every message the request is known to have been posted as: its main one
 * first, then the other copies (a copy recorded before the post's own reply
 * may be the main message too: it is listed once). Empty before any is known.
 */
export function messagesOf(record: Pick<RequestRecord, "slack" | "otherMessages">): SlackRef[] {
  const main = record.slack;
  const copies = (record.otherMessages ?? []).filter((copy) => !main || copy.channel !== main.channel || copy.ts !== main.ts);
  return main ? [main, ...copies] : copies;
}

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
