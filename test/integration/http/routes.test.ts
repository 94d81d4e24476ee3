/**
 * Approver routes through the real HTTP app (docs/architecture.md §7): a route's channel
 * is binding, on POST /v1/requests and on the Claude Code hook's ?channel=,
 * so an agent cannot send its own request to a lenient person's DM; a
 * refusal is a 400 on `channel` and changes nothing. The matched route and
 * its policy (approvers, quorum, selfApproval, reminders, escalations,
 * requestedBy) are kept on the stored record; a request may only narrow
 * them, each wider ask a 400 naming the field, and a lookup Slack cannot
 * answer a 503 with Retry-After. People are looked up in a plain-object
 * directory.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Route } from "../../../src/requests/route-schema.js";
import { RETRIES_UNAVAILABLE_HEADER } from "../../../src/protocol/claude-code-hook.js";
import { DirectoryUnavailableError, type PeopleDirectory } from "../../../src/requests/directory.js";
import { SLACK_UNAVAILABLE_DENY } from "../../../src/requests/hooks/calls.js";
import { ALICE, BOB, CAROL, MALLORY } from "../../fixtures/people.js";
import { bodies, DEFAULT_CHANNEL, startApiRelay, type ApiRelay } from "../../helpers/api-relay.js";
import { hookFixture } from "../../fixtures/claude-code.js";
import { until } from "../../helpers/until.js";

const PROD = "C0PRODDEPLOY";
const PROD_BACKUP = "C0PRODBACKUP";
const SANDBOX = "C0SANDBOX01";
const LENIENT_DM = "D0LENIENT01";
const ONCALL = "S0ONCALL01";
const LEADS = "S0LEADS001";
const ALICE_EMAIL = "alice@example.com";

/** Route 1: who may answer a deploy. */
const DEPLOY = {
  match: { labels: { env: "deploy" } },
  approvers: { users: [ALICE.id, BOB.id], usergroups: [ONCALL] },
  quorum: 2,
  selfApproval: "deny",
  reminders: [60, 600],
  escalate: [
    { after: 120, usergroups: [LEADS] },
    { after: 900, users: [CAROL.id] },
  ],
};

/** Slack's people: Carol is on call; Slack answers unless `slackDown`. */
let slackDown = false;
const directory: PeopleDirectory = {
  usergroupMembers: async (group) => {
    if (slackDown) throw new DirectoryUnavailableError("timed out");
    return new Set(group === ONCALL ? [CAROL.id] : []);
  },
  userIdByEmail: async (email) => {
    if (slackDown) throw new DirectoryUnavailableError("timed out");
    return email === ALICE_EMAIL ? ALICE.id : undefined;
  },
  homeTeamId: async () => "T0HOME0001",
};

let relay: ApiRelay;
beforeEach(async () => {
  slackDown = false;
  relay = await startApiRelay({
    routes: [
      Route.parse({ match: { token: "ci-bot", tool: "Bash", labels: { env: "prod" } }, channel: PROD, channels: [PROD_BACKUP], timeoutSeconds: 1800 }),
      Route.parse(DEPLOY),
    ],
    defaultChannels: [SANDBOX],
    policy: { alwaysAllow: "tool", selfApproval: "deny", reminders: [30] },
    directory,
  });
});
afterEach(async () => {
  await relay.close();
});

async function refusedOnChannel(path: string, json: unknown, message: string) {
  const response = await relay.call(path, { json });
  expect(response.status).toBe(400);
  expect(response.body.error.code).toBe("relay_invalid_request");
  expect(response.body.error.details).toEqual([{ path: "channel", message }]);
  await relay.service.idle();
  expect(relay.stored).toEqual([]);
  expect(relay.messenger.posts).toEqual([]);
}

