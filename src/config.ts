/**
 * Configuration, read once at start from the environment and optionally a
 * YAML or JSON file (RELAY_CONFIG_FILE, ./config-file.ts: the same names as
 * keys, plus approver routes; the environment wins).
 * This is the only module that reads process.env. A wrong value stops the
 * start with one line that names the variable and says how to fix it.
 */
import { z } from "zod";
import { AlwaysAllowScope, ConfigFileError, placesOf, readConfigFile, type ConfigFile, type Route } from "./config-file.js";
import { defaultPolicy, scheduleProblem, type PolicySettings } from "./config-policy.js";
import { CA_FILE_HINT, parseAddresses, parseClusterNodes, parseRedisUrl, redisTarget, RedisSettingsError, type RedisTarget } from "./config-redis.js";
import { DEFAULT_HOOK_TIMEOUT_SECONDS, MAX_HOOK_TIMEOUT_SECONDS } from "./protocol/claude-code-hook.js";
import { MAX_TIMEOUT_SECONDS, SlackChannelId } from "./protocol/request-body.js";

export { AlwaysAllowScope, type DefaultRoute, type Route, type RouteMatch } from "./config-file.js";
export type { PolicySettings } from "./config-policy.js";

export interface AgentToken {
  /** Shown in Slack as the requester and in the audit log. */
  name: string;
  token: string;
}

/** What a token may do: an agent's (RELAY_TOKENS) or a read-only operator's (RELAY_ADMIN_TOKENS). */
export type TokenRole = "agent" | "admin";

export interface Config {
  slack: {
    botToken: string;
    /** Set → Socket Mode. */
    appToken?: string;
    /** Required in HTTP mode. */
    signingSecret?: string;
    /** Web API base URL, ending in "/". */
    apiUrl: string;
    defaultChannel?: string;
  };
  tokens: AgentToken[];
  /** RELAY_ADMIN_TOKENS: read-only operator tokens (the audit, every request); names and tokens distinct from the agent tokens'. */
  adminTokens: AgentToken[];
  /** RELAY_AUDIT_MAX_EVENTS: most events the audit log keeps, the oldest dropped beyond it. */
  auditMaxEvents: number;
  /** The shared store: one Redis server (REDIS_URL), a Redis Cluster (REDIS_CLUSTER_NODES) or Sentinel's master (REDIS_SENTINELS); undefined → the in-memory store. */
  redis?: RedisTarget;
  /** Prefix of every Redis key, so several relays may share one Redis. */
  redisPrefix: string;
  port: number;
  /** Seconds a request waits when it names no timeout. */
  defaultTimeoutSeconds: number;
  /** Seconds Claude Code waits for an http hook when the URL gives no ?timeout=. */
  hookTimeoutSeconds: number;
  /** Longest a store (Redis) call may take, in milliseconds, before the relay calls the store unavailable; undefined → the store's default (2 s). */
  storeTimeoutMs?: number;
  /** Hosts callbacks may go to; undefined → any host. */
  callbackHosts?: string[];
  /** Seconds held calls may still finish after SIGTERM before the relay hands over and stops (RELAY_SHUTDOWN_GRACE). */
  shutdownGraceSeconds: number;
  /** Seconds between the whitespace a held Claude Code hook call is kept alive with (RELAY_HOOK_KEEPALIVE). */
  hookKeepaliveSeconds: number;
  logLevel: "debug" | "info" | "warn" | "error";
  /** RELAY_ALWAYS_ALLOW (else the file's `default.alwaysAllow`): what an Always allow click may grant. */
  alwaysAllow: AlwaysAllowScope;
  /** The config file's `routes`, in order (first match wins); [] without a file. */
  routes: Route[];
  /** The file's `default.channels`: the channels a request no route matches may name; undefined → any. */
  defaultChannels?: string[];
  /** The default route's approvers, quorum, selfApproval, reminders and escalations; a matched route's own keys replace them. {} without a file. */
  defaultPolicy: PolicySettings;
  /** METRICS_TOKEN: the bearer token GET /metrics asks for; undefined → /metrics is open. */
  metricsToken?: string;
}

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ConfigError";
  }
}

