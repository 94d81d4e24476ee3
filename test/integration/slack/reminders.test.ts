/**
 * Reminders and escalations (docs/architecture.md §7) through the real messenger, Slack's
 * Web API played by the Slack stand-in: a route that reminds after five minutes and
 * escalates to the SRE leads after ten, the relay's clock moved forward and
 * the service's sweep run by hand. What the approvers see in the request's
 * thread and in the escalation channel, who may answer once it escalated,
 * silence once the request has ended, a rate-limited reminder sent again
 * after Slack's Retry-After, and an escalation whose channel post Slack
 * refused once posting each of its messages exactly once.
 */
import { describe, expect, it } from "vitest";
import { parseConfigFile } from "../../../src/config/file.js";
import { Action, encodeButton } from "../../../src/slack/ids.js";
import type { Person } from "../../../src/protocol/request-view.js";
import { useSlackRelay, type SlackRelay } from "../../helpers/slack-relay.js";
import { blockAction, CHANNEL, MESSAGE_TS } from "../../helpers/slack.js";
import { ALICE, BOB, CAROL } from "../../fixtures/people.js";
import { LEADS, ONCALL } from "../../fixtures/policies.js";

const ESCALATION_CHANNEL = "C0SRELEADS";
const PERMALINK = `https://acme.slack.com/archives/${CHANNEL}/p1700000000000100`;
const MINUTE = 60_000;

const { routes } = parseConfigFile(`
routes:
  - match: { labels: { policy: two-approvals } }
    approvers: { users: [${ALICE.id}, ${BOB.id}, ${CAROL.id}] }
    quorum: 2
    reminders: [300]
  - match: { token: ci-bot }
    approvers: { users: [${ALICE.id}], usergroups: [${ONCALL}] }
    timeoutSeconds: 1800
    reminders: [300]
    escalate: [{ after: 600, usergroups: [${LEADS}], channel: ${ESCALATION_CHANNEL} }]
`);

const stepGate = { kind: "step_gate", toolName: "Bash", input: { command: "terraform apply -target=module.db" } };
const members = (...ids: string[]) => ({ ok: true, users: ids });

let relay: SlackRelay;
useSlackRelay((started) => (relay = started), { routes });

const posts = () =>
  relay.api
    .callsTo("chat.postMessage")
    .slice(1)
    .map((call) => call.args);

async function click(id: string, user: Person) {
  const response = await relay.post(blockAction({ actionId: Action.stepYes, value: encodeButton({ r: id }), user }));
  expect(response.status).toBe(200);
  await relay.settle();
}

/**
 * Moves the relay's clock `ms` further (the few real milliseconds a test
 * takes are far below the seconds between entries) and runs one sweep.
 */
async function sweepAfter(ms: number): Promise<number> {
  relay.advance(ms);
  return relay.service.sweepReminders();
}

async function createPosted(body: unknown = stepGate) {
  relay.api.onPost();
  const record = await relay.create(body);
  expect(record.slack).toEqual({ channel: CHANNEL, ts: MESSAGE_TS });
  return record;
}

describe("reminders", () => {
  it("nothing is sent before the reminder is due", async () => {
    await createPosted();
    expect(await sweepAfter(5 * MINUTE - 1_000)).toBe(0);
    expect(posts()).toEqual([]);
    relay.api.done();
  });

  it("five minutes after posting, the thread mentions the approvers and says how long is left", async () => {
    const record = await createPosted();
    relay.api.onPost("1700000300.000200");
    expect(await sweepAfter(5 * MINUTE)).toBe(1);
    expect(posts()).toEqual([{ channel: CHANNEL, thread_ts: MESSAGE_TS, text: expect.any(String), unfurl_links: "false", unfurl_media: "false" }]);
    const text = posts()[0]!.text as string;
    expect(text).toMatch(new RegExp(`^⏰ <@${ALICE.id}>, <!subteam\\^${ONCALL}>: this request is still waiting for an answer\\. 25 minutes left: `));
    expect(text).toContain(`<!date^${Math.floor(record.expiresAt / 1000)}^`);
    expect(await relay.service.sweepReminders()).toBe(0);
    relay.api.done();
  });

  it("counts from when the message was posted: a post Slack held back 40 s reminds 40 s later", async () => {
    relay.api.on("chat.postMessage", { status: 429, headers: { "retry-after": "40" } });
    await createPosted();
    expect(relay.sleeps.reduce((sum, ms) => sum + ms, 0)).toBeGreaterThan(39_000);
    expect(await sweepAfter(5 * MINUTE - 1_000)).toBe(0);
    relay.api.onPost("1700000340.000200");
    expect(await sweepAfter(1_000)).toBe(1);
    relay.api.done();
  });

  it("after one of two approvals, the reminder mentions only those who have not approved and says 1 of 2 so far", async () => {
    const record = await createPosted({ ...stepGate, labels: { policy: "two-approvals" } });
    relay.api.on("chat.postEphemeral").on("chat.update");
    await click(record.id, ALICE);
    relay.api.onPost("1700000300.000200");
    expect(await sweepAfter(5 * MINUTE)).toBe(1);
    expect(posts()[0]?.text).toMatch(
      new RegExp(`^⏰ <@${BOB.id}>, <@${CAROL.id}>: this request is still waiting for an answer\\. 1 of 2 approvals so far\\. 5 minutes left: `),
    );
    relay.api.done();
  });

  it("a reminder Slack rate-limits is sent again once its Retry-After has passed, not before", async () => {
    await createPosted();
    relay.api.on("chat.postMessage", { status: 429, headers: { "retry-after": "30" } });
    expect(await sweepAfter(5 * MINUTE)).toBe(0);
    expect(await sweepAfter(20_000)).toBe(0);
    expect(posts()).toHaveLength(1);
    relay.api.onPost("1700000330.000200");
    expect(await sweepAfter(11_000)).toBe(1);
    expect(posts()).toHaveLength(2);
    expect(posts()[1]).toMatchObject({ channel: CHANNEL, thread_ts: MESSAGE_TS });
    relay.api.done();
  });

  it("nothing is sent once the request has ended", async () => {
    const record = await createPosted();
    relay.api.on("chat.update");
    await click(record.id, ALICE);
    expect((await relay.service.get(record.id))?.status).toBe("answered");
    expect(await sweepAfter(11 * MINUTE)).toBe(0);
    expect(posts()).toEqual([]);
    relay.api.done();
  });
});

