/**
 * Configuration, read once at start from the environment and optionally a
 * YAML or JSON file (RELAY_CONFIG_FILE, ./file.ts: the same names as keys,
 * plus approver routes; the environment wins). src/config is the only part
 * of the relay that reads process.env. A wrong value stops the start with
 * one line that names the variable, says which rule it broke where a rule
 * can be named (./rules.ts), and how to fix it (./variables.ts), never
 * quoting a secret.
 *
 * `Config` is what `configSchema` makes of the variables: each parsed by its
 * own schema (./variables.ts), then checked together (Socket or HTTP mode,
 * admin tokens against agent tokens, the Redis variables, schedules against
 * the default timeout) and assembled with the file's routes. Its type is
 * the schema's output, so no interface is written beside it.
 */
import { z } from "zod";
import { settingsOf } from "../requests/route-schema.js";
import { ConfigFileError, placesOf, readConfigFile, type ConfigFile } from "./file.js";
import { scheduleProblem } from "./policy.js";
import { redisTarget, RedisSettingsError } from "./redis.js";
import { RULE_PARAMS, type NamedToken } from "./rules.js";
import { VARIABLES, type VariableName } from "./variables.js";

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ConfigError";
  }
}

type Schemas = { [K in VariableName]: (typeof VARIABLES)[K]["schema"] };
const Variables = z.object(Object.fromEntries(Object.entries(VARIABLES).map(([name, { schema }]) => [name, schema])) as Schemas);

