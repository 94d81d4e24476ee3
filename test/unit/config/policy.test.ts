/**
 * The policy keys of a config-file route (docs/architecture.md §7) through loadConfig:
 * approvers (`any`, or Slack user and user group ids), quorum, selfApproval,
 * reminders and escalations on routes and on `default`, which the
 * configuration hands on as `defaultPolicy`. Every bad policy stops the
 * start with one line naming the key path, never echoing a value: ids of
 * the wrong shape, a list that names nobody, a quorum its users cannot
 * reach, a reminder or escalation at or after its route's timeout.
 */
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../../src/config/config.js";
import { configFiles } from "../../helpers/config-files.js";

const BOT = "xoxb-1234567890-0987654321-AbCdEfGhIjKlMnOpQrStUvWx";
const SECRET = "8f14e45fceea167a5a36dedd4bea2543";
const env = { SLACK_BOT_TOKEN: BOT, SLACK_SIGNING_SECRET: SECRET, RELAY_TOKENS: "deploy-bot:dp0123456789abcdef0123456789" };

const fileWith = configFiles("yaml");

const load = (content: string, extra: Record<string, string> = {}) => loadConfig({ ...env, ...extra, RELAY_CONFIG_FILE: fileWith(content) });

function errorFor(content: string, extra: Record<string, string> = {}): string {
  try {
    load(content, extra);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as Error).message;
    expect(message).not.toContain("\n");
    return message;
  }
  throw new Error("loadConfig accepted the file");
}

const PROD_YAML = `
routes:
  - match: { token: deploy-bot, labels: { env: prod } }
    channel: C0PRODDEPLOY
    approvers: { users: [U0ALICE01, W0BOBGRID1], usergroups: [S0ONCALL01] }
    quorum: 2
    selfApproval: deny
    timeoutSeconds: 1800
    reminders: [300, 900]
    escalate:
      - { after: 1200, usergroups: [S0SRELEADS], channel: C0INCIDENTS }
      - { after: 1500, users: [U0CAROL01] }
  - match: { kind: step_gate }
    approvers: any
    quorum: 3
default:
  approvers: { users: [U0ALICE01] }
  selfApproval: allow
  reminders: [60]
  escalate: [{ after: 120, users: [U0BOB0001] }]
`;

describe("policy keys on routes and on default", () => {
  it("reads approvers, quorum, selfApproval, reminders and escalations of a route", () => {
    const [prod] = load(PROD_YAML).routes;
    expect(prod).toMatchObject({
      approvers: { users: ["U0ALICE01", "W0BOBGRID1"], usergroups: ["S0ONCALL01"] },
      quorum: 2,
      selfApproval: "deny",
      reminders: [300, 900],
      escalate: [
        { after: 1200, usergroups: ["S0SRELEADS"], channel: "C0INCIDENTS" },
        { after: 1500, users: ["U0CAROL01"] },
      ],
    });
  });

  it("keeps a route's approvers: any, which replaces the default route's list (any quorum goes with it)", () => {
    expect(load(PROD_YAML).routes[1]).toMatchObject({ approvers: "any", quorum: 3 });
  });

  it("hands on the default route's policy keys as defaultPolicy", () => {
    expect(load(PROD_YAML).defaultPolicy).toEqual({
      approvers: { users: ["U0ALICE01"] },
      selfApproval: "allow",
      reminders: [60],
      escalate: [{ after: 120, users: ["U0BOB0001"] }],
    });
  });

  it("takes default: {approvers: any} as anyone: no approvers in defaultPolicy", () => {
    expect(load("default: { approvers: any, quorum: 2 }\n").defaultPolicy).toEqual({ quorum: 2 });
  });

  it("has an empty defaultPolicy without a file or without policy keys", () => {
    expect(loadConfig(env).defaultPolicy).toEqual({});
    expect(load("default: { channel: C0GENERAL01 }\n").defaultPolicy).toEqual({});
  });

  it("accepts a quorum above one with no approvers anywhere: any distinct people", () => {
    expect(load("routes:\n  - match: {}\n    quorum: 2\n").routes[0]).toMatchObject({ quorum: 2 });
  });

  it("accepts a quorum above the users listed when a user group is listed too (the group may hold more)", () => {
    expect(load("default: { approvers: { users: [U0ALICE01], usergroups: [S0ONCALL01] }, quorum: 5 }\n").defaultPolicy.quorum).toBe(5);
  });

  it("accepts reminders and escalations just before the timeout", () => {
    const config = load("routes:\n  - match: {}\n    timeoutSeconds: 600\n    reminders: [599]\n    escalate: [{ after: 599, users: [U0ALICE01] }]\n");
    expect(config.routes[0]).toMatchObject({ reminders: [599], escalate: [{ after: 599 }] });
  });

  it("checks a route without its own timeout against the default timeout, which the environment may set", () => {
    const yaml = "default: { timeoutSeconds: 1000 }\nroutes:\n  - match: {}\n    reminders: [700]\n";
    expect(load(yaml).routes[0]!.reminders).toEqual([700]);
    expect(errorFor(yaml, { RELAY_DEFAULT_TIMEOUT: "700" })).toBe(
      "RELAY_CONFIG_FILE is invalid: routes.0.reminders.0: is not before the default timeout of 700 seconds, so it would never be sent (lower it or raise the timeout)",
    );
  });
});

