/**
 * The checks of a config file's policy that no route schema can make alone
 * (src/requests/route-schema.ts holds the schemas, the domain's): they look
 * across routes (a route's own key replaces the default route's) or at the
 * environment's default timeout. Each finds the first problem and words it
 * as one line naming the key path.
 */
import type { DefaultRoute } from "../requests/route-schema.js";

/** A route as these checks read it. */
type RoutePolicyKeys = Pick<DefaultRoute, "approvers" | "quorum" | "reminders" | "escalate" | "timeoutSeconds">;

/** A route with its key path (`routes.<index>` or `default`). */
export type PlacedRoute = [path: string, route: RoutePolicyKeys];

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
