/**
 * The config file (RELAY_CONFIG_FILE, docs/architecture.md §7): YAML or JSON (JSON is
 * YAML, so one parser reads both). Its top level holds environment-variable
 * names (`PORT: 8080`, as before routes existed; the environment wins over
 * them) plus `routes` (first match wins) and `default`, read with the
 * domain's route schemas (src/requests/route-schema.ts). Kept apart from
 * ./config.ts, which reads the environment, so that each stays small.
 *
 * The file is operator policy, so it fails closed: an unknown key, whatever
 * its case and level (a misspelt METRICS_TOKEN would leave /metrics open), a
 * bad value or a policy no request could meet (a quorum larger than its
 * approvers) stops the start with one line naming the key path, and for an
 * unknown key the closest known one (./suggest.ts). Messages never echo the
 * file's values: a file may hold the bot token.
 */
import { readFileSync } from "node:fs";
import { parse, YAMLParseError } from "yaml";
import { z } from "zod";
import { DefaultRoute, Route } from "../requests/route-schema.js";
import { quorumProblem, type PlacedRoute } from "./policy.js";
import { closestKey, knownKeysAt } from "./suggest.js";
import { FILE_VARIABLE_NAMES } from "./variables.js";

/** The keys of the file's top level. */
const TOP_LEVEL_KEYS = ["routes", "default", ...FILE_VARIABLE_NAMES];
const VARIABLE_KEYS = new Set(FILE_VARIABLE_NAMES);

const ConfigFileShape = z.looseObject({ routes: z.array(Route).max(1000).optional(), default: DefaultRoute.optional() }).superRefine((file, ctx) => {
  for (const [key, value] of Object.entries(file)) {
    if (key === "routes" || key === "default") continue;
    if (key === "RELAY_CONFIG_FILE") {
      ctx.addIssue({ code: "custom", path: [key], message: "names the config file itself, which only the environment can" });
    } else if (!VARIABLE_KEYS.has(key)) {
      ctx.addIssue({ code: "unrecognized_keys", path: [], keys: [key], input: file });
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
  if (issue.code === "unrecognized_keys") return unknownKey(issue.path, issue.keys[0]!);
  return `${path === "" ? "(top level)" : path}: ${issue.message}`;
}

/**
 * An unknown key, whatever its case, as one line: its path and the closest
 * key known there, or the keys known there when none is close (a typo is
 * never accepted and silently not applied).
 */
function unknownKey(at: readonly PropertyKey[], key: string): string {
  const known = at.length === 0 ? TOP_LEVEL_KEYS : knownKeysAt(ConfigFileShape, at);
  const where = [...at.map(String), key].join(".");
  const closest = closestKey(key, known);
  if (closest) return `${where}: is not a known key (did you mean ${closest}?)`;
  if (at.length === 0) return `${where}: is not a known key (use routes, default or the name of a variable of the configuration reference)`;
  return `${where}: is not a known key (known keys there: ${known.join(", ")})`;
}
