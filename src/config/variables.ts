/**
 * Every environment variable the relay reads, one entry each: its schema
 * (what a value must be, and what it becomes), its hint (how to fix a wrong
 * one, ending the line the start stops with), and what it is for (the
 * configuration reference, docs/configuration-reference.md, is written from
 * these entries by `npm run docs:config`). The same names are the keys a
 * config file may hold at its top level. A default is the schema's: what it
 * makes of an unset variable.
 */
import { z } from "zod";
import { AlwaysAllowScope } from "../requests/vocabulary.js";
import { DEFAULT_HOOK_TIMEOUT_SECONDS, MAX_HOOK_TIMEOUT_SECONDS } from "../protocol/claude-code-hook.js";
import { MAX_TIMEOUT_SECONDS, SlackChannelId } from "../protocol/request-body.js";
import { MAX_SESSIONS_PER_PERSON } from "../requests/sign-ins.js";
import { DEFAULT_MCP_PROGRESS_SECONDS } from "../mcp/waiting.js";
import { CA_FILE_HINT, parseAddresses, readClusterNodes, readRedisUrl } from "./redis.js";
import { bearerToken, commaList, namedTokens, refuse, ruled, signingSecret, slackToken, TOKEN_LENGTH, type Refusal } from "./rules.js";

export interface Variable {
  /** Parses the variable's text (absent when unset or empty). */
  schema: z.ZodType;
  /** How to fix a wrong value: the end of the one line the start stops with. */
  hint: string;
  /** What the variable is for, in the configuration reference. */
  about: string;
  /** Its value is a secret: the reference shows no example of it, and no message quotes it. */
  secret?: true;
}

/**
 * Shortest default hook timeout the configuration accepts (seconds). The
 * relay takes hook URLs down to MIN_HOOK_TIMEOUT_SECONDS, but a default that
 * short would deny nearly every call before a person could answer.
 */
const MIN_CONFIGURED_HOOK_TIMEOUT_SECONDS = 10;

/**
 * Default RELAY_AUDIT_MAX_EVENTS. An event takes about 300–400 bytes in the
 * Redis Stream, so 50,000 hold about 20 MB (an event that is no decision about
 * 10 bytes more in its token's share list, src/store/redis-audit.ts); a team
 * answering a thousand requests a day (five or so events each) keeps about ten
 * days of them.
 */
const DEFAULT_AUDIT_MAX_EVENTS = 50_000;
const MAX_AUDIT_MAX_EVENTS = 10_000_000;

/** Longest RELAY_SHUTDOWN_GRACE (seconds). */
const MAX_SHUTDOWN_GRACE_SECONDS = 3600;
/** Longest RELAY_HOOK_KEEPALIVE (seconds): load balancers commonly cut connections idle for 60 s. */
const MAX_HOOK_KEEPALIVE_SECONDS = 300;
/** Longest RELAY_MCP_PROGRESS (seconds): under the 60 s most MCP clients wait without progress. */
const MAX_MCP_PROGRESS_SECONDS = 55;

const intBetween = (min: number, max: number) => z.coerce.number().int().min(min).max(max);
const UNIT_MS: Record<string, number> = { m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };
/** A whole number and one of `units` (m, h, d, w), such as `90d` or `30m`, from `minMs` to `maxMs`, in milliseconds. */
const duration = (units: string, minMs: number, maxMs: number) =>
  z
    .string()
    .regex(new RegExp(`^[1-9]\\d{0,5}[${units}]$`))
    .transform((value) => Number(value.slice(0, -1)) * UNIT_MS[value.slice(-1)]!)
    .refine((ms) => ms >= minMs && ms <= maxMs);
/** A retention such as `90d`, `36h` or `12w` (up to 10 years), in milliseconds. */
const retention = duration("hdw", 0, 3650 * 86_400_000);

/**
 * Bounds of RELAY_CONSOLE_SESSION_TTL: a session shorter than 5 minutes ends
 * while its person reads a request; one longer than 30 days outlives most
 * organisations' rules for a signed-in browser.
 */
