/**
 * The policy a new request is created under (docs/architecture.md §7): its route's
 * approvers, quorum, selfApproval, reminders and escalations (a route's own
 * keys replace the default route's one by one), narrowed by the request's
 * own `approvers` and `quorum`, and the person it is made for
 * (`requestedBy`, an email resolved to a Slack user id). An agent token is
 * less trusted than the operator, so a request may only narrow: a wider ask
 * is a 400 naming the field.
 *
 * Async because two checks need Slack (through the PeopleDirectory): an
 * email's user id, and whether a person a request names is in one of its
 * route's user groups. Every check that needs no lookup runs first, so bad
 * input is a 400 even while Slack is away; a lookup Slack cannot answer is
 * a 503 relay_slack_unavailable, and so is one without a directory at all
 * (the relay cannot check, so it does not create: fail closed).
 */
import type { ApproverList, CreateRequestBody, RequestedBy } from "../protocol/request-body.js";
import { DirectoryUnavailableError, type PeopleDirectory } from "./directory.js";
import { invalidRequest, SlackUnavailableError, type FieldProblem } from "./errors.js";
import type { RequestPolicy } from "./model.js";
import { takesQuorum } from "./policy.js";
import type { MatchedRoute } from "./routes.js";
import type { Route } from "./route-schema.js";
import type { OnTimeout } from "./vocabulary.js";

export interface CreatePolicyInput {
  body: CreateRequestBody;
  matched: MatchedRoute;
  /** The default route's policy: Always allow scope and the policy keys a matched route may replace. */
  defaults: RequestPolicy;
  /** Without one, a request that needs a lookup (an email, a group member) gets 503 relay_slack_unavailable. */
  directory?: PeopleDirectory;
}

/** What the matched route asks, with the default route's keys where it sets none (a route may say `allowRules: true`, `onTimeout: deny`). */
type RoutePolicy = Omit<RequestPolicy, "requestedBy" | "allowRules" | "onTimeout"> & { allowRules?: boolean; onTimeout?: OnTimeout };

/**
 * The record's policy: the route's, narrowed by the body; quorum only where
 * one applies and above 1, selfApproval only when `deny`. Throws a 400
 * (RelayError) naming the field, or 503 relay_slack_unavailable.
 */
export async function createPolicy({ body, matched, defaults, directory }: CreatePolicyInput): Promise<RequestPolicy> {
  const route = routePolicy(matched, defaults);
  const { approvers, unlisted } = narrowApprovers(body.approvers, route.approvers);
  const quorum = narrowQuorum(body, route.quorum ?? 1, approvers, matched.name);
  const requestedBy = body.requestedBy === undefined ? undefined : await resolveRequester(body.requestedBy, directory);
  await checkMembers(unlisted, route.approvers?.usergroups ?? [], directory);
  const { alwaysAllow, selfApproval, reminders, escalate, allowRules, ruleMinutes, onTimeout } = route;
  return {
    alwaysAllow,
    route: matched.name,
    ...(approvers ? { approvers } : {}),
    ...(quorum > 1 ? { quorum } : {}),
    ...(selfApproval === "deny" ? { selfApproval } : {}),
    ...(requestedBy ? { requestedBy } : {}),
    ...(reminders?.length ? { reminders } : {}),
    ...(escalate?.length ? { escalate } : {}),
    ...(allowRules === false ? { allowRules } : {}),
    ...(ruleMinutes === undefined ? {} : { ruleMinutes }),
    ...(onTimeout === "halt" ? { onTimeout } : {}),
  };
}

/** The matched route's keys over the default route's; `approvers: any` on a route → anyone, whatever the default says. */
function routePolicy({ name, route }: MatchedRoute, defaults: RequestPolicy): RoutePolicy {
  const { requestedBy: _, ...policy } = { ...defaults, ...ownKeys(route), route: name };
  if (route?.approvers === "any") delete policy.approvers;
  return policy;
}

/** The policy keys a route sets itself (`approvers: any` stands for "anyone", see routePolicy). */
function ownKeys(route: Route | undefined): Partial<RoutePolicy> {
  if (route === undefined) return {};
  const { alwaysAllow, approvers, quorum, selfApproval, reminders, escalate, allowRules, ruleMinutes, onTimeout } = route;
  return {
    ...(alwaysAllow === undefined ? {} : { alwaysAllow }),
    ...(approvers === undefined || approvers === "any" ? {} : { approvers }),
    ...(quorum === undefined ? {} : { quorum }),
    ...(selfApproval === undefined ? {} : { selfApproval }),
    ...(reminders === undefined ? {} : { reminders }),
    ...(escalate === undefined ? {} : { escalate }),
    // A route's own `allowRules: true` / `onTimeout: deny` override a stricter default: their absence on the record means the default.
    ...(allowRules === undefined ? {} : { allowRules }),
    ...(ruleMinutes === undefined ? {} : { ruleMinutes }),
    ...(onTimeout === undefined ? {} : { onTimeout }),
  };
}

const NARROW_ONLY = "a request may only narrow who may answer";

/**
 * The approvers the request ends with, and the users it names that its route
 * lists only through a user group (their membership is looked up next).
 */
