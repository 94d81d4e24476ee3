/**
 * What an approver route is (docs/architecture.md §7): the `match` a request is tested
 * against, where matched requests may be posted, and the policy keys as an
 * operator writes them (`approvers: any`, `allowRules: true`, …), with the
 * checks one route can make on itself (an approver list that names nobody,
 * an escalation to nobody). The domain owns these schemas because
 * ./routes.ts matches requests against them and ./create-policy.ts applies
 * them; src/config reads them from the operator's file with these schemas,
 * and adds the checks that look across routes or at the environment.
 */
import { z } from "zod";
import { ApproverList, LABEL_LIMITS, LabelKey, Labels, MAX_TIMEOUT_SECONDS, Quorum, RequestKind, SlackChannelId } from "../protocol/request-body.js";
import { AfterSeconds, AlwaysAllowScope, Escalation, OnTimeout, RuleMinutes, SCHEDULE_LIMITS, SelfApproval, type PolicySettings } from "./vocabulary.js";

/** Longest `match.tool` pattern (characters). */
const MAX_TOOL_PATTERN = 1000;

const toolPattern = z
  .string()
  .min(1)
  .max(MAX_TOOL_PATTERN)
  .transform((source, ctx) => {
    try {
      // Anchored: the pattern must match the whole tool name ("Bash" must not match "BashOutput").
      return new RegExp(`^(?:${source})$`, "u");
    } catch {
      ctx.addIssue({ code: "custom", message: "is not a valid regular expression" });
      return z.NEVER;
    }
  });

export const RouteMatch = z.strictObject({
  /** Name of the agent token (RELAY_TOKENS). */
  token: z.string().min(1).optional(),
  kind: z.union([RequestKind, z.array(RequestKind).min(1)]).optional(),
  /** Compiled once at start, anchored to the whole tool name. */
  tool: toolPattern.optional(),
  /** `agent.name` of the request (the agent's own words: see docs/policy.md). */
  agent: z.string().min(1).optional(),
  /** The channel the request will be posted to: the one it names, else SLACK_DEFAULT_CHANNEL. */
  channel: SlackChannelId.optional(),
  /** Every listed label equal, ignoring case (keys and values normalised as Labels does). */
  labels: Labels.optional(),
});
export type RouteMatch = z.output<typeof RouteMatch>;

/** A route's approvers: `any` (anyone who sees the message), or Slack users and user groups by id. */
export const RouteApprovers = z.union([z.literal("any"), ApproverList], {
  error: "must be any, or {users: [Slack user ids], usergroups: [Slack user group ids]}",
});
export type RouteApprovers = z.infer<typeof RouteApprovers>;

/** What a route sets (the `default` route too): where its requests go, and its policy keys as the operator writes them. */
const routeSettings = {
  /** Where matched requests go; binding on a `routes` entry: the request may name only it or one of `channels`. */
  channel: SlackChannelId.optional(),
  /** Other channels a matched request may name. */
  channels: z.array(SlackChannelId).min(1).max(100).optional(),
  /** Seconds a matched request waits when it names no timeout. */
  timeoutSeconds: z.number().int().min(1).max(MAX_TIMEOUT_SECONDS).optional(),
  alwaysAllow: AlwaysAllowScope.optional(),
  /** Who may answer; absent on a route → the default route's; `any` → anyone who sees the message. */
  approvers: RouteApprovers.optional(),
  /** Distinct approvals a permission or step_gate request (or a yes/no question) needs; any deny ends it. */
  quorum: Quorum.optional(),
  /** `deny`: the request's requestedBy person may not answer it. */
  selfApproval: SelfApproval.optional(),
  /** Seconds after posting at which the thread reminds the approvers. */
  reminders: z.array(AfterSeconds).max(SCHEDULE_LIMITS.reminders).optional(),
  escalate: z.array(Escalation).max(SCHEDULE_LIMITS.escalate).optional(),
  /** false: no "Allow for 15 min" on this route's messages (default: offered where one approval decides). */
  allowRules: z.boolean().optional(),
  /** Minutes an "Allow for a while" rule created on this route lasts (default 15). */
  ruleMinutes: RuleMinutes.optional(),
  /** What an unanswered request carries when it expires (default deny). */
  onTimeout: OnTimeout.optional(),
  /** The kinds this route accepts: a request of another kind that falls under it is refused with 400, not sent on to a later route. */
  kinds: z.array(RequestKind).min(1).optional(),
  /** Label keys every request under this route must carry, else 400: leaving a label out cannot move a request to a more lenient route. */
  requireLabels: z.array(LabelKey).min(1).max(LABEL_LIMITS.count).optional(),
  /**
   * Most pending requests one agent token may hold when it asks under this
   * route (all its pending requests count); lower than
   * RELAY_MAX_PENDING_PER_TOKEN to mean anything: the lower one applies.
   */
  maxPending: z.number().int().min(1).max(100_000).optional(),
};

/** What a route admits, checked at create and not kept on the record (./routes.ts `admit`). */
export type RouteAdmission = Pick<DefaultRoute, "kinds" | "requireLabels" | "maxPending">;

const Settings = z.strictObject(routeSettings);

/** What the schema alone cannot say about one route: an approver list that names nobody, an escalation to nobody. */
function checkPolicySettings(route: Pick<z.output<typeof Settings>, "approvers" | "escalate">, ctx: z.RefinementCtx): void {
  const { approvers } = route;
  if (approvers !== undefined && approvers !== "any" && !approvers.users?.length && !approvers.usergroups?.length) {
    ctx.addIssue({ code: "custom", path: ["approvers"], message: "names nobody (name at least one user or user group, or use any)" });
  }
  route.escalate?.forEach((escalation, index) => {
    if (!escalation.users?.length && !escalation.usergroups?.length && escalation.channel === undefined) {
      ctx.addIssue({ code: "custom", path: ["escalate", index], message: "escalates to nobody (name users, usergroups or a channel)" });
    }
  });
}

export const Route = z.strictObject({ match: RouteMatch, ...routeSettings }).superRefine(checkPolicySettings);
export type Route = z.output<typeof Route>;
export const DefaultRoute = Settings.superRefine(checkPolicySettings);
export type DefaultRoute = z.output<typeof DefaultRoute>;

/**
 * A route's policy keys in the form the record keeps them: `approvers: any`,
 * `allowRules: true` and `onTimeout: deny` are the defaults and are left out.
 */
export function settingsOf({ approvers, quorum, selfApproval, reminders, escalate, allowRules, ruleMinutes, onTimeout }: DefaultRoute): PolicySettings {
  return {
    ...(approvers === undefined || approvers === "any" ? {} : { approvers }),
    ...(quorum === undefined ? {} : { quorum }),
    ...(selfApproval === undefined ? {} : { selfApproval }),
    ...(reminders === undefined ? {} : { reminders }),
    ...(escalate === undefined ? {} : { escalate }),
    ...(allowRules === false ? { allowRules: false as const } : {}),
    ...(ruleMinutes === undefined ? {} : { ruleMinutes }),
    ...(onTimeout === "halt" ? { onTimeout: "halt" as const } : {}),
  };
}