/** The configuration made of the variables (the environment's over the file's) and the file's routes and default route. */
export function configSchema(file: Pick<ConfigFile, "routes" | "default">) {
  return Variables.transform((v, ctx) => {
    const stop = (line: string): never => {
      ctx.addIssue({ code: "custom", message: line, path: [] });
      return z.NEVER;
    };
    // Neither Slack token: local mode (docs/console.md), where the console is the one place to answer.
    const local = !v.SLACK_BOT_TOKEN && !v.SLACK_APP_TOKEN;
    if (!local && !v.SLACK_BOT_TOKEN) return stop(missing("SLACK_BOT_TOKEN"));
    if (!local && !v.SLACK_APP_TOKEN && !v.SLACK_SIGNING_SECRET) return stop(missing("SLACK_SIGNING_SECRET"));
    if (!local && !v.RELAY_TOKENS) return stop(missing("RELAY_TOKENS"));
    const adminTokens = v.RELAY_ADMIN_TOKENS ?? [];
    const tokens = v.RELAY_TOKENS ?? [];
    const clash = adminTokenClash(tokens, adminTokens);
    if (clash) return stop(`RELAY_ADMIN_TOKENS is invalid: ${clash}`);
    const signInWithSlack = [v.SLACK_CLIENT_ID, v.SLACK_CLIENT_SECRET].filter(Boolean).length;
    if (signInWithSlack === 1) return stop(missing(v.SLACK_CLIENT_ID ? "SLACK_CLIENT_SECRET" : "SLACK_CLIENT_ID"));
    if (signInWithSlack === 2 && local)
      return stop("SLACK_CLIENT_ID is set in local mode: Sign in with Slack needs SLACK_BOT_TOKEN too (or unset SLACK_CLIENT_ID)");
    if (signInWithSlack === 2 && !v.RELAY_PUBLIC_URL) return stop(missing("RELAY_PUBLIC_URL"));
    let redis;
    try {
      redis = redisTarget({
        url: v.REDIS_URL,
        cluster: v.REDIS_CLUSTER_NODES,
        sentinels: v.REDIS_SENTINELS,
        name: v.REDIS_SENTINEL_NAME,
        username: v.REDIS_USERNAME,
        password: v.REDIS_PASSWORD,
        tls: v.REDIS_TLS,
        caFile: v.REDIS_TLS_CA_FILE,
        sentinelUsername: v.REDIS_SENTINEL_USERNAME,
        sentinelPassword: v.REDIS_SENTINEL_PASSWORD,
      });
    } catch (error) {
      if (error instanceof RedisSettingsError) return stop(error.message);
      throw error;
    }
    // RELAY_DEFAULT_TIMEOUT in the environment wins over the file's, so schedules are checked against the merged one.
    const late = scheduleProblem(placesOf(file), v.RELAY_DEFAULT_TIMEOUT);
    if (late) return stop(`RELAY_CONFIG_FILE is invalid: ${late}`);
    return {
      /**
       * No Slack token: the relay runs without Slack, on 127.0.0.1 only, answered in the web console;
       * with no RELAY_TOKENS it makes an agent token and writes it to `localStateHome`'s local.json.
       */
      local,
      /** XDG_STATE_HOME: where local mode writes local.json (src/protocol/local-relay.ts). */
      localStateHome: v.XDG_STATE_HOME,
      slack: {
        /** Unset in local mode only. */
        botToken: v.SLACK_BOT_TOKEN,
        /** Set → Socket Mode. */
        appToken: v.SLACK_APP_TOKEN,
        /** Required in HTTP mode. */
        signingSecret: v.SLACK_SIGNING_SECRET,
        /** Web API base URL, ending in "/". */
        apiUrl: v.SLACK_API_URL.endsWith("/") ? v.SLACK_API_URL : `${v.SLACK_API_URL}/`,
        defaultChannel: v.SLACK_DEFAULT_CHANNEL,
      },
      /** RELAY_PUBLIC_URL: the relay's origin as browsers reach it (the console's Host allowlist, Sign in with Slack's redirect). */
      publicUrl: v.RELAY_PUBLIC_URL,
      /** Sign in with Slack to the console: the app's client id and secret; undefined → off. */
      slackSignIn: v.SLACK_CLIENT_ID && v.SLACK_CLIENT_SECRET ? { clientId: v.SLACK_CLIENT_ID, clientSecret: v.SLACK_CLIENT_SECRET } : undefined,
      /** RELAY_CONSOLE_SESSION_TTL: how long a console session lasts, in milliseconds. */
      consoleSessionTtlMs: v.RELAY_CONSOLE_SESSION_TTL,
      /** RELAY_CONSOLE_SESSIONS_PER_PERSON: most answering console sessions one person holds at once. */
      consoleSessionsPerPerson: v.RELAY_CONSOLE_SESSIONS_PER_PERSON,
      /** RELAY_TOKENS; [] in local mode without it (the relay makes one). */
      tokens,
      /** RELAY_ADMIN_TOKENS: read-only operator tokens (the audit, every request); names and tokens distinct from the agent tokens'. */
      adminTokens,
      /** RELAY_AUDIT_MAX_EVENTS: at it, only decisions are written; each agent token's share of it bounds what the token writes (src/requests/audit.ts). */
      auditMaxEvents: v.RELAY_AUDIT_MAX_EVENTS,
      /** How long audit events are kept, in milliseconds. */
      auditRetentionMs: v.RELAY_AUDIT_RETENTION,
      /** RELAY_AUDIT_EXPORT: the file that gets a copy of every audit event, when set. */
      auditExportPath: v.RELAY_AUDIT_EXPORT,
      /** The shared store: one Redis server, a Redis Cluster or Sentinel's master; undefined → the in-memory store. */
      redis,
      /** Prefix of every Redis key, so several relays may share one Redis. */
      redisPrefix: v.REDIS_PREFIX,
      port: v.PORT,
      /** Seconds a request waits when it names no timeout. */
      defaultTimeoutSeconds: v.RELAY_DEFAULT_TIMEOUT,
      /** Most pending requests one agent token may hold (a route's `maxPending` may set it lower). */
      maxPendingPerToken: v.RELAY_MAX_PENDING_PER_TOKEN,
      /** Creates (POST /v1/requests, hook calls) one agent token may make per minute on one instance. */
      createRateLimit: v.RELAY_CREATE_RATE_LIMIT,
      /** Seconds Claude Code waits for an http hook when the URL gives no ?timeout=. */
      hookTimeoutSeconds: v.RELAY_HOOK_TIMEOUT,
      /** Longest a store (Redis) call may take, in milliseconds; undefined → the store's default (2 s). */
      storeTimeoutMs: v.RELAY_STORE_TIMEOUT_MS,
      /** RELAY_MAX_BODY: largest body of a create and of a Claude Code hook call, in bytes. */
      maxBodyBytes: v.RELAY_MAX_BODY,
      /** Hosts callbacks may go to; undefined → any host. */
      callbackHosts: v.RELAY_CALLBACK_HOSTS,
      /** Seconds held calls may still finish after SIGTERM before the relay hands over and stops. */
      shutdownGraceSeconds: v.RELAY_SHUTDOWN_GRACE,
      /** Seconds between the whitespace a held Claude Code hook call is kept alive with. */
      hookKeepaliveSeconds: v.RELAY_HOOK_KEEPALIVE,
      /** Seconds between the progress notifications of a waiting MCP tool call. */
      mcpProgressSeconds: v.RELAY_MCP_PROGRESS,
      /** Origins a browser-based MCP client may call POST /mcp from; [] → none. */
      mcpOrigins: v.RELAY_MCP_ORIGINS ?? [],
      logLevel: v.LOG_LEVEL,
      /** What an Always allow click may grant (else the file's `default.alwaysAllow`). */
      alwaysAllow: v.RELAY_ALWAYS_ALLOW,
      /** The config file's `routes`, in order (first match wins); [] without a file. */
      routes: file.routes,
      /** The file's `default.channels`: the channels a request no route matches may name; absent → any. */
      ...(file.default.channels ? { defaultChannels: file.default.channels } : {}),
      /** The default route's policy keys; a matched route's own keys replace them. {} without a file. */
      defaultPolicy: settingsOf(file.default),
      /** What the default route admits: its `kinds` and `requireLabels` (a matched route admits by its own). */
      defaultAdmission: {
        ...(file.default.kinds ? { kinds: file.default.kinds } : {}),
        ...(file.default.requireLabels ? { requireLabels: file.default.requireLabels } : {}),
        ...(file.default.maxPending ? { maxPending: file.default.maxPending } : {}),
      },
      /** The bearer token GET /metrics asks for; undefined → /metrics is open. */
      metricsToken: v.METRICS_TOKEN,
    };
  });
}

