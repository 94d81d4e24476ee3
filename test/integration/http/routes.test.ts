/**
 * Approver routes through the real HTTP app (DESIGN §7): a route's channel
 * is binding, on POST /v1/requests and on the Claude Code hook's ?channel=,
 * so an agent cannot send its own request to a lenient person's DM; a
 * refusal is a 400 on `channel` and changes nothing. The matched route is
 * kept on the stored record.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Route } from "../../../src/config-file.js";
import { bodies, DEFAULT_CHANNEL, startApiRelay, type ApiRelay } from "../../helpers/api-relay.js";
import { hookFixture } from "../../fixtures/claude-code.js";
import { until } from "../../helpers/relay-stand-in.js";

const PROD = "C0PRODDEPLOY";
const PROD_BACKUP = "C0PRODBACKUP";
const SANDBOX = "C0SANDBOX01";
const LENIENT_DM = "D0LENIENT01";

let relay: ApiRelay;
beforeEach(async () => {
  relay = await startApiRelay({
    routes: [Route.parse({ match: { token: "ci-bot", tool: "Bash", labels: { env: "prod" } }, channel: PROD, channels: [PROD_BACKUP], timeoutSeconds: 1800 })],
    defaultChannels: [SANDBOX],
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
    await relay.service.answer(record.id, { behavior: "deny", message: "not today" }, { id: "U0ALICE01", name: "alice" });
    expect((await held).status).toBe(200);
  });

  it("refuses a malformed label parameter with a 400 naming it", async () => {
    const response = await relay.call(`/v1/hooks/claude-code?label.my%20env=prod`, { json: hookFixture("permission-request") });
    expect(response.status).toBe(400);
    expect(response.body.error.details).toEqual([{ path: "label.my env", message: "label keys must be 1 to 64 letters, digits, '_', '.', '/' or '-'" }]);
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