describe("a route's channel is binding", () => {
  it("posts a matched request that names no channel to its route's channel, under the route's timeout", async () => {
    const { timeoutSeconds: _, ...body } = bodies.bashPermission({ labels: { env: "prod" } });
    const response = await relay.call("/v1/requests", { json: body });
    expect(response.status).toBe(201);
    expect(relay.stored[0]).toMatchObject({ channel: PROD, policy: { alwaysAllow: "tool", route: "routes.0" } });
    expect(relay.stored[0]!.expiresAt - relay.stored[0]!.createdAt).toBe(1800 * 1000);
    await relay.service.idle();
    expect(relay.messenger.posts.map((p) => p.channel)).toEqual([PROD]);
  });

  it("lets a matched request name one of its route's channels", async () => {
    const response = await relay.call("/v1/requests", { json: bodies.bashPermission({ labels: { env: "prod" }, channel: PROD_BACKUP }) });
    expect(response.status).toBe(201);
    expect(relay.stored[0]!.channel).toBe(PROD_BACKUP);
  });

  it("refuses a matched request that names another channel: 400 on channel", async () => {
    await refusedOnChannel(
      "/v1/requests",
      bodies.bashPermission({ labels: { env: "prod" }, channel: LENIENT_DM }),
      `the relay's route routes.0 allows only ${PROD}, ${PROD_BACKUP}`,
    );
  });

  it("limits a request no route matches to the default route's channels and the default channel", async () => {
    await refusedOnChannel(
      "/v1/requests",
      bodies.bashPermission({ labels: { env: "staging" }, channel: LENIENT_DM }),
      `the relay's route default allows only ${DEFAULT_CHANNEL}, ${SANDBOX}`,
    );
    const response = await relay.call("/v1/requests", { json: bodies.bashPermission({ labels: { env: "staging" }, channel: SANDBOX }) });
    expect(response.status).toBe(201);
    expect(relay.stored[0]).toMatchObject({ channel: SANDBOX, policy: { route: "default" } });
  });

  it("binds the Claude Code hook's ?channel= too", async () => {
    const response = await relay.call(`/v1/hooks/claude-code?channel=${LENIENT_DM}`, { json: hookFixture("permission-request") });
    expect(response.status).toBe(400);
    expect(response.body.error.details).toEqual([{ path: "channel", message: `the relay's route default allows only ${DEFAULT_CHANNEL}, ${SANDBOX}` }]);
    await relay.service.idle();
    expect(relay.stored).toEqual([]);
  });
});

describe("labels on a Claude Code hook call", () => {
  it("take the hook URL's label.<key>= parameters, match a route by them and bind its channel", async () => {
    const held = relay.call(`/v1/hooks/claude-code?timeout=60&label.env=prod`, { json: hookFixture("permission-request") });
    await until(() => relay.stored.length > 0);
    const record = relay.stored[0]!;
    expect(record).toMatchObject({ channel: PROD, body: { labels: { env: "prod" } }, policy: { route: "routes.0" } });
    await relay.service.answer(record.id, { behavior: "deny", message: "not today" }, ALICE);
    expect((await held).status).toBe(200);
  });

  it("refuses a malformed label parameter with a 400 naming it", async () => {
    const response = await relay.call(`/v1/hooks/claude-code?label.my%20env=prod`, { json: hookFixture("permission-request") });
    expect(response.status).toBe(400);
    expect(response.body.error.details).toEqual([
      { path: "label.my env", message: "label keys must be 1 to 64 letters (a–z), digits, '.', '_', '-', ':' or '/' (found \" \", U+0020)" },
    ]);
    expect(relay.stored).toEqual([]);
  });
});

describe("labels on a request", () => {
  it("are stored with the request's body", async () => {
    const response = await relay.call("/v1/requests", { json: bodies.stepGate({ labels: { env: "staging", "team/owner": "payments" } }) });
    expect(response.status).toBe(201);
    expect(relay.stored[0]!.body.labels).toEqual({ env: "staging", "team/owner": "payments" });
  });

  it.each([
    ["a key with a space", { "my env": "prod" }, ["labels.my env"]],
    ["a key over 64 characters", { ["k".repeat(65)]: "v" }, [`labels.${"k".repeat(65)}`]],
    ["a value over 256 characters", { env: "v".repeat(257) }, ["labels.env"]],
    ["a value that is not a string", { env: 1 }, ["labels.env"]],
    ["more than 20 labels", Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`k${i}`, "v"])), ["labels"]],
  ])("refuses %s: 400 naming the label", async (_, labels, paths) => {
    const response = await relay.call("/v1/requests", { json: bodies.stepGate({ labels }) });
    expect(response.status).toBe(400);
    expect(response.body.error.details.map((d: { path: string }) => d.path)).toEqual(paths);
    await relay.service.idle();
    expect(relay.stored).toEqual([]);
  });
});