describe("a bad policy stops the start with one line naming the key path", () => {
  it.each([
    [
      "a user id that is a name",
      `routes:\n  - match: {}\n    approvers: { users: [U0ALICE01, alice] }\n`,
      "routes.0.approvers.users.1: must be a Slack user id such as U0123ABCD (ids, never names)",
    ],
    [
      "a user group id that is a handle",
      `default: { approvers: { usergroups: ["@oncall"] } }\n`,
      "default.approvers.usergroups.0: must be a Slack user group id such as S0123ABCD (ids, never handles)",
    ],
    [
      "a user id where a group id belongs",
      `default: { approvers: { usergroups: [U0ALICE01] } }\n`,
      "default.approvers.usergroups.0: must be a Slack user group id",
    ],
    [
      "approvers that are neither any nor lists",
      `default: { approvers: everyone }\n`,
      "default.approvers: must be any, or {users: [Slack user ids], usergroups: [Slack user group ids]}",
    ],
    [
      "approvers given as a bare list",
      `default: { approvers: [U0ALICE01] }\n`,
      "default.approvers: must be any, or {users: [Slack user ids], usergroups: [Slack user group ids]}",
    ],
    [
      "an unknown approvers key",
      `default: { approvers: { people: [U0ALICE01] } }\n`,
      "default.approvers.people: is not a known key (known keys there: users, usergroups)",
    ],
    [
      "an empty approver list",
      `routes:\n  - match: {}\n    approvers: {}\n`,
      "routes.0.approvers: names nobody (name at least one user or user group, or use any)",
    ],
    [
      "approver lists that are both empty",
      `default: { approvers: { users: [], usergroups: [] } }\n`,
      "default.approvers: names nobody (name at least one user or user group, or use any)",
    ],
    ["a quorum of zero", `default: { quorum: 0 }\n`, "default.quorum: Too small: expected number to be >=1"],
    ["a quorum that is not a whole number", `default: { quorum: 1.5 }\n`, "default.quorum:"],
    ["a quorum over 20", `default: { quorum: 21 }\n`, "default.quorum: Too big"],
    ["an unknown selfApproval", `routes:\n  - match: {}\n    selfApproval: never\n`, "routes.0.selfApproval:"],
    ["a reminder of zero seconds", `default: { reminders: [0] }\n`, "default.reminders.0: Too small"],
    ["reminders that are not a list", `default: { reminders: 300 }\n`, "default.reminders: Invalid input: expected array"],
    ["more than 20 reminders", `default: { reminders: [${Array.from({ length: 21 }, (_, i) => i + 1).join(", ")}] }\n`, "default.reminders: Too big"],
    ["an escalation without after", `default: { escalate: [{ users: [U0ALICE01] }] }\n`, "default.escalate.0.after: Invalid input: expected number"],
    [
      "an escalation with an unknown key",
      `default: { escalate: [{ after: 60, user: [U0ALICE01] }] }\n`,
      "default.escalate.0.user: is not a known key (did you mean users?)",
    ],
    ["an escalation to a user name", `default: { escalate: [{ after: 60, users: [bob] }] }\n`, "default.escalate.0.users.0: must be a Slack user id"],
    [
      "an escalation to a channel name",
      `default: { escalate: [{ after: 60, channel: "#incidents" }] }\n`,
      "default.escalate.0.channel: must be a Slack channel or user id",
    ],
    [
      "an escalation to nobody",
      `routes:\n  - match: {}\n    escalate: [{ after: 60 }]\n`,
      "routes.0.escalate.0: escalates to nobody (name users, usergroups or a channel)",
    ],
    ["an unknown policy key", `default: { approver: any }\n`, "default.approver: is not a known key (did you mean approvers?)"],
  ])("%s", (_, content, why) => {
    const message = errorFor(content);
    expect(message.startsWith(`RELAY_CONFIG_FILE is invalid: ${why}`), message).toBe(true);
  });

  it("refuses a quorum larger than a route's users when it lists users only", () => {
    expect(errorFor(`routes:\n  - match: {}\n  - match: {}\n    approvers: { users: [U0ALICE01, U0BOB0001] }\n    quorum: 3\n`)).toBe(
      "RELAY_CONFIG_FILE is invalid: routes.1.quorum: the quorum of 3 is more than the 2 approvers listed (list more users, add a user group, or lower the quorum)",
    );
  });

  it("counts a user listed twice once", () => {
    expect(errorFor(`default: { approvers: { users: [U0ALICE01, U0ALICE01] }, quorum: 2 }\n`)).toMatch(
      /^RELAY_CONFIG_FILE is invalid: default\.quorum: the quorum of 2 is more than the 1 approver listed/,
    );
  });

  it("checks a route against the quorum it takes from default, naming the route's approvers", () => {
    expect(errorFor(`default: { quorum: 2 }\nroutes:\n  - match: {}\n    approvers: { users: [U0ALICE01] }\n`)).toBe(
      "RELAY_CONFIG_FILE is invalid: routes.0.approvers: the quorum of 2 it takes from default is more than the 1 approver listed (list more users, add a user group, or lower the quorum)",
    );
  });

  it("checks a route's quorum against the approvers it takes from default", () => {
    expect(errorFor(`default: { approvers: { users: [U0ALICE01] } }\nroutes:\n  - match: {}\n    quorum: 2\n`)).toMatch(
      /^RELAY_CONFIG_FILE is invalid: routes\.0\.quorum: the quorum of 2 is more than the 1 approver listed/,
    );
  });

  it("refuses a reminder at its route's timeout", () => {
    expect(errorFor(`routes:\n  - match: {}\n  - match: {}\n  - match: {}\n    timeoutSeconds: 900\n    reminders: [300, 900]\n`)).toBe(
      "RELAY_CONFIG_FILE is invalid: routes.2.reminders.1: is not before the route's timeoutSeconds of 900 seconds, so it would never be sent (lower it or raise the timeout)",
    );
  });

  it("refuses an escalation past its route's timeout", () => {
    expect(errorFor(`routes:\n  - match: {}\n    timeoutSeconds: 600\n    escalate: [{ after: 601, users: [U0ALICE01] }]\n`)).toBe(
      "RELAY_CONFIG_FILE is invalid: routes.0.escalate.0.after: is not before the route's timeoutSeconds of 600 seconds, so it would never be sent (lower it or raise the timeout)",
    );
  });

  it("checks the default route's reminders against the default timeout, RELAY_DEFAULT_TIMEOUT winning over the file", () => {
    expect(errorFor(`default: { reminders: [600] }\n`)).toMatch(
      /^RELAY_CONFIG_FILE is invalid: default\.reminders\.0: is not before the default timeout of 600 seconds/,
    );
    expect(load(`default: { timeoutSeconds: 1200, reminders: [600] }\n`).defaultPolicy.reminders).toEqual([600]);
    expect(errorFor(`default: { timeoutSeconds: 1200, reminders: [600] }\n`, { RELAY_DEFAULT_TIMEOUT: "300" })).toMatch(
      /^RELAY_CONFIG_FILE is invalid: default\.reminders\.0: is not before the default timeout of 300 seconds/,
    );
  });

  it("never echoes the file's values", () => {
    expect(errorFor(`default: { approvers: { users: [xoxb-secret-looking-1] } }\n`)).not.toContain("xoxb-secret-looking-1");
  });
});