function narrowApprovers(asked: ApproverList | undefined, route: ApproverList | undefined): { approvers?: ApproverList; unlisted: Array<[number, string]> } {
  if (asked === undefined) return route === undefined ? { unlisted: [] } : { approvers: route, unlisted: [] };
  const users = [...new Set(asked.users ?? [])];
  const usergroups = [...new Set(asked.usergroups ?? [])];
  if (users.length === 0 && usergroups.length === 0) {
    throw invalidRequest([{ path: "approvers", message: "names nobody (name at least one user or user group, or leave approvers out to keep the route's)" }]);
  }
  const approvers: ApproverList = { ...(users.length ? { users } : {}), ...(usergroups.length ? { usergroups } : {}) };
  if (route === undefined) return { approvers, unlisted: [] };
  const problems: FieldProblem[] = [];
  const unlisted: Array<[number, string]> = [];
  const routeGroups = route.usergroups ?? [];
  (asked.usergroups ?? []).forEach((group, index) => {
    if (!routeGroups.includes(group))
      problems.push({ path: `approvers.usergroups.${index}`, message: `is not one of the route's user groups (${NARROW_ONLY})` });
  });
  (asked.users ?? []).forEach((user, index) => {
    if (route.users?.includes(user)) return;
    if (routeGroups.length > 0) unlisted.push([index, user]);
    else problems.push({ path: `approvers.users.${index}`, message: `is not one of the route's approvers (${NARROW_ONLY})` });
  });
  if (problems.length > 0) throw invalidRequest(problems);
  return { approvers, unlisted };
}

/**
 * The quorum the request ends with: at least its route's, and one its
 * approvers can reach. A route's quorum applies to every request it accepts:
 * one that cannot collect several approvals (a choice, several questions) is
 * refused, so asking the same thing as a question does not dodge it.
 */
function narrowQuorum(body: CreateRequestBody, routeQuorum: number, approvers: ApproverList | undefined, routeName: string): number {
  const takes = takesQuorum({ body });
  if (!takes && routeQuorum > 1) {
    const message = `the relay's route ${routeName} needs ${routeQuorum} approvals, which a ${body.kind} request like this one cannot collect (permission, step_gate and a lone yes/no question can)`;
    throw invalidRequest([{ path: "kind", message }]);
  }
  const asked = body.quorum;
  if (asked !== undefined && asked > 1 && !takes) {
    const message = `a ${body.kind} request takes the first answer of an approver (quorum applies to permission, step_gate and a lone yes/no question)`;
    throw invalidRequest([{ path: "quorum", message }]);
  }
  if (!takes) return 1;
  if (asked !== undefined && asked < routeQuorum) {
    throw invalidRequest([{ path: "quorum", message: `must be at least the route's quorum of ${routeQuorum} (a request may only ask for more approvals)` }]);
  }
  const quorum = asked ?? routeQuorum;
  const users = approvers?.users?.length ?? 0;
  if (approvers !== undefined && !approvers.usergroups?.length && quorum > users) {
    const approverCount = `${users} approver${users === 1 ? "" : "s"}`;
    if (asked !== undefined) throw invalidRequest([{ path: "quorum", message: `is more than the ${approverCount} who may answer` }]);
    throw invalidRequest([{ path: "approvers", message: `names ${approverCount}, fewer than the route's quorum of ${quorum}` }]);
  }
  return quorum;
}

async function resolveRequester(requestedBy: RequestedBy, directory: PeopleDirectory | undefined): Promise<NonNullable<RequestPolicy["requestedBy"]>> {
  if ("slackUserId" in requestedBy) return { id: requestedBy.slackUserId };
  const id = await lookup(directory, (people) => people.userIdByEmail(requestedBy.email));
  if (id === undefined) {
    throw invalidRequest([
      { path: "requestedBy.email", message: "is not the email of a Slack user in the relay's workspace (give their slackUserId instead)" },
    ]);
  }
  return { id, email: requestedBy.email };
}

/** Each user the request names that its route lists only through groups must be in one of them. */
async function checkMembers(unlisted: ReadonlyArray<[number, string]>, groups: readonly string[], directory: PeopleDirectory | undefined): Promise<void> {
  const problems: FieldProblem[] = [];
  for (const [index, user] of unlisted) {
    let member = false;
    for (const group of groups) {
      if ((await lookup(directory, (people) => people.usergroupMembers(group))).has(user)) {
        member = true;
        break;
      }
    }
    if (!member)
      problems.push({ path: `approvers.users.${index}`, message: `is neither one of the route's approvers nor in its user groups (${NARROW_ONLY})` });
  }
  if (problems.length > 0) throw invalidRequest(problems);
}

/** One call to the directory: 503 relay_slack_unavailable when there is none or Slack does not answer. */
async function lookup<T>(directory: PeopleDirectory | undefined, call: (people: PeopleDirectory) => Promise<T>): Promise<T> {
  if (directory === undefined) throw new SlackUnavailableError("the relay has no people directory");
  try {
    return await call(directory);
  } catch (error) {
    if (error instanceof DirectoryUnavailableError) throw new SlackUnavailableError(error.reason, { cause: error });
    throw error;
  }
}
