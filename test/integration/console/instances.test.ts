/**
 * The console's live stream across relay instances on one real Redis (two
 * relays as `approval-relay serve` runs them, one Slack stand-in): what
 * happens on one instance (a create, its Slack post, an approval towards a
 * quorum, +30 min, the end) reaches a console open on the other within a
 * second, by Redis pub/sub; and an answer given in the console on one
 * instance updates the Slack message and ends the request everywhere.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Action } from "../../../src/slack/ids.js";
import { ALICE, BOB } from "../../fixtures/people.js";
import { configFiles } from "../../helpers/config-files.js";
import { consoleStream, cookieOf, signInWithSlack } from "../../helpers/console.js";
import { CLIENT_ID, CLIENT_SECRET } from "../../helpers/slack-openid.js";
import { agentCall, startFullRelay, type FullRelay } from "../../helpers/full-relay.js";
import { connectTestRedis, deleteKeysUnder, REDIS_TEST_URL, uniquePrefix } from "../../helpers/redis.js";
import { startSlackWebApi, type SlackWebApiStandIn } from "../../helpers/slack-web-api.js";

const ADMIN = "tok_console_admin_0123456789";
const PUBLIC_URL = "https://relay.example.test";
const configFile = configFiles("yaml");
let prefix: string;
let slack: SlackWebApiStandIn;
const relays: FullRelay[] = [];

beforeEach(async () => {
  prefix = uniquePrefix();
  slack = await startSlackWebApi();
});
afterEach(async () => {
  for (const relay of relays.splice(0)) await relay.close();
  await slack.close();
  const admin = connectTestRedis();
  await deleteKeysUnder(admin, prefix);
  await admin.quit();
});

async function instance(policy: string, env: Record<string, string> = {}): Promise<FullRelay> {
  const relay = await startFullRelay({
    slack,
    env: { REDIS_URL: REDIS_TEST_URL, REDIS_PREFIX: prefix, RELAY_ADMIN_TOKENS: `ops:${ADMIN}`, RELAY_CONFIG_FILE: configFile(policy), ...env },
  });
  relays.push(relay);
  return relay;
}

/** A read-only console session (an admin token) on `relay`, with its stream open. */
async function openConsole(relay: FullRelay) {
  const reply = await fetch(`${relay.url}/console/api/signin/admin`, {
    method: "POST",
    headers: { "content-type": "application/json", origin: relay.url },
    body: JSON.stringify({ token: ADMIN }),
  });
  expect(reply.status).toBe(200);
  return consoleStream(relay.url, cookieOf(reply, "relay_console")!);
}

describe("the console's stream across instances (Redis)", () => {
  it("a create, its Slack post, an approval, +30 min and the end on instance A reach a console open on instance B", async () => {
    const a = await instance(`default:\n  quorum: 2\n  approvers: { users: [${ALICE.id}, ${BOB.id}] }\n`);
    const b = await instance(`default:\n  quorum: 2\n  approvers: { users: [${ALICE.id}, ${BOB.id}] }\n`);
    const stream = await openConsole(b);
    const created = await agentCall(a.url, "/v1/requests", { body: { kind: "step_gate", toolName: "Bash", input: { command: "make deploy" } } });
    const id = String(created.body!.id);
    await stream.next((r) => r.id === id && r.status === "pending");
    const posted = await a.message(0);
    await stream.next((r) => r.id === id && typeof r.slackUrl === "string");

    await a.click(posted, Action.stepYes, ALICE);
    const approved = await stream.next((r) => r.id === id && Array.isArray(r.approvals) && r.approvals.length === 1);
    expect(approved).toMatchObject({ status: "pending", approvals: [{ person: { id: ALICE.id } }] });

    const before = Date.parse(String(approved.expiresAt));
    await a.click(posted, Action.moreTime, ALICE);
    await stream.next((r) => r.id === id && Date.parse(String(r.expiresAt)) > before);

    await a.click(posted, Action.stepYes, BOB);
    await stream.next((r) => r.id === id && r.status === "answered");
    await stream.close();
    expect([...a.errors(), ...b.errors()]).toEqual([]);
  });

  it("an answer in the console on B updates the Slack message A posted; a click in Slack on A ends the request in B's console", async () => {
    const policy = `default:\n  approvers: { users: [${ALICE.id}] }\n`;
    const signIn = { SLACK_CLIENT_ID: CLIENT_ID, SLACK_CLIENT_SECRET: CLIENT_SECRET, RELAY_PUBLIC_URL: PUBLIC_URL };
    const a = await instance(policy, signIn);
    const b = await instance(policy, signIn);
    const alice = await signInWithSlack(b, PUBLIC_URL, ALICE);
    const stream = await consoleStream(b.url, alice.cookie);

    const first = await agentCall(a.url, "/v1/requests", { body: { kind: "step_gate", toolName: "Bash", input: { command: "make first" } } });
    const firstPost = await a.message(0);
    const answer = await alice.call(`/console/api/requests/${String(first.body!.id)}/answer`, { decision: { reply: "y" } });
    expect(answer.status).toBe(200);
    expect(JSON.stringify(await a.updated(firstPost))).toContain(ALICE.id);

    const second = await agentCall(a.url, "/v1/requests", { body: { kind: "step_gate", toolName: "Bash", input: { command: "make second" } } });
    const secondPost = await a.message(1);
    await stream.next((r) => r.id === second.body!.id && r.status === "pending");
    await a.click(secondPost, Action.stepNo, ALICE);
    await stream.next((r) => r.id === second.body!.id && r.status === "answered");
    await stream.close();
    expect([...a.errors(), ...b.errors()]).toEqual([]);
  });
});