async function refused(json: unknown, status: number, code: string) {
  const response = await relay.call("/v1/requests", { json });
  expect(response.status).toBe(status);
  expect(response.body.error.code).toBe(code);
  await relay.service.idle();
  expect(relay.stored).toEqual([]);
  expect(relay.messenger.posts).toEqual([]);
  return response;
}

const deploy = (over: Record<string, unknown> = {}) => bodies.bashPermission({ labels: { env: "deploy" }, ...over });

describe("a route's policy is kept on the stored record", () => {
  it("with its approvers, quorum, selfApproval, schedule and the requester; what the 300 s deadline leaves no time for is dropped", async () => {
    const response = await relay.call("/v1/requests", { json: deploy({ requestedBy: { slackUserId: CAROL.id } }) });
    expect(response.status).toBe(201);
    expect(relay.stored[0]!.policy).toEqual({
      alwaysAllow: "tool",
      route: "routes.1",
      approvers: { users: [ALICE.id, BOB.id], usergroups: [ONCALL] },
      quorum: 2,
      selfApproval: "deny",
      requestedBy: { id: CAROL.id },
      reminders: [60],
      escalate: [{ after: 120, usergroups: [LEADS] }],
    });
  });

  it("a request no route matches takes the default route's policy", async () => {
    const response = await relay.call("/v1/requests", { json: bodies.stepGate() });
    expect(response.status).toBe(201);
    expect(relay.stored[0]!.policy).toEqual({ alwaysAllow: "tool", route: "default", selfApproval: "deny", reminders: [30] });
  });

  it("resolves a requestedBy email to the person's Slack user id", async () => {
    const response = await relay.call("/v1/requests", { json: bodies.stepGate({ requestedBy: { email: ALICE_EMAIL } }) });
    expect(response.status).toBe(201);
    expect(relay.stored[0]!.policy?.requestedBy).toEqual({ id: ALICE.id, email: ALICE_EMAIL });
  });

  it("keeps the narrower approvers and the higher quorum a request asks for; a group member counts as one of the route's", async () => {
    const response = await relay.call("/v1/requests", { json: deploy({ approvers: { users: [ALICE.id, BOB.id, CAROL.id] }, quorum: 3 }) });
    expect(response.status).toBe(201);
    expect(relay.stored[0]!.policy).toMatchObject({ approvers: { users: [ALICE.id, BOB.id, CAROL.id] }, quorum: 3 });
  });
});

describe("a request may only narrow its route's policy", () => {
  it.each([
    ["a user who is not an approver", deploy({ approvers: { users: [ALICE.id, MALLORY.id] } }), "approvers.users.1"],
    ["a user group the route does not list", deploy({ approvers: { usergroups: [LEADS] } }), "approvers.usergroups.0"],
    ["an approver list that names nobody", deploy({ approvers: {} }), "approvers"],
    ["fewer approvers than the route's quorum", deploy({ approvers: { users: [ALICE.id] } }), "approvers"],
    ["a quorum below the route's", deploy({ quorum: 1 }), "quorum"],
    ["a quorum its approvers cannot reach", bodies.stepGate({ approvers: { users: [ALICE.id] }, quorum: 2 }), "quorum"],
    ["a quorum on a kind that takes the first answer", bodies.askUserQuestion({ quorum: 2 }), "quorum"],
    ["an email Slack knows nobody by", bodies.stepGate({ requestedBy: { email: "mallory@example.com" } }), "requestedBy.email"],
  ])("refuses %s: 400 naming the field, nothing stored or posted", async (_, json, path) => {
    const response = await refused(json, 400, "relay_invalid_request");
    expect(response.body.error.details.map((d: { path: string }) => d.path)).toEqual([path]);
  });

  it.each([
    ["a user id that is a name", { approvers: { users: ["alice"] } }, "approvers.users.0"],
    ["a group id that is a handle", { approvers: { usergroups: ["@oncall"] } }, "approvers.usergroups.0"],
    ["a quorum of zero", { quorum: 0 }, "quorum"],
    ["a requestedBy with both forms", { requestedBy: { slackUserId: ALICE.id, email: ALICE_EMAIL } }, "requestedBy"],
    ["a requestedBy email that is not one", { requestedBy: { email: "alice" } }, "requestedBy.email"],
  ])("refuses %s by the schema: 400 naming the field", async (_, over, path) => {
    const response = await refused(bodies.stepGate(over), 400, "relay_invalid_request");
    expect(response.body.error.details.map((d: { path: string }) => d.path)).toContain(path);
  });
});

