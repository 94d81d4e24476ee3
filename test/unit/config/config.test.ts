/**
 * loadConfig: defaults, Socket Mode vs HTTP mode, the one-line error for
 * every missing or malformed variable (never echoing a secret), RELAY_TOKENS
 * parsing and the optional JSON config file that the environment overrides.
 */
import { describe, expect, it, vi } from "vitest";
import { ConfigError, loadConfig } from "../../../src/config/config.js";
import { configFiles } from "../../helpers/config-files.js";
import { MAX_TIMEOUT_SECONDS } from "../../../src/protocol/request-body.js";

const BOT = "xoxb-1234567890-0987654321-AbCdEfGhIjKlMnOpQrStUvWx";
const APP = "xapp-1-A0123456789-1234567890123-abcdef0123456789";
const SECRET = "8f14e45fceea167a5a36dedd4bea2543";
const CI_TOKEN = "ci0123456789abcdef0123456789";
const DEPLOY_TOKEN = "dp0123456789abcdef0123456789";
const OPS_TOKEN = "op0123456789abcdef0123456789";

/** The smallest valid HTTP-mode environment. */
const http = { SLACK_BOT_TOKEN: BOT, SLACK_SIGNING_SECRET: SECRET, RELAY_TOKENS: `ci-bot:${CI_TOKEN}` };
/** The smallest valid Socket Mode environment. */
const socket = { SLACK_BOT_TOKEN: BOT, SLACK_APP_TOKEN: APP, RELAY_TOKENS: `ci-bot:${CI_TOKEN}` };

const configFile = configFiles("json");

