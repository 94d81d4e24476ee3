/**
 * The config file (RELAY_CONFIG_FILE, docs/architecture.md §7): YAML or JSON (JSON is
 * YAML, so one parser reads both). Its top level holds environment-variable
 * names (`PORT: 8080`, as before routes existed; the environment wins over
 * them) plus `routes` (first match wins) and `default`. Kept apart from
 * config.ts, which reads the environment, so that each stays small.
 *
 * The file is operator policy, so it fails closed: an unknown key, a bad value
 * or a policy no request could meet (a quorum larger than its approvers)
 * stops the start with one line naming the key path. Messages never echo the
 * file's values: a file may hold the bot token.
 */
import { readFileSync } from "node:fs";
import { parse, YAMLParseError } from "yaml";
import { z } from "zod";
import { checkPolicySettings, policySettings, quorumProblem, type PlacedRoute } from "./config-policy.js";
import { Labels, MAX_TIMEOUT_SECONDS, RequestKind, SlackChannelId } from "./protocol/request-body.js";

export { AfterSeconds, Escalation, OnTimeout, SelfApproval } from "./config-policy.js";

/** What "Always allow" may pass back: `tool` plain rules for the asked tool only, `all` every suggestion (always shown). */
export const AlwaysAllowScope = z.enum(["tool", "all"]);
export type AlwaysAllowScope = z.infer<typeof AlwaysAllowScope>;

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

const RouteMatch = z.strictObject({
  /** Name of the agent token (RELAY_TOKENS). */
  token: z.string().min(1).optional(),
  kind: z.union([RequestKind, z.array(RequestKind).min(1)]).optional(),
  /** Compiled once at start, anchored to the whole tool name. */
  tool: toolPattern.optional(),
  /** `agent.name` of the request. */
  agent: z.string().min(1).optional(),
  /** The channel the request names. */
  channel: SlackChannelId.optional(),
  /** Every listed label equal. */
  labels: Labels.optional(),
});
export type RouteMatch = z.output<typeof RouteMatch>;

/** What a route sets (the `default` route too). */
const routeSettings = {
  /** Where matched requests go; binding on a `routes` entry: the request may name only it or one of `channels`. */
  channel: SlackChannelId.optional(),
  /** Other channels a matched request may name. */
  channels: z.array(SlackChannelId).min(1).max(100).optional(),
  /** Seconds a matched request waits when it names no timeout. */
  timeoutSeconds: z.number().int().min(1).max(MAX_TIMEOUT_SECONDS).optional(),
  alwaysAllow: AlwaysAllowScope.optional(),
  ...policySettings,
};

export const Route = z.strictObject({ match: RouteMatch, ...routeSettings }).superRefine(checkPolicySettings);
export type Route = z.output<typeof Route>;
export const DefaultRoute = z.strictObject(routeSettings).superRefine(checkPolicySettings);
export type DefaultRoute = z.output<typeof DefaultRoute>;

/** Top-level keys that are environment-variable names: as before routes existed. */
const VARIABLE_NAME = /^[A-Z][A-Z0-9_]*$/;

const ConfigFileShape = z.looseObject({ routes: z.array(Route).max(1000).optional(), default: DefaultRoute.optional() }).superRefine((file, ctx) => {
  for (const [key, value] of Object.entries(file)) {
    if (key === "routes" || key === "default") continue;
    if (!VARIABLE_NAME.test(key)) {
      ctx.addIssue({ code: "custom", path: [key], message: "is not a known key (use routes, default or environment-variable names)" });
    } else if (typeof value !== "string" && typeof value !== "number") {
      ctx.addIssue({ code: "custom", path: [key], message: "must be a string or a number" });
    }
  }
});

export interface ConfigFile {
  /** Environment-variable names → values, numbers as text. */
  variables: Record<string, string>;
  routes: Route[];
  default: DefaultRoute;
}

export class ConfigFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ConfigFileError";
  }
}

/** Throws ConfigFileError with one line, without the "RELAY_CONFIG_FILE is invalid: " prefix. */
export function readConfigFile(path: string): ConfigFile {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch {
    throw new ConfigFileError("cannot be read (point it at a readable YAML or JSON file)");
  }
  return parseConfigFile(text);
}

export function parseConfigFile(text: string): ConfigFile {
  let parsed: unknown;
  try {
    parsed = parse(text, { uniqueKeys: true });
  } catch (error) {
    const where = error instanceof YAMLParseError && error.linePos ? ` (line ${error.linePos[0].line}, column ${error.linePos[0].col})` : "";
    throw new ConfigFileError(`is not valid YAML or JSON${where}`);
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new ConfigFileError("must be a mapping of keys to values (routes, default, environment-variable names)");
  }
  const result = ConfigFileShape.safeParse(parsed);
  if (!result.success) throw new ConfigFileError(describeIssue(result.error.issues[0]!));
  const { routes, default: defaultRoute, ...rest } = result.data;
  const variables = Object.fromEntries(Object.entries(rest).map(([key, value]) => [key, String(value as string | number)]));
  const file = { variables, routes: routes ?? [], default: defaultRoute ?? {} };
  const problem = quorumProblem(placesOf(file), file.default);
  if (problem) throw new ConfigFileError(problem);
  return file;
}

/** Every route of the file with its key path, `default` first. */
export function placesOf(file: Pick<ConfigFile, "routes" | "default">): PlacedRoute[] {
  return [["default", file.default], ...file.routes.map((route, index): PlacedRoute => [`routes.${index}`, route])];
}

function describeIssue(issue: z.core.$ZodIssue): string {
  const path = issue.path.map(String).join(".");
  if (issue.code === "unrecognized_keys") {
    const at = path === "" ? "" : `${path}.`;
    return `${at}${issue.keys[0]}: is not a known key`;
  }
  return `${path === "" ? "(top level)" : path}: ${issue.message}`;
}
