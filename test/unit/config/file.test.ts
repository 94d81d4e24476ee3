/**
 * RELAY_CONFIG_FILE with routes (docs/architecture.md §7): YAML and JSON read alike, the
 * `default` route stands in for the variables it shares a meaning with (the
 * environment still wins), and every bad file stops the start with one line
 * naming the key path — keys a later version implements included, so a
 * policy is never accepted and silently not applied. The policy keys
 * (approvers, quorum, …) have their own tests in policy.test.ts.
 */
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../../src/config/config.js";
import { configFiles } from "../../helpers/config-files.js";

const BOT = "xoxb-1234567890-0987654321-AbCdEfGhIjKlMnOpQrStUvWx";
const SECRET = "8f14e45fceea167a5a36dedd4bea2543";
const env = { SLACK_BOT_TOKEN: BOT, SLACK_SIGNING_SECRET: SECRET, RELAY_TOKENS: "deploy-bot:dp0123456789abcdef0123456789" };

const fileWith = configFiles("yaml");

function errorFor(content: string): string {
  try {
    loadConfig({ ...env, RELAY_CONFIG_FILE: fileWith(content) });
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error("loadConfig accepted the file");
}

const PROD_YAML = `
# relay.config.yaml
LOG_LEVEL: warn
routes:
  - match: { token: deploy-bot, kind: [permission, step_gate], tool: "Bash|mcp__k8s__.*", labels: { env: prod } }
    channel: C0PRODDEPLOY
    channels: [C0PRODBACKUP]
    timeoutSeconds: 1800
    alwaysAllow: all
  - match: { agent: nightly, kind: ask_user_question, channel: C0NIGHTLY1 }
default:
  channel: C0GENERAL01
  channels: [C0SANDBOX01]
  timeoutSeconds: 300
  alwaysAllow: tool
  approvers: any
`;

describe("a config file with routes", () => {
  it("reads routes, their match fields and the default route from YAML", () => {
    const config = loadConfig({ ...env, RELAY_CONFIG_FILE: fileWith(PROD_YAML) });
    expect(config.logLevel).toBe("warn");
    expect(config.routes).toHaveLength(2);
    const [prod, nightly] = config.routes;
    expect(prod).toMatchObject({
      match: { token: "deploy-bot", kind: ["permission", "step_gate"], labels: { env: "prod" } },
      channel: "C0PRODDEPLOY",
      channels: ["C0PRODBACKUP"],
      timeoutSeconds: 1800,
      alwaysAllow: "all",
    });
    expect(nightly).toEqual({ match: { agent: "nightly", kind: "ask_user_question", channel: "C0NIGHTLY1" } });
    expect(config.slack.defaultChannel).toBe("C0GENERAL01");
    expect(config.defaultChannels).toEqual(["C0SANDBOX01"]);
    expect(config.defaultTimeoutSeconds).toBe(300);
    expect(config.alwaysAllow).toBe("tool");
  });

  it("compiles the tool pattern once, anchored to the whole tool name", () => {
    const tool = loadConfig({ ...env, RELAY_CONFIG_FILE: fileWith(PROD_YAML) }).routes[0]!.match.tool!;
    expect(tool).toBeInstanceOf(RegExp);
    expect(tool.test("Bash")).toBe(true);
    expect(tool.test("mcp__k8s__apply")).toBe(true);
    expect(tool.test("BashOutput")).toBe(false);
    expect(tool.test("xBash")).toBe(false);
  });

  it("reads the same routes from JSON, next to the variables' keys of before", () => {
    const json = JSON.stringify({
      PORT: 8080,
      routes: [{ match: { token: "deploy-bot", tool: "Bash" }, channel: "C0PRODDEPLOY" }],
      default: { channels: ["C0SANDBOX01"] },
    });
    const config = loadConfig({ ...env, RELAY_CONFIG_FILE: fileWith(json, "json") });
    expect(config.port).toBe(8080);
    expect(config.routes[0]).toMatchObject({ match: { token: "deploy-bot" }, channel: "C0PRODDEPLOY" });
    expect(config.routes[0]!.match.tool!.test("Bash")).toBe(true);
    expect(config.defaultChannels).toEqual(["C0SANDBOX01"]);
  });

  it("lets the environment win over the default route's channel, timeout and Always allow scope", () => {
    const config = loadConfig({
      ...env,
      RELAY_CONFIG_FILE: fileWith(PROD_YAML),
      SLACK_DEFAULT_CHANNEL: "C0FROMENV01",
      RELAY_DEFAULT_TIMEOUT: "42",
      RELAY_ALWAYS_ALLOW: "all",
    });
    expect(config.slack.defaultChannel).toBe("C0FROMENV01");
    expect(config.defaultTimeoutSeconds).toBe(42);
    expect(config.alwaysAllow).toBe("all");
  });

  it("lets a variable's key in the file win over the default route too", () => {
    const config = loadConfig({ ...env, RELAY_CONFIG_FILE: fileWith(`RELAY_DEFAULT_TIMEOUT: 99\ndefault: { timeoutSeconds: 300 }\n`) });
    expect(config.defaultTimeoutSeconds).toBe(99);
  });

  it("accepts an empty routes list and no default", () => {
    const config = loadConfig({ ...env, RELAY_CONFIG_FILE: fileWith("routes: []\n") });
    expect(config.routes).toEqual([]);
    expect(config.defaultChannels).toBeUndefined();
  });
});

describe("an unknown key stops the start, whatever its case and level, with one line naming it and the closest known key", () => {
  it.each([
    ["a misspelt variable", "METRICS_TOKN: metrics-scraper-0123456789abcdef\n", "METRICS_TOKN: is not a known key (did you mean METRICS_TOKEN?)"],
    ["a variable in lower case", "metrics_token: metrics-scraper-0123456789abcdef\n", "metrics_token: is not a known key (did you mean METRICS_TOKEN?)"],
    ["a variable with a letter too many", "LOG_LEVELS: warn\n", "LOG_LEVELS: is not a known key (did you mean LOG_LEVEL?)"],
    ["a policy key in upper case", "ROUTES: []\n", "ROUTES: is not a known key (did you mean routes?)"],
    [
      "a variable like none",
      "SOMETHING_ELSE: 1\n",
      "SOMETHING_ELSE: is not a known key (use routes, default or the name of a variable of the configuration reference)",
    ],
    [
      "a route key like none",
      "routes:\n  - match: {}\n    xyz: 1\n",
      "routes.0.xyz: is not a known key (known keys there: match, channel, channels, timeoutSeconds, alwaysAllow, approvers, quorum, selfApproval, reminders, escalate, allowRules, ruleMinutes, onTimeout, kinds, requireLabels, maxPending)",
    ],
    ["a route key in upper case", "routes:\n  - match: {}\n    QUORUM: 2\n", "routes.0.QUORUM: is not a known key (did you mean quorum?)"],
    [
      "a match key deep in a later route",
      "routes:\n  - match: {}\n  - match: { Labels: { env: prod } }\n",
      "routes.1.match.Labels: is not a known key (did you mean labels?)",
    ],
    [
      "an escalation key",
      "default: { escalate: [{ after: 60, usergroup: [S0ONCALL01] }] }\n",
      "default.escalate.0.usergroup: is not a known key (did you mean usergroups?)",
    ],
  ])("%s", (_, content, line) => {
    expect(errorFor(content)).toBe(`RELAY_CONFIG_FILE is invalid: ${line}`);
  });

  it("refuses RELAY_CONFIG_FILE inside the file: only the environment names the file", () => {
    expect(errorFor("RELAY_CONFIG_FILE: other.yaml\n")).toBe(
      "RELAY_CONFIG_FILE is invalid: RELAY_CONFIG_FILE: names the config file itself, which only the environment can",
    );
  });

  it("never quotes the value of the unknown key (it may be a secret)", () => {
    const message = errorFor("SLACK_BOT_TOKN: xoxb-1234567890-0987654321-AbCdEfGhIjKlMnOpQrStUvWx\n");
    expect(message).toBe("RELAY_CONFIG_FILE is invalid: SLACK_BOT_TOKN: is not a known key (did you mean SLACK_BOT_TOKEN?)");
  });
});

describe("a bad config file stops the start with one line naming the key path", () => {
  it.each([
    ["allowRules", "allowRules: yes please", "routes.0.allowRules"],
    ["ruleMinutes", "ruleMinutes: 0", "routes.0.ruleMinutes"],
    ["ruleMinutes past a working day", "ruleMinutes: 721", "routes.0.ruleMinutes"],
    ["onTimeout", "onTimeout: allow", "routes.0.onTimeout"],
  ])("refuses a bad %s", (_what, line, path) => {
    expect(errorFor(`routes:\n  - match: { token: deploy-bot }\n    ${line}\n`)).toMatch(
      new RegExp(`^RELAY_CONFIG_FILE is invalid: ${path.replace(/\./g, "\\.")}: `),
    );
  });

  it.each([
    [
      "a tool pattern that is not a regular expression",
      `routes:\n  - match: { token: a }\n  - match: { token: b }\n  - match: { tool: "Bash(" }\n`,
      "routes.2.match.tool: is not a valid regular expression",
    ],
    ["an unknown match key", `routes:\n  - match: { tokn: deploy-bot }\n`, "routes.0.match.tokn: is not a known key (did you mean token?)"],
    ["an unknown route key", `routes:\n  - match: {}\n    chanel: C0PRODDEPLOY\n`, "routes.0.chanel: is not a known key (did you mean channel?)"],
    ["an unknown default key", `default: { timeout: 5 }\n`, "default.timeout: is not a known key (did you mean timeoutSeconds?)"],
    ["an unknown top-level key", `route: []\n`, "route: is not a known key (did you mean routes?)"],
    ["a route without match", `routes:\n  - channel: C0PRODDEPLOY\n`, "routes.0.match: Invalid input: expected object, received undefined"],
    ["an unknown kind", `routes:\n  - match: { kind: [permission, deploy] }\n`, "routes.0.match.kind:"],
    [
      "a channel that is not a Slack id",
      `routes:\n  - match: {}\n    channel: "#prod"\n`,
      "routes.0.channel: must be a Slack channel or user id such as C0123456789",
    ],
    ["a timeout over a week", `routes:\n  - match: {}\n    timeoutSeconds: 999999999\n`, "routes.0.timeoutSeconds:"],
    ["an unknown Always allow scope", `default: { alwaysAllow: everything }\n`, "default.alwaysAllow:"],
    ["a label value that is not a string", `routes:\n  - match: { labels: { env: [prod] } }\n`, "routes.0.match.labels.env:"],
    ["routes that are not a list", `routes: { match: {} }\n`, "routes: Invalid input: expected array, received object"],
    ["a duplicated key", `PORT: 1\nPORT: 2\n`, "is not valid YAML or JSON (line 2, column 1)"],
  ])("%s", (_, content, why) => {
    const message = errorFor(content);
    expect(message.startsWith(`RELAY_CONFIG_FILE is invalid: ${why}`), message).toBe(true);
    expect(message).not.toContain("\n");
  });
});
