/**
 * Reminders and escalations across relay instances (docs/architecture.md §7): every
 * instance sweeps the same Redis queue, so exactly one sends each reminder
 * and each escalation whatever the number of instances; none is sent for a
 * request that ended on another instance; and what was queued before a
 * restart is sent by the instance that comes after. The real messenger
 * posts them (thread replies, the escalation channel's post), played by the
 * Slack stand-in; each instance's clock is moved past the due time on its own.
 */
import { describe, expect, it } from "vitest";
import { Route } from "../../../src/requests/route-schema.js";
import type { RequestRecord } from "../../../src/requests/model.js";
import { Action, encodeButton } from "../../../src/slack/ids.js";
import { ALICE } from "../../fixtures/people.js";
import { LEADS, ONCALL } from "../../fixtures/policies.js";
import { onPosts, sweepTogether as sweepAll, useRelaysOnRedis } from "../../helpers/redis-relays.js";
import type { SlackRelay } from "../../helpers/slack-relay.js";
import { blockAction, CHANNEL } from "../../helpers/slack.js";
import type { SlackScript } from "../../helpers/slack-script.js";

const ESCALATION_CHANNEL = "C0SRELEADS";
const routes = [
  Route.parse({
    match: { kind: "permission" },
    approvers: { users: [ALICE.id], usergroups: [ONCALL] },
    reminders: [300],
    escalate: [{ after: 420, usergroups: [LEADS], channel: ESCALATION_CHANNEL }],
  }),
];
const REMINDED = `⏰ <@${ALICE.id}>, <!subteam^${ONCALL}>: this request is still waiting for an answer.`;
const ESCALATED = `🔺 Escalated: <!subteam^${LEADS}> may answer this request now.`;

const relays = useRelaysOnRedis();

/** Answers every chat.postMessage (requests, thread replies, escalation posts) with a ts of its own, and the permalink an escalation links to. */
function stubSlack(api: SlackScript, posts: number): void {
  onPosts(api, posts).on(
    "chat.getPermalink",
    (args) => ({ ok: true, channel: args.channel, permalink: `https://acme.slack.com/archives/${String(args.channel)}/p1` }),
    posts,
  );
}

const create = (relay: SlackRelay) => relay.create({ kind: "permission", toolName: "Bash", input: { command: "make deploy" } });

/** Every thread reply Slack was asked for (reminders and escalations), oldest first, as `thread ts: opening`. */
function threadReplies(api: SlackScript): string[] {
  return api
    .callsTo("chat.postMessage")
    .filter((call) => call.args.thread_ts !== undefined)
    .map((call) => `${String(call.args.thread_ts)}: ${String(call.args.text).split(".")[0]}.`);
}

/** Runs the reminder sweep on every instance at once, `rounds` times over; returns how many were sent in all. */
const sweepTogether = (instances: SlackRelay[], rounds = 3) => sweepAll(instances, (relay) => relay.service.sweepReminders(), rounds);

const reminded = (record: RequestRecord) => `${record.slack!.ts}: ${REMINDED}`;
const escalated = (record: RequestRecord) => `${record.slack!.ts}: ${ESCALATED}`;

describe("reminders with two instances on one Redis", () => {
  it("when both sweep past the reminder's time, each request is reminded once, and escalated once when that is due", async () => {
    const a = await relays.start({ routes });
    const b = await relays.start({ routes });
    stubSlack(a.api, 40);
    const records = await Promise.all(Array.from({ length: 10 }, () => create(a)));

    for (const relay of [a, b]) relay.advance(360_000);
    expect(await sweepTogether([a, b])).toBe(10);
    expect(threadReplies(a.api).sort()).toEqual(records.map(reminded).sort());

    for (const relay of [a, b]) relay.advance(120_000);
    expect(await sweepTogether([a, b])).toBe(20);
    expect(threadReplies(a.api).sort()).toEqual([...records.map(reminded), ...records.map(escalated)].sort());
    const channelPosts = a.api.callsTo("chat.postMessage").filter((call) => call.args.channel === ESCALATION_CHANNEL);
    expect(channelPosts).toHaveLength(10);
    expect(a.api.callsTo("chat.getPermalink")).toHaveLength(10);
  });

  it("a request answered on one instance is never reminded by the other", async () => {
    const a = await relays.start({ routes });
    const b = await relays.start({ routes });
    stubSlack(a.api, 5);
    a.api.on("chat.update");
    const record = await create(a);
    await a.post(blockAction({ actionId: Action.allow, value: encodeButton({ r: record.id }), ts: record.slack!.ts }));
    expect((await b.service.get(record.id))?.status).toBe("answered");

    for (const relay of [a, b]) relay.advance(480_000);
    expect(await sweepTogether([b, a])).toBe(0);
    expect(threadReplies(a.api)).toEqual([]);
    await a.settle();
  });

  it("an instance started after a restart sends the reminders queued before it", async () => {
    const before = await relays.start({ routes });
    stubSlack(before.api, 1);
    const record = await create(before);
    await relays.stop(before);

    const after = await relays.start({ routes });
    stubSlack(after.api, 1);
    after.advance(360_000);
    expect(await sweepTogether([after], 1)).toBe(1);
    expect(threadReplies(after.api)).toEqual([reminded(record)]);
    expect(after.api.callsTo("chat.postMessage")[0]?.args.channel).toBe(CHANNEL);
  });
});