/**
 * Shortest default hook timeout the configuration accepts (seconds). The
 * relay takes hook URLs down to MIN_HOOK_TIMEOUT_SECONDS, but a default that
 * short would deny nearly every call before a person could answer.
 */
const MIN_CONFIGURED_HOOK_TIMEOUT_SECONDS = 10;

/**
 * Default RELAY_AUDIT_MAX_EVENTS. An event takes about 300–400 bytes in the
 * Redis Stream, so 50,000 hold about 20 MB; a team answering a thousand
 * requests a day (five or so events each) keeps about ten days of them.
 */
const DEFAULT_AUDIT_MAX_EVENTS = 50_000;
const MAX_AUDIT_MAX_EVENTS = 10_000_000;

/** Longest RELAY_SHUTDOWN_GRACE (seconds). */
const MAX_SHUTDOWN_GRACE_SECONDS = 3600;
/** Longest RELAY_HOOK_KEEPALIVE (seconds): load balancers commonly cut connections idle for 60 s. */
const MAX_HOOK_KEEPALIVE_SECONDS = 300;

const hint = {
  SLACK_BOT_TOKEN: "create the app from manifest.yml and copy the Bot User OAuth Token (xoxb-…)",
  SLACK_APP_TOKEN: "create an app-level token with the connections:write scope (xapp-…), or unset it for HTTP mode",
  SLACK_SIGNING_SECRET: "copy the Signing Secret from the app's Basic Information page, or set SLACK_APP_TOKEN for Socket Mode",
  SLACK_API_URL: "use an http(s) URL such as https://slack.com/api/",
  SLACK_DEFAULT_CHANNEL: "use a channel or user id such as C0123456789",
  RELAY_TOKENS: "set comma-separated name:token pairs, e.g. ci-bot:$(openssl rand -hex 24); tokens need 16+ characters",
  RELAY_ADMIN_TOKENS: "set comma-separated name:token pairs for operators, e.g. ops:$(openssl rand -hex 24); tokens need 16+ characters",
  RELAY_AUDIT_MAX_EVENTS: `use a whole number of events between 100 and ${MAX_AUDIT_MAX_EVENTS}`,
  REDIS_URL:
    "use redis://[user:password@]host[:port][/db] (rediss:// for TLS, redis://:password@host for a password alone), or unset it for the in-memory store",
  REDIS_CLUSTER_NODES:
    "list the cluster's seed nodes as comma-separated redis://[user:password@]host:port URLs, e.g. redis://redis-1:6379,redis://redis-2:6379 (rediss:// for TLS), all with one scheme, user and password and no database number",
  REDIS_SENTINELS: "list the sentinels as comma-separated host:port pairs, e.g. sentinel-1:26379,sentinel-2:26379 (IPv6 in brackets)",
  REDIS_SENTINEL_NAME: "use the master's name from the sentinels' `sentinel monitor <name> …` line: letters, digits, '.', '_' or '-'",
  REDIS_USERNAME: "use the ACL user the relay signs in to the master as (no spaces), or unset it for the default user",
  REDIS_PASSWORD: "use the master's password (requirepass, or the ACL user's), 1 to 512 characters",
  REDIS_TLS: "use true (TLS to the sentinels and the master) or false",
  REDIS_TLS_CA_FILE: CA_FILE_HINT,
  REDIS_SENTINEL_USERNAME: "use the ACL user the relay signs in to the sentinels as (no spaces)",
  REDIS_SENTINEL_PASSWORD: "use the sentinels' own password (their requirepass, or the ACL user's), 1 to 512 characters",
  REDIS_PREFIX: "use 1 to 64 letters, digits, '.', '_', ':' or '-'",
  PORT: "use a port number between 1 and 65535",
  RELAY_DEFAULT_TIMEOUT: `use a whole number of seconds between 1 and ${MAX_TIMEOUT_SECONDS}`,
  RELAY_HOOK_TIMEOUT: `use a whole number of seconds between ${MIN_CONFIGURED_HOOK_TIMEOUT_SECONDS} and ${MAX_HOOK_TIMEOUT_SECONDS}`,
  RELAY_STORE_TIMEOUT_MS: "use a whole number of milliseconds between 100 and 60000",
  RELAY_CALLBACK_HOSTS: "use comma-separated host names such as hooks.example.com",
  RELAY_SHUTDOWN_GRACE: `use a whole number of seconds between 0 and ${MAX_SHUTDOWN_GRACE_SECONDS} (shorter than your orchestrator's kill timeout, e.g. Kubernetes terminationGracePeriodSeconds)`,
  RELAY_HOOK_KEEPALIVE: `use a whole number of seconds between 1 and ${MAX_HOOK_KEEPALIVE_SECONDS}, shorter than the idle timeout of any proxy in front of the relay`,
  LOG_LEVEL: "use debug, info, warn or error",
  RELAY_ALWAYS_ALLOW: "use tool (Always allow passes back only rules for the asked tool) or all (every suggestion, always shown)",
  METRICS_TOKEN:
    "set a secret of 16 to 512 characters without spaces, e.g. $(openssl rand -hex 24), and give Prometheus the same as its bearer token; or unset it to leave /metrics open",
  RELAY_CONFIG_FILE: "point it at a readable YAML or JSON file with routes, default and these variable names as keys",
} as const;
type VariableName = keyof typeof hint;

