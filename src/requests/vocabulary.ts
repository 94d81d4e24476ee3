/**
 * The words of approver policy (docs/architecture.md §7): what Always allow may grant,
 * whether the requester may answer, when a thread reminds and escalates, how
 * long an "Allow for a while" rule lasts, what an expired request carries,
 * and the policy keys a request is created under. They belong to the domain:
 * the stored record keeps them (./model.ts) and the service applies them. The
 * configuration (src/config) only reads them from the operator's file and
 * environment, and imports them from here, never the other way round.
 */
import { z } from "zod";
import { APPROVER_LIMITS, ApproverList, MAX_TIMEOUT_SECONDS, Quorum, SlackChannelId, SlackUserId, SlackUsergroupId } from "../protocol/request-body.js";

/** What "Always allow" may pass back: `tool` plain rules for the asked tool only, `all` every suggestion (always shown). */
export const AlwaysAllowScope = z.enum(["tool", "all"]);
export type AlwaysAllowScope = z.infer<typeof AlwaysAllowScope>;

/** Whether the person a request is made for (`requestedBy`) may answer it: `deny` refuses them like a non-approver. */
export const SelfApproval = z.enum(["deny", "allow"]);
export type SelfApproval = z.infer<typeof SelfApproval>;

/** Seconds after a request's message was posted: when a reminder or an escalation is due. */
export const AfterSeconds = z.number().int().min(1).max(MAX_TIMEOUT_SECONDS);

/**
 * An escalation (docs/architecture.md §7): `after` seconds past posting, its users and
 * groups become approvers too and are mentioned in the thread; with a
 * `channel`, a message linking to the request is posted there as well.
 */
export const Escalation = z.strictObject({
  after: AfterSeconds,
  users: z.array(SlackUserId).max(APPROVER_LIMITS.users).optional(),
  usergroups: z.array(SlackUsergroupId).max(APPROVER_LIMITS.usergroups).optional(),
  channel: SlackChannelId.optional(),
});
export type Escalation = z.infer<typeof Escalation>;

/**
 * What an unanswered request carries when it expires: `deny` (the default:
 * it was not answered) or `halt`, which also stops the agent: an expired
 * step_gate carries decision {reply: "q"}, a permission a deny with
 * interrupt. Never allow.
 */
export const OnTimeout = z.enum(["deny", "halt"]);
export type OnTimeout = z.infer<typeof OnTimeout>;

/** Longest "Allow for a while" rule a route may set (minutes): a working day. */
export const MAX_RULE_MINUTES = 12 * 60;
/** Minutes an "Allow for a while" rule lasts where the route sets no `ruleMinutes`. */
export const DEFAULT_RULE_MINUTES = 15;
/** Minutes an "Allow for a while" rule lasts. */
export const RuleMinutes = z.number().int().min(1).max(MAX_RULE_MINUTES);

/** Most reminders and escalations one route may list. */
export const SCHEDULE_LIMITS = { reminders: 20, escalate: 10 } as const;

/**
 * The policy keys a request takes from its route (a matched route's own keys
 * replace the default route's one by one), in the form the record keeps
 * them: the defaults (`approvers: any`, `allowRules: true`, `onTimeout:
 * deny`) are left out.
 */
export const PolicySettings = z.object({
  /** Who may answer; absent → anyone who sees the message. */
  approvers: ApproverList.optional(),
  /** Distinct approvals that allow the request where a quorum applies (see ./policy.ts); absent → 1. */
  quorum: Quorum.optional(),
  /** `deny`: the requestedBy person may not answer; absent → `allow`. */
  selfApproval: SelfApproval.optional(),
  /** Seconds after posting at which the thread reminds the approvers. */
  reminders: z.array(AfterSeconds).optional(),
  /** Escalations, in the route's order (see ./policy.ts for the schedule). */
  escalate: z.array(Escalation).optional(),
  /** `false`: the message offers no "Allow for a while" rule; absent → offered where one approval decides. */
  allowRules: z.literal(false).optional(),
  /** Minutes an "Allow for a while" rule created on this request lasts; absent → DEFAULT_RULE_MINUTES. */
  ruleMinutes: RuleMinutes.optional(),
  /** `halt`: expiring also stops the agent (step_gate q, permission deny with interrupt); absent → deny. */
  onTimeout: z.literal("halt").optional(),
});
export type PolicySettings = z.infer<typeof PolicySettings>;

/** What a token may do: an agent's (RELAY_TOKENS) or a read-only operator's (RELAY_ADMIN_TOKENS). */
export type TokenRole = "agent" | "admin";