/** The ConfigError loadConfig throws for `env`; fails the test when it does not throw one. */
function errorFor(env: Record<string, string | undefined>): ConfigError {
  try {
    loadConfig(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error("loadConfig accepted the environment");
}

describe("loadConfig defaults", () => {
  it("fills every optional setting with its documented default", () => {
    const config = loadConfig(http);
    expect(config).toEqual({
      local: false,
      localStateHome: undefined,
      slack: { botToken: BOT, appToken: undefined, signingSecret: SECRET, apiUrl: "https://slack.com/api/", defaultChannel: undefined },
      tokens: [{ name: "ci-bot", token: CI_TOKEN }],
      adminTokens: [],
      auditMaxEvents: 50_000,
      auditRetentionMs: 90 * 86_400_000,
      consoleSessionTtlMs: 12 * 3_600_000,
      consoleSessionsPerPerson: 10,
      redis: undefined,
      redisPrefix: "relay",
      port: 3000,
      defaultTimeoutSeconds: 600,
      maxPendingPerToken: 200,
      createRateLimit: 600,
      hookTimeoutSeconds: 600,
      storeTimeoutMs: undefined,
      maxBodyBytes: 16 * 1024 * 1024,
      callbackHosts: undefined,
      shutdownGraceSeconds: 25,
      hookKeepaliveSeconds: 15,
      mcpProgressSeconds: 25,
      mcpOrigins: [],
      logLevel: "info",
      alwaysAllow: "tool",
      routes: [],
      defaultPolicy: {},
      defaultAdmission: {},
    });
  });

  it("reads every variable when all are set", () => {
    const config = loadConfig({
      ...socket,
      SLACK_SIGNING_SECRET: SECRET,
      SLACK_API_URL: "http://127.0.0.1:9999/api/",
      SLACK_DEFAULT_CHANNEL: "C0123456789",
      REDIS_URL: "rediss://cache.internal:6380/2",
      REDIS_PREFIX: "relay-staging",
      PORT: "8080",
      RELAY_DEFAULT_TIMEOUT: "120",
      RELAY_MAX_PENDING_PER_TOKEN: "50",
      RELAY_CREATE_RATE_LIMIT: "120",
      RELAY_HOOK_TIMEOUT: "300",
      RELAY_STORE_TIMEOUT_MS: "1500",
      RELAY_MAX_BODY: "32MB",
      RELAY_CALLBACK_HOSTS: "Hooks.Example.com, ci.example.org",
      RELAY_SHUTDOWN_GRACE: "50",
      RELAY_HOOK_KEEPALIVE: "20",
      RELAY_MCP_PROGRESS: "10",
      RELAY_MCP_ORIGINS: "https://Inspector.example.com, http://localhost:6274",
      LOG_LEVEL: "debug",
      RELAY_ALWAYS_ALLOW: "all",
      RELAY_ADMIN_TOKENS: `ops:${OPS_TOKEN}`,
      RELAY_AUDIT_MAX_EVENTS: "200000",
      RELAY_AUDIT_RETENTION: "36h",
      RELAY_CONSOLE_SESSION_TTL: "30m",
      RELAY_CONSOLE_SESSIONS_PER_PERSON: "1",
      METRICS_TOKEN: "metrics-scraper-0123456789abcdef",
    });
    expect(config).toEqual({
      local: false,
      localStateHome: undefined,
      slack: {
        botToken: BOT,
        appToken: APP,
        signingSecret: SECRET,
        apiUrl: "http://127.0.0.1:9999/api/",
        defaultChannel: "C0123456789",
      },
      tokens: [{ name: "ci-bot", token: CI_TOKEN }],
      adminTokens: [{ name: "ops", token: OPS_TOKEN }],
      auditMaxEvents: 200_000,
      auditRetentionMs: 36 * 3_600_000,
      consoleSessionTtlMs: 30 * 60_000,
      consoleSessionsPerPerson: 1,
      redis: { mode: "single", address: { host: "cache.internal", port: 6380 }, db: 2, tls: {} },
      redisPrefix: "relay-staging",
      port: 8080,
      defaultTimeoutSeconds: 120,
      maxPendingPerToken: 50,
      createRateLimit: 120,
      hookTimeoutSeconds: 300,
      storeTimeoutMs: 1500,
      maxBodyBytes: 32 * 1024 * 1024,
      callbackHosts: ["hooks.example.com", "ci.example.org"],
      shutdownGraceSeconds: 50,
      hookKeepaliveSeconds: 20,
      mcpProgressSeconds: 10,
      mcpOrigins: ["https://inspector.example.com", "http://localhost:6274"],
      logLevel: "debug",
      alwaysAllow: "all",
      routes: [],
      defaultPolicy: {},
      defaultAdmission: {},
      metricsToken: "metrics-scraper-0123456789abcdef",
    });
  });

  it("takes RELAY_SHUTDOWN_GRACE=0: stop at once, as before the grace existed", () => {
    expect(loadConfig({ ...http, RELAY_SHUTDOWN_GRACE: "0" }).shutdownGraceSeconds).toBe(0);
  });

  it("reads only the environment it is given, not process.env", () => {
    vi.stubEnv("PORT", "4321");
    try {
      expect(loadConfig(http).port).toBe(3000);
    } finally {
      vi.unstubAllEnvs();
    }
  });

  it("adds the trailing slash SLACK_API_URL needs to be a base URL", () => {
    expect(loadConfig({ ...http, SLACK_API_URL: "https://slack-gov.com/api" }).slack.apiUrl).toBe("https://slack-gov.com/api/");
    expect(loadConfig({ ...http, SLACK_API_URL: "https://proxy.internal/slack/api/" }).slack.apiUrl).toBe("https://proxy.internal/slack/api/");
  });

  it("treats empty strings as unset", () => {
    const config = loadConfig({
      ...http,
      SLACK_APP_TOKEN: "",
      SLACK_API_URL: "",
      SLACK_DEFAULT_CHANNEL: "",
      REDIS_URL: "",
      REDIS_PREFIX: "",
      PORT: "",
      RELAY_DEFAULT_TIMEOUT: "",
      RELAY_HOOK_TIMEOUT: "",
      RELAY_STORE_TIMEOUT_MS: "",
      RELAY_CALLBACK_HOSTS: "",
      RELAY_SHUTDOWN_GRACE: "",
      RELAY_HOOK_KEEPALIVE: "",
      RELAY_MCP_PROGRESS: "",
      RELAY_MCP_ORIGINS: "",
      LOG_LEVEL: "",
      RELAY_CONFIG_FILE: "",
      METRICS_TOKEN: "",
    });
    expect(config.slack.appToken).toBeUndefined();
    expect(config.slack.apiUrl).toBe("https://slack.com/api/");
    expect(config.slack.defaultChannel).toBeUndefined();
    expect(config.redis).toBeUndefined();
    expect(config.redisPrefix).toBe("relay");
    expect(config.port).toBe(3000);
    expect(config.defaultTimeoutSeconds).toBe(600);
    expect(config.hookTimeoutSeconds).toBe(600);
    expect(config.storeTimeoutMs).toBeUndefined();
    expect(config.callbackHosts).toBeUndefined();
    expect(config.shutdownGraceSeconds).toBe(25);
    expect(config.hookKeepaliveSeconds).toBe(15);
    expect(config.logLevel).toBe("info");
    expect(config.metricsToken).toBeUndefined();
  });

  it("reports an empty SLACK_BOT_TOKEN as missing, not as malformed", () => {
    expect(errorFor({ ...socket, SLACK_BOT_TOKEN: "" }).message).toMatch(/^SLACK_BOT_TOKEN is missing: /);
  });
});

describe("Socket Mode and HTTP mode", () => {
  it("runs in Socket Mode with SLACK_APP_TOKEN and needs no signing secret", () => {
    const config = loadConfig(socket);
    expect(config.slack.appToken).toBe(APP);
    expect(config.slack.signingSecret).toBeUndefined();
  });

  it("runs in HTTP mode with SLACK_SIGNING_SECRET and no app token", () => {
    const config = loadConfig(http);
    expect(config.slack.appToken).toBeUndefined();
    expect(config.slack.signingSecret).toBe(SECRET);
  });

  it("without either, stops naming SLACK_SIGNING_SECRET and offering Socket Mode", () => {
    const message = errorFor({ SLACK_BOT_TOKEN: BOT, RELAY_TOKENS: `ci-bot:${CI_TOKEN}` }).message;
    expect(message).toMatch(/^SLACK_SIGNING_SECRET is missing: /);
    expect(message).toContain("SLACK_APP_TOKEN");
  });

  it("an empty SLACK_APP_TOKEN does not switch Socket Mode on", () => {
    expect(errorFor({ ...socket, SLACK_APP_TOKEN: "" }).message).toMatch(/^SLACK_SIGNING_SECRET is missing: /);
  });
});

describe("missing required variables", () => {
  it("with SLACK_APP_TOKEN but no bot token, names SLACK_BOT_TOKEN with where to find it", () => {
    const error = errorFor({ SLACK_APP_TOKEN: APP, RELAY_TOKENS: `ci-bot:${CI_TOKEN}` });
    expect(error.name).toBe("ConfigError");
    expect(error.message).toBe("SLACK_BOT_TOKEN is missing: create the app from manifest.yml and copy the Bot User OAuth Token (xoxb-…)");
  });

  it("checks SLACK_BOT_TOKEN before the signing secret and the agent tokens", () => {
    expect(errorFor({ SLACK_APP_TOKEN: APP }).message).toMatch(/^SLACK_BOT_TOKEN is missing: /);
  });

  it("names RELAY_TOKENS when Slack is configured and no agent token is", () => {
    const message = errorFor({ SLACK_BOT_TOKEN: BOT, SLACK_SIGNING_SECRET: SECRET }).message;
    expect(message).toMatch(/^RELAY_TOKENS is missing: set comma-separated name:token pairs/);
  });
});

describe("local mode (no Slack token)", () => {
  it("with nothing set, starts in local mode with no agent token (the relay makes one) and no Slack", () => {
    const config = loadConfig({});
    expect(config.local).toBe(true);
    expect(config.tokens).toEqual([]);
    expect(config.slack.botToken).toBeUndefined();
    expect(config.slack.appToken).toBeUndefined();
    expect(config.redis).toBeUndefined();
  });

  it("keeps RELAY_TOKENS and XDG_STATE_HOME when given", () => {
    const config = loadConfig({ RELAY_TOKENS: `ci-bot:${CI_TOKEN}`, XDG_STATE_HOME: "/tmp/state" });
    expect(config.local).toBe(true);
    expect(config.tokens).toEqual([{ name: "ci-bot", token: CI_TOKEN }]);
    expect(config.localStateHome).toBe("/tmp/state");
  });

  it("is off as soon as a Slack token is set", () => {
    expect(loadConfig(http).local).toBe(false);
    expect(loadConfig(socket).local).toBe(false);
  });

  it("a signing secret alone does not leave local mode, and a wrong RELAY_TOKENS still stops the start", () => {
    expect(loadConfig({ SLACK_SIGNING_SECRET: SECRET }).local).toBe(true);
    expect(errorFor({ RELAY_TOKENS: "no-colon" }).message).toMatch(/^RELAY_TOKENS is invalid: /);
  });
});

describe("Sign in with Slack (SLACK_CLIENT_ID, SLACK_CLIENT_SECRET, RELAY_PUBLIC_URL)", () => {
  const CLIENT = { SLACK_CLIENT_ID: "1111111111.2222222222", SLACK_CLIENT_SECRET: "0123456789abcdef0123456789abcdef" };

  it("is on with the client id, its secret and the public URL, which is kept as an origin", () => {
    const config = loadConfig({ ...http, ...CLIENT, RELAY_PUBLIC_URL: "https://Relay.Example.com/" });
    expect(config.slackSignIn).toEqual({ clientId: CLIENT.SLACK_CLIENT_ID, clientSecret: CLIENT.SLACK_CLIENT_SECRET });
    expect(config.publicUrl).toBe("https://relay.example.com");
  });

  it("is off without them", () => {
    expect(loadConfig(http).slackSignIn).toBeUndefined();
  });

  it("a client id without its secret, or the other way round, names the missing one", () => {
    expect(errorFor({ ...http, SLACK_CLIENT_ID: CLIENT.SLACK_CLIENT_ID, RELAY_PUBLIC_URL: "https://r.example" }).message).toMatch(
      /^SLACK_CLIENT_SECRET is missing: /,
    );
    expect(errorFor({ ...http, SLACK_CLIENT_SECRET: CLIENT.SLACK_CLIENT_SECRET }).message).toMatch(/^SLACK_CLIENT_ID is missing: /);
  });

  it("needs RELAY_PUBLIC_URL for its redirect URL", () => {
    expect(errorFor({ ...http, ...CLIENT }).message).toMatch(/^RELAY_PUBLIC_URL is missing: use the relay's own origin/);
  });

  it("is refused in local mode, which has no Slack to sign in with", () => {
    expect(errorFor({ ...CLIENT, RELAY_PUBLIC_URL: "https://r.example" }).message).toMatch(/^SLACK_CLIENT_ID is set in local mode/);
  });

  it.each([
    "https://relay.example.com/console",
    "https://relay.example.com/?a=1",
    "ftp://relay.example.com",
    "https://user@relay.example.com",
    "relay.example.com",
  ])("RELAY_PUBLIC_URL=%s is refused: an origin only", (value) => {
    expect(errorFor({ ...http, RELAY_PUBLIC_URL: value }).message).toMatch(/^RELAY_PUBLIC_URL is invalid: /);
  });

  it("a malformed client id or secret is refused without quoting the secret", () => {
    expect(errorFor({ ...http, ...CLIENT, SLACK_CLIENT_ID: "abc", RELAY_PUBLIC_URL: "https://r.example" }).message).toMatch(/^SLACK_CLIENT_ID is invalid: /);
    const message = errorFor({ ...http, ...CLIENT, SLACK_CLIENT_SECRET: "not-hex-secret-value", RELAY_PUBLIC_URL: "https://r.example" }).message;
    expect(message).toMatch(/^SLACK_CLIENT_SECRET is invalid: /);
    expect(message).not.toContain("not-hex-secret-value");
  });
});

/** [variable, malformed value, a fragment of the fix the message must give]. */
const malformed: Array<[string, string, string]> = [
  ["SLACK_BOT_TOKEN", "xoxp-1234567890-0987654321-userTokenNotABot", "Bot User OAuth Token"],
  ["SLACK_BOT_TOKEN", "xoxb-1234567890 0987654321", "Bot User OAuth Token"],
  ["SLACK_APP_TOKEN", "xoxb-1234567890-0987654321-wrongKindOfToken", "connections:write"],
  ["SLACK_SIGNING_SECRET", "s3cr3t!", "Signing Secret"],
  ["SLACK_API_URL", "ftp://slack.com/api/", "http(s) URL"],
  ["SLACK_API_URL", "slack.com/api", "http(s) URL"],
  ["SLACK_DEFAULT_CHANNEL", "#general", "C0123456789"],
  ["RELAY_TOKENS", "ci-bot", "name:token pairs"],
  ["RELAY_ADMIN_TOKENS", "ops", "name:token pairs for operators"],
  ["RELAY_ADMIN_TOKENS", " , ", "16+ characters"],
  ["RELAY_AUDIT_MAX_EVENTS", "99", "between 100 and 10000000"],
  ["RELAY_AUDIT_MAX_EVENTS", "10000001", "between 100 and 10000000"],
  ["RELAY_AUDIT_MAX_EVENTS", "50k", "whole number of events"],
  ["RELAY_AUDIT_RETENTION", "90", "a number and a unit"],
  ["RELAY_AUDIT_RETENTION", "0d", "a number and a unit"],
  ["RELAY_AUDIT_RETENTION", "3651d", "up to 10 years"],
  ["REDIS_URL", "http://127.0.0.1:6379", "redis://"],
  ["REDIS_PREFIX", "relay prefix", "1 to 64"],
  ["PORT", "0", "between 1 and 65535"],
  ["PORT", "65536", "between 1 and 65535"],
  ["PORT", "http", "between 1 and 65535"],
  ["PORT", "80.5", "between 1 and 65535"],
  ["RELAY_DEFAULT_TIMEOUT", "0", "whole number of seconds"],
  ["RELAY_DEFAULT_TIMEOUT", String(MAX_TIMEOUT_SECONDS + 1), "whole number of seconds"],
  ["RELAY_DEFAULT_TIMEOUT", "10m", "whole number of seconds"],
  ["RELAY_HOOK_TIMEOUT", "9", "between 10 and 86400"],
  ["RELAY_HOOK_TIMEOUT", "86401", "between 10 and 86400"],
  ["RELAY_STORE_TIMEOUT_MS", "99", "between 100 and 60000"],
  ["RELAY_STORE_TIMEOUT_MS", "2s", "between 100 and 60000"],
  ["RELAY_MAX_BODY", "500", "it is 500 bytes, not 1MB to 256MB; use a size between 1MB and 256MB"],
  ["RELAY_CONSOLE_SESSION_TTL", "12", "a number and a unit: m (minutes), h (hours) or d (days)"],
  ["RELAY_CONSOLE_SESSION_TTL", "4m", "from 5m to 30d"],
  ["RELAY_CONSOLE_SESSION_TTL", "31d", "from 5m to 30d"],
  ["RELAY_CONSOLE_SESSION_TTL", "2w", "m (minutes), h (hours) or d (days)"],
  ["RELAY_CONSOLE_SESSION_TTL", "0h", "from 5m to 30d"],
  ["RELAY_CONSOLE_SESSIONS_PER_PERSON", "0", "between 1 and 100"],
  ["RELAY_CONSOLE_SESSIONS_PER_PERSON", "101", "between 1 and 100"],
  ["RELAY_CONSOLE_SESSIONS_PER_PERSON", "2.5", "whole number of sessions"],
  ["RELAY_CONSOLE_SESSIONS_PER_PERSON", "ten", "whole number of sessions"],
  ["RELAY_MAX_BODY", "1GB", "not a whole number of bytes, KB or MB"],
  ["RELAY_MAX_BODY", "300MB", "not 1MB to 256MB"],
  ["RELAY_CALLBACK_HOSTS", " , ", "host names"],
  ["RELAY_CALLBACK_HOSTS", "https://hooks.example.com/relay", "host names"],
  ["RELAY_CALLBACK_HOSTS", "hooks.example.com,user@evil.example", "host names"],
  ["RELAY_SHUTDOWN_GRACE", "-1", "between 0 and 3600"],
  ["RELAY_SHUTDOWN_GRACE", "3601", "between 0 and 3600"],
  ["RELAY_SHUTDOWN_GRACE", "25s", "whole number of seconds"],
  ["RELAY_SHUTDOWN_GRACE", "2.5", "whole number of seconds"],
  ["RELAY_HOOK_KEEPALIVE", "0", "between 1 and 300"],
  ["RELAY_HOOK_KEEPALIVE", "301", "between 1 and 300"],
  ["RELAY_HOOK_KEEPALIVE", "15s", "idle timeout"],
  ["RELAY_MCP_PROGRESS", "0", "between 1 and 55"],
  ["RELAY_MCP_PROGRESS", "60", "call timeout"],
  ["RELAY_MCP_ORIGINS", "inspector.example.com", "scheme, host and port"],
  ["RELAY_MCP_ORIGINS", "https://inspector.example.com/app", "no path"],
  ["LOG_LEVEL", "verbose", "debug, info, warn or error"],
  ["RELAY_ALWAYS_ALLOW", "everything", "use tool (Always allow passes back only rules for the asked tool) or all"],
  ["METRICS_TOKEN", "tooShortMetrics", "16 to 512 characters"],
  ["METRICS_TOKEN", "metrics scraper 0123456789", "without spaces"],
  ["METRICS_TOKEN", "m".repeat(513), "16 to 512 characters"],
];

describe("RELAY_MAX_BODY", () => {
  it.each([
    ["16MB", 16 * 1024 * 1024],
    ["2048kb", 2 * 1024 * 1024],
    ["1048576", 1024 * 1024],
    ["64 MB", 64 * 1024 * 1024],
  ])("%j is %i bytes", (value, bytes) => {
    expect(loadConfig({ ...http, RELAY_MAX_BODY: value }).maxBodyBytes).toBe(bytes);
  });
});

describe("malformed variables", () => {
  it.each(malformed)("%s=%j stops the start with one line naming it and saying how to fix it", (name, value, fix) => {
    const message = errorFor({ ...http, [name]: value }).message;
    expect(message.startsWith(`${name} is invalid: `)).toBe(true);
    expect(message).toContain(fix);
    expect(message).not.toContain("\n");
  });

  it.each([
    ["SLACK_BOT_TOKEN", "xoxp-1234567890-0987654321-userTokenNotABot"],
    ["SLACK_APP_TOKEN", "xoxb-1234567890-0987654321-wrongKindOfToken"],
    ["SLACK_SIGNING_SECRET", "s3cr3t!"],
    ["RELAY_TOKENS", "ci-bot:tooShortTok"],
    ["RELAY_TOKENS", "0123456789abcdefNoName"],
    ["RELAY_ADMIN_TOKENS", "ops:tooShortTok"],
    ["RELAY_ADMIN_TOKENS", "op0123456789abcdefNoName"],
    ["METRICS_TOKEN", "tooShortMetrics"],
  ])("a malformed %s never appears in the message", (name, value) => {
    const message = errorFor({ ...http, [name]: value }).message;
    expect(message).toMatch(new RegExp(`^${name} is invalid: `));
    expect(message).not.toContain(value);
    expect(message).not.toContain(value.split(":").pop());
  });
});

/** [variable, refused value, the rule the line names]: every secret says which rule it broke, never the secret. */
const brokenRules: Array<[string, string, string]> = [
  ["SLACK_BOT_TOKEN", "xoxp-1234567890-0987654321-userTokenNotABot", "it is a user token (xoxp-…), not a bot token (xoxb-…)"],
  ["SLACK_BOT_TOKEN", APP, "it is an app-level token (xapp-…), not a bot token (xoxb-…)"],
  ["SLACK_BOT_TOKEN", "1234567890-0987654321-AbCdEfGhIjKl", "it does not start with xoxb- as a bot token (xoxb-…) does"],
  ["SLACK_BOT_TOKEN", "xoxb-", "nothing follows xoxb-"],
  ["SLACK_BOT_TOKEN", "xoxb-1234567890 0987654321", "it holds a character other than letters, digits and '-' after xoxb- (a space or a quote copied with it?)"],
  ["SLACK_APP_TOKEN", "xoxb-1234567890-0987654321-wrongKindOfToken", "it is a bot token (xoxb-…), not an app-level token (xapp-…)"],
  ["SLACK_APP_TOKEN", "xapp-1-A0123'", "it holds a character other than letters, digits and '-' after xapp- (a space or a quote copied with it?)"],
  ["SLACK_SIGNING_SECRET", "x", "it is 1 character long, and a signing secret is 32 hexadecimal characters"],
  ["SLACK_SIGNING_SECRET", `${SECRET}0`, "it is 33 characters long, and a signing secret is 32 hexadecimal characters"],
  ["SLACK_SIGNING_SECRET", "8f742231b10e8888abcd99yyyzzz85a5", "it holds a character that is not hexadecimal (0-9, a-f), as a signing secret is"],
  ["RELAY_TOKENS", "NoName0123456789abcdef", "entry 1 has no ':' between a name and a token"],
  ["RELAY_TOKENS", `ci-bot:${CI_TOKEN},:${DEPLOY_TOKEN}`, "entry 2 has no name before its ':'"],
  ["RELAY_TOKENS", `ci bot:${CI_TOKEN}`, "the name of entry 1 is not 1 to 64 letters, digits, '.', '_', '@' or '-'"],
  ["RELAY_TOKENS", "ci-bot:0123456789abcde", 'the token of "ci-bot" is 15 characters long, not 16 to 512'],
  ["RELAY_TOKENS", " , ,", "it holds no name:token pair"],
  ["RELAY_ADMIN_TOKENS", "ops:0123", 'the token of "ops" is 4 characters long, not 16 to 512'],
  ["RELAY_ADMIN_TOKENS", "op0123456789abcdefNoName", "entry 1 has no ':' between a name and a token"],
  ["METRICS_TOKEN", "tooShortMetrics", "it is 15 characters long, not 16 to 512"],
  ["METRICS_TOKEN", "m".repeat(513), "it is 513 characters long, not 16 to 512"],
  ["METRICS_TOKEN", "scraper0123456789 abcdef", "it holds a space"],
];

describe("each refused secret says which rule it broke", () => {
  it.each(brokenRules)("%s=%j: one line naming the variable, the rule and the fix, never the value", (name, value, rule) => {
    const message = errorFor({ ...http, [name]: value }).message;
    expect(message.startsWith(`${name} is invalid: ${rule}; `), message).toBe(true);
    expect(message).not.toContain("\n");
    // The token of a name:token pair is the secret; its name may be shown.
    const secrets = value.split(/[,\s]/).map((pair) => pair.slice(pair.indexOf(":") + 1));
    for (const secret of secrets.filter((part) => part.length >= 4 && !/^x(oxb|app)-$/.test(part))) expect(message).not.toContain(secret);
  });

  it("takes a signing secret in capitals: it is hexadecimal all the same", () => {
    expect(loadConfig({ ...http, SLACK_SIGNING_SECRET: SECRET.toUpperCase() }).slack.signingSecret).toBe(SECRET.toUpperCase());
  });
});

describe("RELAY_TOKENS", () => {
  const tokensOf = (value: string) => loadConfig({ ...http, RELAY_TOKENS: value }).tokens;

  it("reads several name:token pairs, ignoring whitespace and empty entries", () => {
    expect(tokensOf(` ci-bot:${CI_TOKEN} ,, deploy@prod:${DEPLOY_TOKEN},`)).toEqual([
      { name: "ci-bot", token: CI_TOKEN },
      { name: "deploy@prod", token: DEPLOY_TOKEN },
    ]);
  });

  it("trims whitespace around the colon so the token matches what agents send", () => {
    expect(tokensOf(`ci-bot : ${CI_TOKEN}`)).toEqual([{ name: "ci-bot", token: CI_TOKEN }]);
  });

  it("keeps colons after the first one as part of the token", () => {
    expect(tokensOf(`ci-bot:${CI_TOKEN}:v2`)).toEqual([{ name: "ci-bot", token: `${CI_TOKEN}:v2` }]);
  });

  it("refuses two tokens with the same name, saying names must be unique", () => {
    const message = errorFor({ ...http, RELAY_TOKENS: `ci-bot:${CI_TOKEN},ci-bot:${DEPLOY_TOKEN}` }).message;
    expect(message).toBe(
      'RELAY_TOKENS is invalid: the name "ci-bot" is given twice; token names must be unique; set comma-separated name:token pairs, e.g. ci-bot:$(openssl rand -hex 24); tokens need 16+ characters',
    );
  });

  it.each([
    ["a token shorter than 16 characters", "ci-bot:0123456789abcde"],
    ["a pair with no name", `:${CI_TOKEN}`],
    ["a pair with no colon", CI_TOKEN],
    ["a name with spaces", `ci bot:${CI_TOKEN}`],
    ["a pair with no token", "ci-bot:"],
    ["only separators", " , ,"],
    ["a token over 512 characters", `ci-bot:${"x".repeat(513)}`],
  ])("refuses %s", (_, value) => {
    expect(errorFor({ ...http, RELAY_TOKENS: value }).message).toMatch(/^RELAY_TOKENS is invalid: .*16\+ characters/);
  });

  it("accepts a token of exactly 16 characters", () => {
    expect(tokensOf("ci-bot:0123456789abcdef")).toEqual([{ name: "ci-bot", token: "0123456789abcdef" }]);
  });
});

describe("RELAY_ADMIN_TOKENS", () => {
  const adminTokensOf = (value: string) => loadConfig({ ...http, RELAY_ADMIN_TOKENS: value }).adminTokens;

  it("reads name:token pairs as RELAY_TOKENS does", () => {
    expect(adminTokensOf(` ops:${OPS_TOKEN} ,, auditor : ${DEPLOY_TOKEN},`)).toEqual([
      { name: "ops", token: OPS_TOKEN },
      { name: "auditor", token: DEPLOY_TOKEN },
    ]);
  });

  it("is optional: none configured, no admin tokens", () => {
    expect(loadConfig(http).adminTokens).toEqual([]);
    expect(loadConfig({ ...http, RELAY_ADMIN_TOKENS: "" }).adminTokens).toEqual([]);
  });

  it("is also read from the config file, and the environment wins", () => {
    const path = configFile(JSON.stringify({ ...http, RELAY_ADMIN_TOKENS: `ops:${OPS_TOKEN}`, RELAY_AUDIT_MAX_EVENTS: 1000 }));
    expect(loadConfig({ RELAY_CONFIG_FILE: path })).toMatchObject({ adminTokens: [{ name: "ops", token: OPS_TOKEN }], auditMaxEvents: 1000 });
    expect(loadConfig({ RELAY_CONFIG_FILE: path, RELAY_ADMIN_TOKENS: `sre:${DEPLOY_TOKEN}` }).adminTokens).toEqual([{ name: "sre", token: DEPLOY_TOKEN }]);
  });

  it("refuses two admin tokens with the same name", () => {
    expect(errorFor({ ...http, RELAY_ADMIN_TOKENS: `ops:${OPS_TOKEN},ops:${DEPLOY_TOKEN}` }).message).toBe(
      'RELAY_ADMIN_TOKENS is invalid: the name "ops" is given twice; token names must be unique; set comma-separated name:token pairs for operators, e.g. ops:$(openssl rand -hex 24); tokens need 16+ characters',
    );
  });

  it("refuses an admin token named as an agent token, in one line naming the name", () => {
    const message = errorFor({ ...http, RELAY_ADMIN_TOKENS: `ci-bot:${OPS_TOKEN}` }).message;
    expect(message).toBe('RELAY_ADMIN_TOKENS is invalid: the name "ci-bot" is also an agent token\'s in RELAY_TOKENS; token names must be unique across both');
    expect(message).not.toContain(OPS_TOKEN);
  });

  it("refuses an admin token whose value is an agent token's, in one line that never shows the token", () => {
    const message = errorFor({ ...http, RELAY_ADMIN_TOKENS: `ops:${CI_TOKEN}` }).message;
    expect(message).toBe('RELAY_ADMIN_TOKENS is invalid: the token of "ops" is also an agent token in RELAY_TOKENS; give each admin token a value of its own');
    expect(message).not.toContain(CI_TOKEN);
  });

  it.each([
    ["a token shorter than 16 characters", "ops:0123456789abcde"],
    ["a pair with no name", `:${OPS_TOKEN}`],
    ["a name with spaces", `on call:${OPS_TOKEN}`],
  ])("refuses %s, as RELAY_TOKENS does", (_, value) => {
    expect(errorFor({ ...http, RELAY_ADMIN_TOKENS: value }).message).toMatch(/^RELAY_ADMIN_TOKENS is invalid: .*16\+ characters/);
  });
});

describe("RELAY_CONFIG_FILE", () => {
  it("reads settings from the JSON file, numbers included", () => {
    const path = configFile(JSON.stringify({ ...http, PORT: 8080, LOG_LEVEL: "warn" }));
    const config = loadConfig({ RELAY_CONFIG_FILE: path });
    expect(config.slack.botToken).toBe(BOT);
    expect(config.port).toBe(8080);
    expect(config.logLevel).toBe("warn");
    expect(config.tokens).toEqual([{ name: "ci-bot", token: CI_TOKEN }]);
  });

  it("lets the environment win over the file", () => {
    const path = configFile(JSON.stringify({ ...http, PORT: 8080, LOG_LEVEL: "warn" }));
    const config = loadConfig({ RELAY_CONFIG_FILE: path, PORT: "9090" });
    expect(config.port).toBe(9090);
    expect(config.logLevel).toBe("warn");
  });

  it("an empty environment variable leaves the file's value in place", () => {
    const path = configFile(JSON.stringify({ ...http, PORT: 8080 }));
    const config = loadConfig({ RELAY_CONFIG_FILE: path, PORT: "", SLACK_BOT_TOKEN: "" });
    expect(config.port).toBe(8080);
    expect(config.slack.botToken).toBe(BOT);
  });

  it("names the variable when a value in the file is malformed", () => {
    const path = configFile(JSON.stringify({ ...http, PORT: 70000 }));
    expect(errorFor({ RELAY_CONFIG_FILE: path }).message).toMatch(/^PORT is invalid: /);
  });

  it.each([
    ["does not exist", () => `${configFile("{}")}.missing`, "cannot be read (point it at a readable YAML or JSON file)"],
    ["is neither YAML nor JSON", () => configFile(`{"SLACK_BOT_TOKEN": "${BOT}",`), "is not valid YAML or JSON (line 1, column 75)"],
    ["is a bare string", () => configFile(`SLACK_BOT_TOKEN=${BOT}`), "must be a mapping of keys to values (routes, default, environment-variable names)"],
    ["is a JSON array", () => configFile(JSON.stringify([BOT])), "must be a mapping of keys to values (routes, default, environment-variable names)"],
    ["nests objects", () => configFile(JSON.stringify({ SLACK_BOT_TOKEN: { value: BOT } })), "SLACK_BOT_TOKEN: must be a string or a number"],
    ["holds a boolean", () => configFile(JSON.stringify({ ...http, LOG_LEVEL: true })), "LOG_LEVEL: must be a string or a number"],
  ])("stops with RELAY_CONFIG_FILE named when the file %s, never echoing its content", (_, path, why) => {
    const message = errorFor({ RELAY_CONFIG_FILE: path() }).message;
    expect(message).toBe(`RELAY_CONFIG_FILE is invalid: ${why}`);
    expect(message).not.toContain(BOT);
  });
});