describe("escalation", () => {
  it("at ten minutes the thread mentions the leads and the escalation channel gets a link to the request", async () => {
    await createPosted();
    relay.api.onPost("1700000300.000200");
    expect(await sweepAfter(5 * MINUTE)).toBe(1);
    relay.api
      .onPost("1700000600.000200")
      .on("chat.getPermalink", { ok: true, channel: CHANNEL, permalink: PERMALINK })
      .onPost("1700000600.000300", ESCALATION_CHANNEL);
    expect(await sweepAfter(5 * MINUTE)).toBe(2);

    const [, escalated, elsewhere] = posts();
    expect(escalated).toMatchObject({ channel: CHANNEL, thread_ts: MESSAGE_TS });
    expect(escalated?.text).toMatch(
      new RegExp(`^🔺 Escalated: <!subteam\\^${LEADS}> may answer this request now\\. Also posted in <#${ESCALATION_CHANNEL}>\\. 20 minutes left: `),
    );
    expect(relay.api.callsTo("chat.getPermalink")[0]?.args).toEqual({ channel: CHANNEL, message_ts: MESSAGE_TS });
    expect(elsewhere?.channel).toBe(ESCALATION_CHANNEL);
    expect(elsewhere?.thread_ts).toBeUndefined();
    expect(JSON.stringify(elsewhere?.blocks)).toContain(`<${PERMALINK}|Open the request>`);
    expect(elsewhere?.text).toBe("🔺 Waiting for an answer: Proposed action: Bash: terraform apply -target=module.db");
    relay.api.done();
  });

  it("when Slack refuses the escalation's channel post once, each message is posted exactly once: the post again after the Retry-After, the thread reply never again", async () => {
    await createPosted();
    relay.api
      .on("chat.postMessage", { ok: true, channel: CHANNEL, ts: "1700000600.000200" }, 2)
      .on("chat.getPermalink", { ok: true, channel: CHANNEL, permalink: PERMALINK })
      .on("chat.postMessage", { status: 429, headers: { "retry-after": "20" } });
    expect(await sweepAfter(10 * MINUTE)).toBe(2);
    expect(posts().map((post) => post.channel)).toEqual([CHANNEL, CHANNEL, ESCALATION_CHANNEL]);
    expect(await sweepAfter(10_000)).toBe(0);
    relay.api.on("chat.getPermalink", { ok: true, channel: CHANNEL, permalink: PERMALINK }).onPost("1700000620.000300", ESCALATION_CHANNEL);
    expect(await sweepAfter(11_000)).toBe(1);
    expect(posts().map((post) => post.channel)).toEqual([CHANNEL, CHANNEL, ESCALATION_CHANNEL, ESCALATION_CHANNEL]);
    const [reminded, escalated] = posts();
    expect(reminded?.text).toMatch(/^⏰ /);
    expect(escalated?.text).toMatch(/^🔺 Escalated: /);
    expect(await sweepAfter(10 * MINUTE)).toBe(0);
    relay.api.done();
  });

  it("a member of the escalated group may answer only once the escalation is due", async () => {
    const record = await createPosted();
    relay.api.on("usergroups.users.list", members(ALICE.id)).on("chat.postEphemeral");
    relay.advance(8 * MINUTE);
    await click(record.id, CAROL);
    expect(relay.api.callsTo("chat.postEphemeral")[0]?.args.text).toBe(`🔒 Only <@${ALICE.id}>, <!subteam^${ONCALL}> can answer this request.`);
    expect((await relay.service.get(record.id))?.status).toBe("pending");

    relay.api
      .on("chat.postMessage", { ok: true, channel: CHANNEL, ts: "1700000600.000200" }, 2)
      .on("chat.getPermalink", { ok: true, channel: CHANNEL, permalink: PERMALINK })
      .onPost("1700000600.000300", ESCALATION_CHANNEL);
    expect(await sweepAfter(2 * MINUTE)).toBe(3);
    relay.api.on("usergroups.users.list", members(ALICE.id)).on("usergroups.users.list", members(CAROL.id)).on("chat.update");
    await click(record.id, CAROL);
    const answered = await relay.service.get(record.id);
    expect(answered?.decision).toStrictEqual({ reply: "y" });
    expect(answered?.answeredBy).toEqual(CAROL);
    expect(relay.api.callsTo("usergroups.users.list").map((call) => call.args.usergroup)).toEqual([ONCALL, ONCALL, LEADS]);
    relay.api.done();
  });
});
