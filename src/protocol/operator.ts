/**
 * What operators read with admin tokens (docs/architecture.md §7): the audit log
 * (`GET /v1/audit`), the list of requests (`GET /v1/requests`) and the
 * "Allow for a while" rules (`GET /v1/rules`, `DELETE /v1/rules/{id}`). One
 * definition of each wire shape, shared by the relay (which builds its
 * replies by them), the OpenAPI document and `approval-relay audit` (which
 * parses every reply with them). The audit event's fields are defined here,
 * below the domain, so the domain's stored event (src/requests/audit.ts) and
 * the wire event share them; they differ only in `at` (Unix ms there, ISO
 * 8601 here).
 */
import { z } from "zod";
import { RequestKind } from "./request-body.js";
import { Person, RequestStatus, RequestView } from "./request-view.js";

/** The event types, exactly as `GET /v1/audit` names them. */
export const AuditEventType = z.enum([
  "created",
  "posted",
  "reminded",
  "escalated",
  /** An approval counted towards a quorum. */
  "approval",
  /** An answer refused: the person may not answer (reason says why). */
  "refused",
  "answered",
  "expired",
  "cancelled",
  "failed",
  /** An "Allow for a while" rule created by a person's click (reason: its scope and how long). */
  "rule_created",
  /** A request answered at once by a live rule, without a post (person: whose rule). */
  "rule_used",
  /** A rule revoked before it ran out (person: who revoked it, or the token). */
  "rule_revoked",
  /** A pending request given more time (reason: the new deadline). */
  "extended",
  /**
   * Creates of an agent token refused by a limit (reason: which, and the
   * count): the first of each minute per token and limit; requestId is the
   * id the refused create would have had, or the HTTP request's id.
   */
  "limited",
]);
export type AuditEventType = z.infer<typeof AuditEventType>;

/**
 * An event's id: `<Unix ms>-<sequence>`, as Redis Stream ids are, in append
 * order; the `after` cursor of the next read.
 */
export const AuditEventId = z
  .string()
  .regex(/^\d{1,16}-\d{1,20}$/)
  .meta({ description: "`<Unix ms>-<sequence>`, increasing in append order; pass it as `after` to read on.", example: "1796000000000-0" });

/** Every field of an event but its id and time. */
export const AuditEventFields = z.object({
  type: AuditEventType,
  requestId: z.string().min(1),
  /** Name of the agent token that created the request. */
  token: z.string().optional(),
  kind: RequestKind.optional(),
  /** The approver route the request fell under. */
  route: z.string().optional(),
  /** Slack channel of the request (or, for an escalation, the channel it was posted to). */
  channel: z.string().optional(),
  /** Who answered, approved, was refused, or cancelled when a person did. */
  person: Person.optional(),
  /** Why: the refusal, the cancel, the failure, the decision in a few words. */
  reason: z.string().max(2000).optional(),
  /** The status the request ended in (answered, expired, cancelled, failed events). */
  status: RequestStatus.optional(),
  /** Approvals counted so far and how many the request needs (approval and answered events of a quorum). */
  approvals: z.object({ count: z.number().int().min(0), quorum: z.number().int().min(1) }).optional(),
});

/** One event as `GET /v1/audit` shows it. */
export const AuditEventView = AuditEventFields.extend({
  id: AuditEventId,
  /** ISO 8601 time of the event. */
  at: z.string(),
});
export type AuditEventView = z.infer<typeof AuditEventView>;

/** Most events one `GET /v1/audit` returns, and how many when it names no `limit`. */
export const AUDIT_LIMITS = { max: 1000, default: 100 } as const;

/** Events not written for one reason (and, for `token_share`, of one agent token). */
export const AuditDropCauseView = z.object({
  reason: z.enum(["cap", "token_share"]),
  /** The agent token's name (`token_share` only). */
  token: z.string().optional(),
  events: z.number().int().positive(),
  from: z.string(),
  to: z.string(),
});
export type AuditDropCauseView = z.infer<typeof AuditDropCauseView>;

/** The reply to `GET /v1/audit`: events oldest first; `next` when more may follow (pass it as `after`). */
export const AuditReply = z.object({
  events: z.array(AuditEventView),
  next: AuditEventId.optional(),
  /** Present when events were kept out (the log's size cap, an agent token's share of it): how many, when, and why. Decisions are never among them. */
  dropped: z
    .object({
      events: z.number().int().positive(),
      /** ISO 8601: the first and the last event not written. */
      from: z.string(),
      to: z.string(),
      /** Why, in words: every cause below. */
      reason: z.string(),
      /** The events not written by cause: `cap` (RELAY_AUDIT_MAX_EVENTS reached), `token_share` (that agent token held its share of the cap). */
      causes: z.array(AuditDropCauseView).optional(),
    })
    .optional(),
});
export type AuditReply = z.infer<typeof AuditReply>;

/** Most requests one `GET /v1/requests` returns, and how many when it names no `limit`. */
export const LIST_LIMITS = { max: 1000, default: 100 } as const;

/** The reply to `GET /v1/requests`: newest first. */
export const RequestList = z.object({ requests: z.array(RequestView) });
export type RequestList = z.infer<typeof RequestList>;

/** An "Allow for a while" rule as `GET /v1/rules` and `DELETE /v1/rules/{id}` show it. */
export const RuleView = z.object({
  id: z.string().min(1),
  /** Name of the agent token whose requests the rule answers. */
  token: z.string(),
  /** The agent session (`agent.sessionId`; the Claude Code hook's `session_id`) whose requests it answers. */
  sessionId: z.string(),
  /** The tool whose calls it answers, exactly. */
  toolName: z.string(),
  /** Who clicked "Allow for a while"; requests it answers are answered in their name. */
  createdBy: Person,
  /** ISO 8601 time. */
  createdAt: z.string(),
  /** ISO 8601 time from which the rule no longer applies. */
  expiresAt: z.string(),
  /** Requests the rule answered so far. */
  uses: z.number().int().min(0),
  /** The request whose click created the rule. */
  requestId: z.string(),
});
export type RuleView = z.infer<typeof RuleView>;

/** Most rules one `GET /v1/rules` returns, and how many when it names no `limit`. */
export const RULE_LIMITS = { max: 1000, default: 100 } as const;

/** The reply to `GET /v1/rules`: live rules, newest first. */
export const RuleList = z.object({ rules: z.array(RuleView) });
export type RuleList = z.infer<typeof RuleList>;
