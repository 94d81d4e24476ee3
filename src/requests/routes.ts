/**
 * Approver routes (docs/architecture.md §7), the part that applies at create: which of the
 * operator's routes a new request falls under (first match wins, no match →
 * the `default` route) and where the route lets it be posted. A route's
 * `channel` is binding, so an agent cannot send its own request to a lenient
 * person's DM. Pure; the service looks the route up once per create and the
 * record keeps the outcome (its policy names the route), so every instance
 * applies the same.
 */
import type { CreateRequestBody } from "../protocol/request-body.js";
import type { Route, RouteAdmission, RouteMatch } from "./route-schema.js";
import { invalidRequest } from "./errors.js";

/** What a route is matched against. */
export interface RouteSubject {
  /** Name of the agent token that creates the request. */
  tokenName: string;
  body: CreateRequestBody;
  /** SLACK_DEFAULT_CHANNEL (or the default route's `channel`, else the first of its `channels`): where a request that names no channel goes. */
  defaultChannel?: string;
}

export interface MatchedRoute {
  /** `routes.<index>` or `default`: shown in logs and kept on the record's policy. */
  name: string;
  /** Undefined for the default route. */
  route?: Route;
}

export const DEFAULT_ROUTE_NAME = "default";

/** The first route whose every `match` field holds for the request; the default route when none does. */
export function matchRoute(routes: readonly Route[], subject: RouteSubject): MatchedRoute {
  const index = routes.findIndex((route) => matches(route.match, subject));
  return index < 0 ? { name: DEFAULT_ROUTE_NAME } : { name: `routes.${index}`, route: routes[index]! };
}

function matches(match: RouteMatch, { tokenName, body, defaultChannel }: RouteSubject): boolean {
  if (match.token !== undefined && match.token !== tokenName) return false;
  if (match.kind !== undefined && !(Array.isArray(match.kind) ? match.kind.includes(body.kind) : match.kind === body.kind)) return false;
  if (match.tool !== undefined) {
    // Question kinds name no tool, so a route that asks for one does not take them.
    if (!("toolName" in body) || !match.tool.test(body.toolName)) return false;
  }
  if (match.agent !== undefined && match.agent !== body.agent?.name) return false;
  if (match.channel !== undefined && match.channel !== (body.channel ?? defaultChannel)) return false;
  if (match.labels !== undefined) {
    const labels = body.labels ?? {};
    const equal = (key: string, value: string) => Object.hasOwn(labels, key) && labels[key]!.toLowerCase() === value.toLowerCase();
    if (!Object.entries(match.labels).every(([key, value]) => equal(key, value))) return false;
  }
  return true;
}

/**
 * Refuses with a 400 a request its route does not admit: a kind the route's
 * `kinds` leaves out, or a label its `requireLabels` names missing. Each
 * route admits by its own keys (`defaults` are the default route's); a
 * matched route does not take them from `default`.
 */
export function admit({ name, route }: MatchedRoute, body: CreateRequestBody, defaults: RouteAdmission = {}): void {
  const { kinds, requireLabels } = route ?? defaults;
  if (kinds !== undefined && !kinds.includes(body.kind)) {
    throw invalidRequest([{ path: "kind", message: `the relay's route ${name} accepts only ${kinds.join(", ")} requests` }]);
  }
  const missing = (requireLabels ?? []).filter((key) => !Object.hasOwn(body.labels ?? {}, key));
  if (missing.length > 0) {
    throw invalidRequest(missing.map((key) => ({ path: `labels.${key}`, message: `is required by the relay's route ${name}` })));
  }
}

export interface ChannelChoice {
  /** The request's own `channel`, if it names one. */
  requested?: string;
  matched: MatchedRoute;
  /** SLACK_DEFAULT_CHANNEL (or the default route's `channel`). */
  defaultChannel?: string;
  /** The default route's `channels`: what a request no route matches may name; undefined → any. */
  defaultChannels?: readonly string[];
}

/**
 * Where the request goes: the channel it names, else its route's, else the
 * default. Throws a 400 on `channel` when the route does not allow it or no
 * channel is known.
 */
export function chooseChannel({ requested, matched, defaultChannel, defaultChannels }: ChannelChoice): string {
  const route = matched.route;
  const channel = requested ?? route?.channel ?? route?.channels?.[0] ?? defaultChannel ?? defaultChannels?.[0];
  if (!channel) throw invalidRequest([{ path: "channel", message: "no channel given and SLACK_DEFAULT_CHANNEL is not set" }]);
  const allowed = allowedChannels(matched, defaultChannel, defaultChannels);
  if (allowed && !allowed.includes(channel)) {
    throw invalidRequest([{ path: "channel", message: `the relay's route ${matched.name} allows only ${allowed.join(", ")}` }]);
  }
  return channel;
}

/** Undefined → any channel. */
function allowedChannels(matched: MatchedRoute, defaultChannel?: string, defaultChannels?: readonly string[]): string[] | undefined {
  const route = matched.route;
  if (route) {
    if (route.channel === undefined && route.channels === undefined) return undefined;
    return [...(route.channel === undefined ? [] : [route.channel]), ...(route.channels ?? [])];
  }
  if (defaultChannels === undefined) return undefined;
  return [...(defaultChannel === undefined ? [] : [defaultChannel]), ...defaultChannels];
}