export type Config = z.output<ReturnType<typeof configSchema>>;
/** An agent (RELAY_TOKENS) or admin (RELAY_ADMIN_TOKENS) token with its name. */
export type AgentToken = NamedToken;

export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const file = configFile(env.RELAY_CONFIG_FILE);
  // Empty strings count as unset, so an empty variable leaves the config file's value in place.
  const source = definedOnly({ ...defaultRouteVariables(file), ...file.variables, ...definedOnly(env) });
  const result = configSchema(file).safeParse(source);
  if (!result.success) throw new ConfigError(lineOf(result.error.issues[0]!, source));
  return result.data;
}

/** The one line for the first problem: a check across variables words its own; a variable's names it, the rule it broke and the fix. */
function lineOf(issue: z.core.$ZodIssue, source: Record<string, string>): string {
  const name = issue.path[0] as VariableName | undefined;
  if (name === undefined) return issue.message;
  if (source[name] === undefined) return missing(name);
  const rule = issue.code === "custom" && issue.params?.rule === RULE_PARAMS.rule ? `${issue.message}; ` : "";
  return `${name} is invalid: ${rule}${VARIABLES[name].hint}`;
}

function missing(name: VariableName): string {
  return `${name} is missing: ${VARIABLES[name].hint}`;
}

/**
 * An admin token is told apart from an agent token by its value alone, and
 * shown by its name: both must be its own. Says which name clashes, never a token.
 */
function adminTokenClash(agents: readonly NamedToken[], admins: readonly NamedToken[]): string | undefined {
  const agentNames = new Set(agents.map((t) => t.name));
  const agentTokens = new Set(agents.map((t) => t.token));
  for (const { name, token } of admins) {
    if (agentNames.has(name)) return `the name "${name}" is also an agent token's in RELAY_TOKENS; token names must be unique across both`;
    if (agentTokens.has(token)) return `the token of "${name}" is also an agent token in RELAY_TOKENS; give each admin token a value of its own`;
  }
  return undefined;
}

function definedOnly(env: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined && entry[1] !== ""));
}

function configFile(path: string | undefined): ConfigFile {
  if (!path) return { variables: {}, routes: [], default: {} };
  try {
    return readConfigFile(path);
  } catch (error) {
    if (error instanceof ConfigFileError) throw new ConfigError(`RELAY_CONFIG_FILE is invalid: ${error.message}`);
    throw error;
  }
}

/** The `default` route's settings stand for the variables they share a meaning with; a variable, in the file or the environment, wins. */
function defaultRouteVariables(file: ConfigFile): Record<string, string> {
  const { channel, timeoutSeconds, alwaysAllow } = file.default;
  return {
    ...(channel === undefined ? {} : { SLACK_DEFAULT_CHANNEL: channel }),
    ...(timeoutSeconds === undefined ? {} : { RELAY_DEFAULT_TIMEOUT: String(timeoutSeconds) }),
    ...(alwaysAllow === undefined ? {} : { RELAY_ALWAYS_ALLOW: alwaysAllow }),
  };
}