const CONSOLE_SESSION_TTL = { default: "12h", minMs: 5 * 60_000, maxMs: 30 * 86_400_000 } as const;
/** Most RELAY_CONSOLE_SESSIONS_PER_PERSON: each kind of sign-in holds at most 10,000 anyway (src/requests/sign-ins.ts). */
const MAX_CONSOLE_SESSIONS_PER_PERSON = 100;
const url = (protocols: string[]) =>
  z.string().refine((value) => {
    try {
      return protocols.includes(new URL(value).protocol);
    } catch {
      return false;
    }
  });
const redisUser = z
  .string()
  .regex(/^\S{1,128}$/)
  .optional();
const redisPassword = ruled((value) => (value.length > 512 ? refuse(`it is ${value.length} characters long, not 1 to 512`) : value)).optional();
const TOKEN_RULE = `tokens need ${TOKEN_LENGTH.min}+ characters`;

const MIB = 1024 * 1024;
/** Default RELAY_MAX_BODY: a Claude Code Write of a large generated file fits. */
const DEFAULT_MAX_BODY_BYTES = 16 * MIB;
const MAX_MAX_BODY_BYTES = 256 * MIB;

/** RELAY_MAX_BODY: bytes, or a whole number of KB or MB (1024-based). */
function readBytes(value: string): number | Refusal {
  const match = /^(\d+)\s*(kb|mb|k|m|b)?$/i.exec(value.trim());
  if (!match) return refuse("it is not a whole number of bytes, KB or MB");
  const unit = (match[2] ?? "b").toLowerCase()[0];
  const bytes = Number(match[1]) * (unit === "m" ? MIB : unit === "k" ? 1024 : 1);
  if (bytes < MIB || bytes > MAX_MAX_BODY_BYTES) return refuse(`it is ${bytes} bytes, not 1MB to ${MAX_MAX_BODY_BYTES / MIB}MB`);
  return bytes;
}

