/**
 * The policy keys of a config-file route (docs/architecture.md §7): who may answer
 * (`approvers`), how many must agree (`quorum`), whether the requester may
 * (`selfApproval`), and when the thread reminds and escalates. Their
 * schemas, and the checks no schema can make alone because they look across
 * keys, across routes (a route's own key replaces the default route's) or at
 * the environment's default timeout. Apart from config-file.ts, which reads
 * the file, so that each stays small; the record keeps these keys in the
 * form `PolicySettings` gives them (src/requests/model.ts).
 */
import { z } from "zod";
import { APPROVER_LIMITS, ApproverList, MAX_TIMEOUT_SECONDS, Quorum, SlackChannelId, SlackUserId, SlackUsergroupId } from "./protocol/request-body.js";

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

/** Most reminders and escalations one route may list. */
export const SCHEDULE_LIMITS = { reminders: 20, escalate: 10 } as const;

/** A route's approvers: `any` (anyone who sees the message), or Slack users and user groups by id. */
export const RouteApprovers = z.union([z.literal("any"), ApproverList], {
  error: "must be any, or {users: [Slack user ids], usergroups: [Slack user group ids]}",
});
export type RouteApprovers = z.infer<typeof RouteApprovers>;

/** The policy keys every route (and `default`) may set. */
export const policySettings = {
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
  ruleMinutes: z.number().int().min(1).max(MAX_RULE_MINUTES).optional(),
  /** What an unanswered request carries when it expires (default deny). */
  onTimeout: OnTimeout.optional(),
};

/**
 * The policy keys of the `default` route as requests take them (a route's
 * own keys replace them one by one): absent approvers → anyone.
 */
export interface PolicySettings {
  approvers?: ApproverList;
  quorum?: number;
  selfApproval?: SelfApproval;
  /** Seconds after posting. */
  reminders?: number[];
  escalate?: Escalation[];
  /** Only `false` is kept: rules are allowed by default. */
  allowRules?: false;
  ruleMinutes?: number;
  /** Only `halt` is kept: deny is the default. */
  onTimeout?: "halt";
}

/** A route as these checks read it. */
interface RoutePolicyKeys {
  approvers?: RouteApprovers;
  quorum?: number;
  reminders?: number[];
  escalate?: Escalation[];
  /** Seconds. */
  timeoutSeconds?: number;
}

/** A route with its key path (`routes.<index>` or `default`). */
export type PlacedRoute = [path: string, route: RoutePolicyKeys];

/** What the schema alone cannot say about one route: an approver list that names nobody, an escalation to nobody. */
export function checkPolicySettings(route: RoutePolicyKeys, ctx: z.RefinementCtx): void {
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

/** The policy keys as a route writes them, all of them optional. */
export interface RouteSettings extends RoutePolicyKeys {
  selfApproval?: SelfApproval;
  allowRules?: boolean;
  ruleMinutes?: number;
  onTimeout?: OnTimeout;
}

/** The default route's policy keys, as requests take them (`approvers: any` → absent). */
export function defaultPolicy(route: RouteSettings): PolicySettings {
  return settingsOf(route);
}

/**
 * A route's policy keys in the form the record keeps them: `approvers: any`,
 * `allowRules: true` and `onTimeout: deny` are the defaults and are left out.
 */
export function settingsOf({ approvers, quorum, selfApproval, reminders, escalate, allowRules, ruleMinutes, onTimeout }: RouteSettings): PolicySettings {
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

/**
 * A quorum no request could meet, as one line: more approvals than a
 * route's approvers can give when they are users only (a group may grow,
 * `any` takes any number). A route's own key replaces the default's, so a
 * route is checked with what it takes from `default` (the first place); the
 * line names the key the route sets.
 */
export function quorumProblem(places: readonly PlacedRoute[], defaults: RoutePolicyKeys): string | undefined {
  for (const [path, route] of places) {
    const approvers = route.approvers ?? defaults.approvers;
    const quorum = route.quorum ?? defaults.quorum ?? 1;
    if (approvers === undefined || approvers === "any" || approvers.usergroups?.length) continue;
    const users = new Set(approvers.users).size;
    if (quorum <= users) continue;
    const [key, inherited] = route.quorum === undefined ? ["approvers", " it takes from default"] : ["quorum", ""];
    const listed = `${users} approver${users === 1 ? "" : "s"} listed`;
    return `${path}.${key}: the quorum of ${quorum}${inherited} is more than the ${listed} (list more users, add a user group, or lower the quorum)`;
  }
  return undefined;
}

/**
 * Reminders and escalations due at or after their route's timeout (its own
 * timeoutSeconds, else `defaultTimeoutSeconds`, which the environment may
 * set, and always that one for `default`) could never be sent: the first
 * such key, as one line. Keys a route takes from `default` are checked there.
 */
export function scheduleProblem(places: readonly PlacedRoute[], defaultTimeoutSeconds: number): string | undefined {
  for (const [path, route] of places) {
    const own = path !== "default" && route.timeoutSeconds !== undefined;
    const timeout = own ? route.timeoutSeconds! : defaultTimeoutSeconds;
    const entries: Array<[string, number]> = [
      ...(route.reminders ?? []).map((after, index): [string, number] => [`reminders.${index}`, after]),
      ...(route.escalate ?? []).map((escalation, index): [string, number] => [`escalate.${index}.after`, escalation.after]),
    ];
    const late = entries.find(([, after]) => after >= timeout);
    if (late) {
      const whose = own ? "the route's timeoutSeconds" : "the default timeout";
      return `${path}.${late[0]}: is not before ${whose} of ${timeout} seconds, so it would never be sent (lower it or raise the timeout)`;
    }
  }
  return undefined;
}
