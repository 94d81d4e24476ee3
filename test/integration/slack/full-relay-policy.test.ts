/**
 * The operator's policy from end to end (docs/architecture.md §7): the whole relay as
 * `approval-relay serve` runs it (src/main.ts), with a RELAY_CONFIG_FILE in
 * YAML, the agent API over HTTP and Slack's Web API on the loopback
 * stand-in (which also answers user group members and email lookups). A
 * route's approvers and quorum, and the default route's policy, reach the
 * stored request and its message; the thread is reminded; a click from
 * someone the policy does not name is refused and told why; the approvers'
 * clicks answer the agent.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Action } from "../../../src/slack/ids.js";
import { ALICE, BOB, CAROL, DAVE } from "../../fixtures/people.js";
import { ONCALL } from "../../fixtures/policies.js";
import { configFiles } from "../../helpers/config-files.js";
import { AGENT_TOKEN, startFullRelay, type FullRelay, type PostedMessage } from "../../helpers/full-relay.js";
import { hasNoButtons } from "../../helpers/slack-relay.js";
import { CHANNEL } from "../../helpers/slack.js";

const BOB_EMAIL = "bob@example.com";
const CONFIG = `
routes:
  - match: { labels: { env: prod } }
    approvers: { users: [${ALICE.id}, ${CAROL.id}] }
    quorum: 2
    reminders: [1]
default:
  approvers: { usergroups: [${ONCALL}] }
  selfApproval: deny
`;

const writeConfig = configFiles("yaml");
let relay: FullRelay;
beforeEach(async () => {
  relay = await startFullRelay({ env: { RELAY_CONFIG_FILE: writeConfig(CONFIG) } });
  relay.slack.usergroups.set(ONCALL, [BOB.id, CAROL.id]);
  relay.slack.emails.set(BOB_EMAIL, BOB.id);
});
afterEach(async () => {
  expect(relay.errors()).toEqual([]);
  expect(relay.slack.problems).toEqual([]);
  await relay.close();
});

/** The agent API, as the agent token calls it. */
async function api(path: string, body?: unknown): Promise<Record<string, unknown>> {
  const response = await fetch(`${relay.url}${path}`, {
    method: body === undefined ? "GET" : "POST",
    headers: { authorization: `Bearer ${AGENT_TOKEN.token}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  expect(response.status).toBeLessThan(300);
  return (await response.json()) as Record<string, unknown>;
}

const input = { command: "make deploy" };

/** Creates a request over HTTP and returns its id and message, once posted. */
async function ask(fields: Record<string, unknown>): Promise<{ id: string; message: PostedMessage }> {
  const { id } = (await api("/v1/requests", { kind: "permission", toolName: "Bash", input, ...fields })) as { id: string };
  return { id, message: await relay.message(0) };
}

/** The ephemeral notice the relay sent `user`, once sent. */
async function toldTo(user: string): Promise<string> {
  return String((await relay.slack.waitFor("chat.postEphemeral", (args) => args.user === user)).args.text);
}

describe("the config file's policy, end to end", () => {
  it("a production request needs two of the route's approvers: shown in its message, reminded in its thread, others refused", async () => {
    const { id, message } = await ask({ labels: { env: "prod" } });
    expect(await api(`/v1/requests/${id}`)).toMatchObject({ status: "pending", slack: { channel: CHANNEL, ts: message.ts } });
    expect((await relay.service.get(id))?.policy).toMatchObject({ route: "routes.0", approvers: { users: [ALICE.id, CAROL.id] }, quorum: 2 });
    expect(JSON.stringify(message.blocks)).toContain(`Who may answer: <@${ALICE.id}>, <@${CAROL.id}> · needs 2 approvals · any deny ends it`);

    await relay.click(message, Action.allow, BOB);
    expect(await toldTo(BOB.id)).toContain(`Only <@${ALICE.id}>, <@${CAROL.id}> can answer this request.`);
    const reminder = await relay.slack.waitFor("chat.postMessage", (args) => args.thread_ts === message.ts);
    expect(String(reminder.args.text)).toContain(`<@${ALICE.id}>, <@${CAROL.id}>: this request is still waiting for an answer.`);
    expect(await api(`/v1/requests/${id}`)).toMatchObject({ status: "pending" });

    const waiting = api(`/v1/requests/${id}?wait=10`);
    await relay.click(message, Action.allow, ALICE);
    expect(await toldTo(ALICE.id)).toBe("Your approval counted: 1 of 2. Waiting for 1 more.");
    await relay.click(message, Action.allow, CAROL);
    const answered = await waiting;
    expect(answered).toMatchObject({ status: "answered", decision: { behavior: "allow", updatedInput: input }, answeredBy: { id: CAROL.id } });
    expect((answered.approvals as Array<{ person: { id: string } }>).map((approval) => approval.person.id)).toEqual([ALICE.id, CAROL.id]);
    // The message was shown with Alice's approval first; then ended, with both.
    const ended = await relay.slack.waitFor("chat.update", (args) => args.ts === message.ts && hasNoButtons(args.blocks));
    expect(JSON.stringify(ended.args.blocks)).toContain(`Approvals 2 of 2: <@${ALICE.id}>, <@${CAROL.id}>`);
  });

  it("a request no route takes gets the default's policy: its user group answers, but not the person it is for, nor an outsider", async () => {
    const { id, message } = await ask({ requestedBy: { email: BOB_EMAIL } });
    expect((await relay.service.get(id))?.policy).toMatchObject({
      route: "default",
      approvers: { usergroups: [ONCALL] },
      selfApproval: "deny",
      requestedBy: { id: BOB.id, email: BOB_EMAIL },
    });
    expect(JSON.stringify(message.blocks)).toContain(`Who may answer: <!subteam^${ONCALL}> · not <@${BOB.id}>, who asked for it`);

    await relay.click(message, Action.allow, BOB);
    expect(await toldTo(BOB.id)).toContain("so you cannot answer it yourself");
    await relay.click(message, Action.allow, DAVE);
    expect(await toldTo(DAVE.id)).toContain(`Only <!subteam^${ONCALL}> can answer this request.`);
    expect(await api(`/v1/requests/${id}`)).toMatchObject({ status: "pending" });

    await relay.click(message, Action.deny, CAROL);
    expect(await api(`/v1/requests/${id}?wait=10`)).toMatchObject({ status: "answered", decision: { behavior: "deny" }, answeredBy: { id: CAROL.id } });
    expect(relay.slack.callsTo("usergroups.users.list").map((call) => call.args.usergroup)).toContain(ONCALL);
  });
});