/** In the order the start checks them: the first wrong one is the one named. */
export const VARIABLES = {
  SLACK_BOT_TOKEN: {
    schema: slackToken("xoxb-").optional(),
    hint: "create the app from manifest.yml and copy the Bot User OAuth Token (xoxb-…)",
    about:
      "The bot token (`xoxb-…`) the relay posts and reads with. Unset together with `SLACK_APP_TOKEN`: local mode (no Slack, 127.0.0.1 only, answers in the web console; docs/console.md).",
    secret: true,
  },
  SLACK_APP_TOKEN: {
    schema: slackToken("xapp-").optional(),
    hint: "create an app-level token with the connections:write scope (xapp-…), or unset it for HTTP mode",
    about: "An app-level token (`xapp-…`, scope `connections:write`): when set, the relay runs in Socket Mode and needs no public URL.",
    secret: true,
  },
  SLACK_SIGNING_SECRET: {
    schema: signingSecret.optional(),
    hint: "copy the Signing Secret from the app's Basic Information page, or set SLACK_APP_TOKEN for Socket Mode",
    about: "HTTP mode: the app's Signing Secret (32 hexadecimal characters), which verifies Slack's requests. Required without `SLACK_APP_TOKEN`.",
    secret: true,
  },
  RELAY_TOKENS: {
    schema: namedTokens.optional(),
    hint: `set comma-separated name:token pairs, e.g. ci-bot:$(openssl rand -hex 24); ${TOKEN_RULE}`,
    about: `Agent tokens: comma-separated \`name:token\` pairs (${TOKEN_LENGTH.min} to ${TOKEN_LENGTH.max} characters each); the name is shown in Slack as the requester. Unset in local mode: the relay makes one and writes it with its URL to \`$XDG_STATE_HOME/slack-approval-relay/local.json\`.`,
    secret: true,
  },
  RELAY_ADMIN_TOKENS: {
    schema: namedTokens.optional(),
    hint: `set comma-separated name:token pairs for operators, e.g. ops:$(openssl rand -hex 24); ${TOKEN_RULE}`,
    about: "Read-only operator tokens, `name:token` pairs: they read the audit and every request. Names and tokens unlike any agent token's.",
    secret: true,
  },
  SLACK_API_URL: {
    schema: url(["http:", "https:"]).default("https://slack.com/api/"),
    hint: "use an http(s) URL such as https://slack.com/api/",
    about: "The Web API's base URL (proxies, GovSlack, tests).",
  },
  SLACK_CLIENT_ID: {
    schema: z
      .string()
      .regex(/^\d+\.\d+$/)
      .optional(),
    hint: "copy the Client ID from the app's Basic Information page (digits, a dot, digits), or unset it to turn Sign in with Slack off",
    about:
      "Sign in with Slack (OpenID Connect) to the web console: the app's Client ID. With `SLACK_CLIENT_SECRET` and `RELAY_PUBLIC_URL`; the Slack user id is who every console answer is checked as (docs/console.md).",
  },
  SLACK_CLIENT_SECRET: {
    schema: z
      .string()
      .regex(/^[0-9a-f]{32}$/)
      .optional(),
    hint: "copy the Client Secret from the app's Basic Information page (32 hexadecimal characters)",
    about: "Sign in with Slack: the app's Client Secret (32 hexadecimal characters), sent to `openid.connect.token` only.",
    secret: true,
  },
  RELAY_PUBLIC_URL: {
    schema: url(["http:", "https:"])
      .pipe(z.string().refine((value) => new URL(value).href === `${new URL(value).origin}/`))
      .transform((value) => new URL(value).origin)
      .optional(),
    hint: "use the relay's own origin as people's browsers reach it, such as https://relay.example.com (no path, query or user)",
    about:
      "The relay's public origin: the console answers to its Host (besides the loopback names) and Sign in with Slack's redirect URL is `<RELAY_PUBLIC_URL>/console/signin/slack/callback`.",
  },
  RELAY_CONSOLE_SESSION_TTL: {
    schema: duration("mhd", CONSOLE_SESSION_TTL.minMs, CONSOLE_SESSION_TTL.maxMs).prefault(CONSOLE_SESSION_TTL.default),
    hint: "use a number and a unit: m (minutes), h (hours) or d (days), such as 12h, from 5m to 30d",
    about:
      "How long a web console session lasts from its sign-in (a sign-in link, Sign in with Slack or an admin token): then its cookie expires and the person signs in again. Sessions opened before a change keep the lifetime they were given.",
  },
  RELAY_CONSOLE_SESSIONS_PER_PERSON: {
    schema: intBetween(1, MAX_CONSOLE_SESSIONS_PER_PERSON).default(MAX_SESSIONS_PER_PERSON),
    hint: `use a whole number of sessions between 1 and ${MAX_CONSOLE_SESSIONS_PER_PERSON}`,
    about:
      "Most web console sessions one person may hold at once (browsers signed in as them): one more sign-in ends theirs that ends first. `1`: a new sign-in signs every other browser out. Admin tokens' read-only sessions are not counted.",
  },
  SLACK_DEFAULT_CHANNEL: {
    schema: SlackChannelId.optional(),
    hint: "use a channel or user id such as C0123456789",
    about: "The channel (or user id, for a DM) of requests that name none.",
  },
  RELAY_AUDIT_MAX_EVENTS: {
    schema: intBetween(100, MAX_AUDIT_MAX_EVENTS).default(DEFAULT_AUDIT_MAX_EVENTS),
    hint: `use a whole number of events between 100 and ${MAX_AUDIT_MAX_EVENTS}`,
    about:
      "Safety valve on the audit log's size (about 20 MB of Redis for the default): at it, events that record no person's decision are counted instead of written, and reads say so. Old events never go for it. Each agent token may hold at most its share of it (the cap divided by the number of agent tokens) in such events; past it, the token's are counted (`token_share`), so no token can crowd out another's.",
  },
  RELAY_AUDIT_RETENTION: {
    schema: retention.prefault("90d"),
    hint: "use a number and a unit: h (hours), d (days) or w (weeks), such as 90d, up to 10 years",
    about: "How long the audit log keeps events: older ones go, and nothing else removes them.",
  },
  RELAY_AUDIT_EXPORT: {
    schema: z.string().trim().min(1).optional(),
    hint: "give the path of a file the relay's user may create and append to, or unset it",
    about:
      "A file that receives a copy of every audit event as one JSON line (`at` in ISO 8601, then the event's fields), appended whatever the audit log's cap or store does: a record for log shipping that no agent token can touch. Created 0600; rotate it with copytruncate.",
  },
  REDIS_URL: {
    schema: ruled(readRedisUrl).optional(),
    hint: "use redis://[user:password@]host[:port][/db] (rediss:// for TLS, redis://:password@host for a password alone), or unset it for the in-memory store",
    about:
      "One Redis server for shared, durable state: `redis[s]://[user:password@]host[:port][/db]`. Unset (and no cluster or sentinels): the in-memory store, one instance, lost on restart.",
    secret: true,
  },
  REDIS_CLUSTER_NODES: {
    schema: ruled(readClusterNodes).optional(),
    hint: "list the cluster's seed nodes as comma-separated redis://[user:password@]host:port URLs, e.g. redis://redis-1:6379,redis://redis-2:6379 (rediss:// for TLS), all with one scheme, user and password and no database number",
    about: "Redis Cluster instead of `REDIS_URL`: seed nodes, comma-separated `redis[s]://[user:password@]host:port`, one user and password for all.",
    secret: true,
  },
  REDIS_SENTINELS: {
    schema: z.string().transform(parseAddresses).pipe(z.custom<NonNullable<ReturnType<typeof parseAddresses>>>(Boolean)).optional(),
    hint: "list the sentinels as comma-separated host:port pairs, e.g. sentinel-1:26379,sentinel-2:26379 (IPv6 in brackets)",
    about: "Sentinel instead of `REDIS_URL`: the sentinels, comma-separated `host:port` (IPv6 in brackets).",
  },
  REDIS_SENTINEL_NAME: {
    schema: z
      .string()
      .regex(/^[\w.-]{1,128}$/)
      .optional(),
    hint: "use the master's name from the sentinels' `sentinel monitor <name> …` line: letters, digits, '.', '_' or '-'",
    about: "With `REDIS_SENTINELS`: the master's name, as in the sentinels' `sentinel monitor <name> …`.",
  },
  REDIS_USERNAME: {
    schema: redisUser,
    hint: "use the ACL user the relay signs in to the master as (no spaces), or unset it for the default user",
    about: "With `REDIS_SENTINELS`: the master's ACL user; unset → `default`.",
  },
  REDIS_PASSWORD: {
    schema: redisPassword,
    hint: "use the master's password (requirepass, or the ACL user's), 1 to 512 characters",
    about: "With `REDIS_SENTINELS`: the master's password (its `requirepass`, or the ACL user's).",
    secret: true,
  },
  REDIS_TLS: {
    schema: z
      .enum(["true", "false"])
      .transform((v) => v === "true")
      .optional(),
    hint: "use true (TLS to the sentinels and the master) or false",
    about: "With `REDIS_SENTINELS`: `true` → TLS to the sentinels and the master (with `REDIS_URL`, write `rediss://`).",
  },
  REDIS_TLS_CA_FILE: {
    schema: z.string().optional(),
    hint: CA_FILE_HINT,
    about: "PEM file of the CA that signed Redis's certificates, for `rediss://` or `REDIS_TLS=true`; unset → the system's CAs.",
  },
  REDIS_SENTINEL_USERNAME: {
    schema: redisUser,
    hint: "use the ACL user the relay signs in to the sentinels as (no spaces)",
    about: "With `REDIS_SENTINELS`: the sentinels' own ACL user, when they have one.",
  },
  REDIS_SENTINEL_PASSWORD: {
    schema: redisPassword,
    hint: "use the sentinels' own password (their requirepass, or the ACL user's), 1 to 512 characters",
    about: "With `REDIS_SENTINELS`: the sentinels' own password (their `requirepass`, or the ACL user's), when they ask for one.",
    secret: true,
  },
  REDIS_PREFIX: {
    schema: z
      .string()
      .regex(/^[\w.:-]{1,64}$/)
      .default("relay"),
    hint: "use 1 to 64 letters, digits, '.', '_', ':' or '-'",
    about: "Prefix of every Redis key, so several relays may share one Redis.",
  },
  PORT: {
    schema: intBetween(1, 65535).default(3000),
    hint: "use a port number between 1 and 65535",
    about: "The HTTP port.",
  },
  RELAY_DEFAULT_TIMEOUT: {
    schema: intBetween(1, MAX_TIMEOUT_SECONDS).default(600),
    hint: `use a whole number of seconds between 1 and ${MAX_TIMEOUT_SECONDS}`,
    about: "Seconds a request waits when it names no `timeoutSeconds` (the default route's `timeoutSeconds` stands for it).",
  },
  RELAY_MAX_PENDING_PER_TOKEN: {
    schema: intBetween(1, 100_000).default(200),
    hint: "use a whole number between 1 and 100000",
    about:
      "Most pending requests one agent token may hold at once, over every instance; past it a create answers 429 `relay_too_many_pending` (a route's `maxPending` may set it lower).",
  },
  RELAY_CREATE_RATE_LIMIT: {
    schema: intBetween(1, 1_000_000).default(600),
    hint: "use a whole number of creates per minute between 1 and 1000000",
    about:
      "Creates one agent token may make per minute on one instance (POST /v1/requests, Claude Code hook calls, MCP approve and ask_user calls); past it they answer 429 `relay_rate_limited` (a deny or a tool error over MCP).",
  },
  RELAY_HOOK_TIMEOUT: {
    schema: intBetween(MIN_CONFIGURED_HOOK_TIMEOUT_SECONDS, MAX_HOOK_TIMEOUT_SECONDS).default(DEFAULT_HOOK_TIMEOUT_SECONDS),
    hint: `use a whole number of seconds between ${MIN_CONFIGURED_HOOK_TIMEOUT_SECONDS} and ${MAX_HOOK_TIMEOUT_SECONDS}`,
    about: "Seconds Claude Code waits for an http hook when the hook URL has no `?timeout=`.",
  },
  RELAY_MAX_BODY: {
    schema: ruled(readBytes).default(DEFAULT_MAX_BODY_BYTES),
    hint: `use a size between 1MB and ${MAX_MAX_BODY_BYTES / MIB}MB, as bytes or with MB or KB (e.g. 16MB)`,
    about:
      "Largest body of `POST /v1/requests` and `POST /v1/hooks/claude-code` (a Write or Edit with a large input), in bytes or with `MB`/`KB`; other routes take 1 MB. The Slack message shows the start of a large input and a View full input button.",
  },
  RELAY_STORE_TIMEOUT_MS: {
    schema: intBetween(100, 60_000).optional(),
    hint: "use a whole number of milliseconds between 100 and 60000",
    about: "Longest a store (Redis) call may take, in milliseconds, before the relay calls the store unavailable; unset → 2000.",
  },
  RELAY_CALLBACK_HOSTS: {
    schema: z
      .string()
      .transform((v) => commaList(v.toLowerCase()))
      .pipe(z.array(z.string().regex(/^[^\s/?#@]+$/)).min(1))
      .optional(),
    hint: "use comma-separated host names such as hooks.example.com",
    about: "Comma-separated host names callbacks may go to; unset → any host.",
  },
  RELAY_SHUTDOWN_GRACE: {
    schema: intBetween(0, MAX_SHUTDOWN_GRACE_SECONDS).default(25),
    hint: `use a whole number of seconds between 0 and ${MAX_SHUTDOWN_GRACE_SECONDS} (shorter than your orchestrator's kill timeout, e.g. Kubernetes terminationGracePeriodSeconds)`,
    about: "Seconds held calls may still be answered after SIGTERM before the relay hands over and stops.",
  },
  RELAY_HOOK_KEEPALIVE: {
    schema: intBetween(1, MAX_HOOK_KEEPALIVE_SECONDS).default(15),
    hint: `use a whole number of seconds between 1 and ${MAX_HOOK_KEEPALIVE_SECONDS}, shorter than the idle timeout of any proxy in front of the relay`,
    about: "Seconds between the spaces that keep a held Claude Code hook call alive through proxies.",
  },
  RELAY_MCP_PROGRESS: {
    schema: intBetween(1, MAX_MCP_PROGRESS_SECONDS).default(DEFAULT_MCP_PROGRESS_SECONDS),
    hint: `use a whole number of seconds between 1 and ${MAX_MCP_PROGRESS_SECONDS}, shorter than your MCP clients' call timeout`,
    about:
      "Seconds between the progress notifications of an MCP tool call waiting for a person (`POST /mcp`, `approval-relay mcp`), sent when the client gave a progress token; clients that reset their timeout on progress keep waiting.",
  },
  RELAY_MCP_ORIGINS: {
    schema: z
      .string()
      .transform((v) => commaList(v.toLowerCase()))
      .pipe(z.array(z.string().regex(/^https?:\/\/[^\s/?#@]+$/)).min(1))
      .optional(),
    hint: "use comma-separated origins such as https://inspector.example.com (scheme, host and port, no path)",
    about:
      "Comma-separated origins a browser-based MCP client may call `POST /mcp` from; a request with any other `Origin` header is refused (403), one without (every non-browser client) is served. Unset → no browser origin.",
  },
  LOG_LEVEL: {
    schema: z.enum(["debug", "info", "warn", "error"]).default("info"),
    hint: "use debug, info, warn or error",
    about: "How much the relay logs (JSON lines, secrets redacted).",
  },
  RELAY_ALWAYS_ALLOW: {
    schema: AlwaysAllowScope.default("tool"),
    hint: "use tool (Always allow passes back only rules for the asked tool) or all (every suggestion, always shown)",
    about:
      "What **Always allow** may pass back: `tool` (plain allow rules for the asked tool) or `all` (every suggestion). The default route's `alwaysAllow` stands for it.",
  },
  METRICS_TOKEN: {
    schema: bearerToken.optional(),
    hint: "set a secret of 16 to 512 characters without spaces, e.g. $(openssl rand -hex 24), and give Prometheus the same as its bearer token; or unset it to leave /metrics open",
    about: "The bearer token `GET /metrics` asks for (16 to 512 characters, no spaces); unset → `/metrics` is open.",
    secret: true,
  },
  XDG_STATE_HOME: {
    schema: z.string().optional(),
    hint: "use an absolute path, or unset it for ~/.local/state",
    about:
      "Local mode: the directory under which the relay writes `slack-approval-relay/local.json` (its URL and agent token); unset or not an absolute path → `~/.local/state`.",
  },
  RELAY_CONFIG_FILE: {
    schema: z.string().optional(),
    hint: "point it at a readable YAML or JSON file with routes, default and these variable names as keys",
    about: "A YAML or JSON file: these variables' names as keys (the environment wins) plus `routes` and `default` (approver policy). Environment only.",
  },
} satisfies Record<string, Variable>;

export type VariableName = keyof typeof VARIABLES;
export const VARIABLE_NAMES = Object.keys(VARIABLES) as VariableName[];

/** The keys a config file may hold at its top level besides `routes` and `default`: every variable but the one that names the file. */
export const FILE_VARIABLE_NAMES: readonly string[] = VARIABLE_NAMES.filter((name) => name !== "RELAY_CONFIG_FILE");