describe("when Slack cannot be asked", () => {
  it("a requestedBy email gets 503 relay_slack_unavailable with Retry-After, and nothing is created", async () => {
    slackDown = true;
    const response = await refused(bodies.stepGate({ requestedBy: { email: ALICE_EMAIL } }), 503, "relay_slack_unavailable");
    expect(response.headers.get("retry-after")).toBe("5");
    expect(relay.logs.some((line) => line.includes("Slack could not be asked about a new request"))).toBe(true);
  });

  it("so does narrowing to a person the route lists only through a group", async () => {
    slackDown = true;
    const response = await refused(deploy({ approvers: { users: [BOB.id, CAROL.id] } }), 503, "relay_slack_unavailable");
    expect(response.headers.get("retry-after")).toBe("5");
  });

  it("a request that needs no lookup is created as usual", async () => {
    slackDown = true;
    const response = await relay.call("/v1/requests", { json: deploy({ requestedBy: { slackUserId: CAROL.id }, approvers: { users: [ALICE.id, BOB.id] } }) });
    expect(response.status).toBe(201);
  });
});

describe("requestedBy on a Claude Code hook call", () => {
  it("takes the hook URL's requestedBy= parameter, a Slack user id or an email", async () => {
    const held = relay.call(`/v1/hooks/claude-code?timeout=60&requestedBy=${encodeURIComponent(ALICE_EMAIL)}`, { json: hookFixture("pre-tool-use") });
    await until(() => relay.stored.length > 0);
    const record = relay.stored[0]!;
    expect(record.body.requestedBy).toEqual({ email: ALICE_EMAIL });
    expect(record.policy?.requestedBy).toEqual({ id: ALICE.id, email: ALICE_EMAIL });
    await relay.service.answer(record.id, { reply: "n" }, BOB);
    expect((await held).status).toBe(200);
  });

  it("refuses a requestedBy parameter that is neither: 400 naming it", async () => {
    const response = await relay.call(`/v1/hooks/claude-code?requestedBy=alice`, { json: hookFixture("pre-tool-use") });
    expect(response.status).toBe(400);
    expect(response.body.error.details).toEqual([{ path: "requestedBy", message: "must be a Slack user id such as U0123ABCD or an email address" }]);
    expect(relay.stored).toEqual([]);
  });

  it("denies the call, asking no one, when Slack cannot say whose email it is; a caller that retries gets the 503", async () => {
    slackDown = true;
    const path = `/v1/hooks/claude-code?requestedBy=${encodeURIComponent(ALICE_EMAIL)}`;
    const denied = await relay.call(path, { json: hookFixture("pre-tool-use") });
    expect(denied.status).toBe(200);
    expect(denied.body.hookSpecificOutput).toMatchObject({ permissionDecision: "deny", permissionDecisionReason: SLACK_UNAVAILABLE_DENY });
    const retried = await relay.call(path, { json: hookFixture("pre-tool-use"), headers: { [RETRIES_UNAVAILABLE_HEADER]: "1" } });
    expect(retried.status).toBe(503);
    expect(retried.body.error.code).toBe("relay_slack_unavailable");
    expect(relay.stored).toEqual([]);
  });
});