const intBetween = (min: number, max: number) => z.coerce.number().int().min(min).max(max);
const url = (protocols: string[]) =>
  z.string().refine((value) => {
    try {
      return protocols.includes(new URL(value).protocol);
    } catch {
      return false;
    }
  });

/** RELAY_TOKENS and RELAY_ADMIN_TOKENS: comma-separated `name:token` pairs, at least one. */
function namedTokens() {
  return z
    .string()
    .transform(parseTokens)
    .pipe(z.array(z.object({ name: z.string().regex(/^[\w.@-]{1,64}$/), token: z.string().min(16).max(512) })).min(1));
}

const redisUser = z
  .string()
  .regex(/^\S{1,128}$/)
  .optional();
const redisPassword = z.string().min(1).max(512).optional();

const fields = {
  SLACK_BOT_TOKEN: z.string().regex(/^xoxb-[A-Za-z0-9-]+$/),
  SLACK_APP_TOKEN: z
    .string()
    .regex(/^xapp-[A-Za-z0-9-]+$/)
    .optional(),
  SLACK_SIGNING_SECRET: z.string().min(8).optional(),
  SLACK_API_URL: url(["http:", "https:"]).default("https://slack.com/api/"),
  SLACK_DEFAULT_CHANNEL: SlackChannelId.optional(),
  RELAY_TOKENS: namedTokens(),
  RELAY_ADMIN_TOKENS: namedTokens().optional(),
  RELAY_AUDIT_MAX_EVENTS: intBetween(100, MAX_AUDIT_MAX_EVENTS).default(DEFAULT_AUDIT_MAX_EVENTS),
  REDIS_URL: z.string().transform(parseRedisUrl).pipe(z.custom<NonNullable<ReturnType<typeof parseRedisUrl>>>(Boolean)).optional(),
  REDIS_CLUSTER_NODES: z.string().transform(parseClusterNodes).pipe(z.custom<NonNullable<ReturnType<typeof parseClusterNodes>>>(Boolean)).optional(),
  REDIS_SENTINELS: z.string().transform(parseAddresses).pipe(z.custom<NonNullable<ReturnType<typeof parseAddresses>>>(Boolean)).optional(),
  REDIS_SENTINEL_NAME: z
    .string()
    .regex(/^[\w.-]{1,128}$/)
    .optional(),
  REDIS_USERNAME: redisUser,
  REDIS_PASSWORD: redisPassword,
  REDIS_TLS: z
    .enum(["true", "false"])
    .transform((v) => v === "true")
    .optional(),
  REDIS_TLS_CA_FILE: z.string().optional(),
  REDIS_SENTINEL_USERNAME: redisUser,
  REDIS_SENTINEL_PASSWORD: redisPassword,
  REDIS_PREFIX: z
    .string()
    .regex(/^[\w.:-]{1,64}$/)
    .default("relay"),
  PORT: intBetween(1, 65535).default(3000),
  RELAY_DEFAULT_TIMEOUT: intBetween(1, MAX_TIMEOUT_SECONDS).default(600),
  RELAY_HOOK_TIMEOUT: intBetween(MIN_CONFIGURED_HOOK_TIMEOUT_SECONDS, MAX_HOOK_TIMEOUT_SECONDS).default(DEFAULT_HOOK_TIMEOUT_SECONDS),
  RELAY_STORE_TIMEOUT_MS: intBetween(100, 60_000).optional(),
  RELAY_CALLBACK_HOSTS: z
    .string()
    .transform((v) =>
      v
        .split(",")
        .map((h) => h.trim().toLowerCase())
        .filter(Boolean),
    )
    .pipe(z.array(z.string().regex(/^[^\s/?#@]+$/)).min(1))
    .optional(),
  RELAY_SHUTDOWN_GRACE: intBetween(0, MAX_SHUTDOWN_GRACE_SECONDS).default(25),
  RELAY_HOOK_KEEPALIVE: intBetween(1, MAX_HOOK_KEEPALIVE_SECONDS).default(15),
  LOG_LEVEL: z.enum(["debug", "info", "warn", "error"]).default("info"),
  RELAY_ALWAYS_ALLOW: AlwaysAllowScope.default("tool"),
  METRICS_TOKEN: z
    .string()
    .regex(/^\S{16,512}$/)
    .optional(),
} satisfies Partial<Record<VariableName, z.ZodType>>;

function parseTokens(value: string): AgentToken[] {
  return value
    .split(",")
    .map((pair) => pair.trim())
    .filter(Boolean)
    .map((pair) => {
      const colon = pair.indexOf(":");
      return colon < 0 ? { name: "", token: pair } : { name: pair.slice(0, colon).trim(), token: pair.slice(colon + 1).trim() };
    });
}

export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const file = configFile(env.RELAY_CONFIG_FILE);
  const source = { ...defaultRouteVariables(file), ...file.variables, ...definedOnly(env) };
  const read = <K extends keyof typeof fields>(name: K): z.output<(typeof fields)[K]> => {
    const raw = source[name];
    const value = raw === "" ? undefined : raw;
    if (value === undefined && name === "SLACK_BOT_TOKEN") throw missing(name);
    if (value === undefined && name === "RELAY_TOKENS") throw missing(name);
    const result = fields[name].safeParse(value);
    if (!result.success) throw new ConfigError(`${name} is invalid: ${hint[name]}`);
    return result.data as z.output<(typeof fields)[K]>;
  };
  const botToken = read("SLACK_BOT_TOKEN");
  const appToken = read("SLACK_APP_TOKEN");
  const signingSecret = read("SLACK_SIGNING_SECRET");
  if (!appToken && !signingSecret) throw missing("SLACK_SIGNING_SECRET");
  const tokens = read("RELAY_TOKENS");
  const names = new Set(tokens.map((t) => t.name));
  if (names.size !== tokens.length) throw new ConfigError("RELAY_TOKENS is invalid: token names must be unique");
  const adminTokens = read("RELAY_ADMIN_TOKENS") ?? [];
  checkAdminTokens(tokens, adminTokens);
  const apiUrl = read("SLACK_API_URL");
  const config: Config = {
    slack: {
      botToken,
      appToken,
      signingSecret,
      apiUrl: apiUrl.endsWith("/") ? apiUrl : `${apiUrl}/`,
      defaultChannel: read("SLACK_DEFAULT_CHANNEL"),
    },
    tokens,
    adminTokens,
    auditMaxEvents: read("RELAY_AUDIT_MAX_EVENTS"),
    redis: readRedisTarget(read),
    redisPrefix: read("REDIS_PREFIX"),
    port: read("PORT"),
    defaultTimeoutSeconds: read("RELAY_DEFAULT_TIMEOUT"),
    hookTimeoutSeconds: read("RELAY_HOOK_TIMEOUT"),
    storeTimeoutMs: read("RELAY_STORE_TIMEOUT_MS"),
    callbackHosts: read("RELAY_CALLBACK_HOSTS"),
    shutdownGraceSeconds: read("RELAY_SHUTDOWN_GRACE"),
    hookKeepaliveSeconds: read("RELAY_HOOK_KEEPALIVE"),
    logLevel: read("LOG_LEVEL"),
    alwaysAllow: read("RELAY_ALWAYS_ALLOW"),
    routes: file.routes,
    ...(file.default.channels ? { defaultChannels: file.default.channels } : {}),
    defaultPolicy: defaultPolicy(file.default),
    metricsToken: read("METRICS_TOKEN"),
  };
  // Needs the merged timeout: RELAY_DEFAULT_TIMEOUT in the environment wins over the file's.
  const late = scheduleProblem(placesOf(file), config.defaultTimeoutSeconds);
  if (late) throw new ConfigError(`RELAY_CONFIG_FILE is invalid: ${late}`);
  return config;
}

/**
 * An admin token is told apart from an agent token by its value alone, and
 * shown by its name: both must be its own. Says which name clashes, never a token.
 */
function checkAdminTokens(agents: readonly AgentToken[], admins: readonly AgentToken[]): void {
  const seen = new Set<string>();
  for (const { name } of admins) {
    if (seen.has(name)) throw new ConfigError("RELAY_ADMIN_TOKENS is invalid: token names must be unique");
    seen.add(name);
  }
  const agentNames = new Set(agents.map((t) => t.name));
  const agentTokens = new Set(agents.map((t) => t.token));
  for (const { name, token } of admins) {
    if (agentNames.has(name)) {
      throw new ConfigError(
        `RELAY_ADMIN_TOKENS is invalid: the name "${name}" is also an agent token's in RELAY_TOKENS; token names must be unique across both`,
      );
    }
    if (agentTokens.has(token)) {
      throw new ConfigError(
        `RELAY_ADMIN_TOKENS is invalid: the token of "${name}" is also an agent token in RELAY_TOKENS; give each admin token a value of its own`,
      );
    }
  }
}

/** The Redis variables, checked together (./config-redis.ts). */
function readRedisTarget(read: <K extends keyof typeof fields>(name: K) => z.output<(typeof fields)[K]>): RedisTarget | undefined {
  try {
    return redisTarget({
      url: read("REDIS_URL"),
      cluster: read("REDIS_CLUSTER_NODES"),
      sentinels: read("REDIS_SENTINELS"),
      name: read("REDIS_SENTINEL_NAME"),
      username: read("REDIS_USERNAME"),
      password: read("REDIS_PASSWORD"),
      tls: read("REDIS_TLS"),
      caFile: read("REDIS_TLS_CA_FILE"),
      sentinelUsername: read("REDIS_SENTINEL_USERNAME"),
      sentinelPassword: read("REDIS_SENTINEL_PASSWORD"),
    });
  } catch (error) {
    if (error instanceof RedisSettingsError) throw new ConfigError(error.message);
    throw error;
  }
}

function missing(name: VariableName): ConfigError {
  return new ConfigError(`${name} is missing: ${hint[name]}`);
}

/** Empty strings count as unset, so an empty variable leaves the config file's value in place. */
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
