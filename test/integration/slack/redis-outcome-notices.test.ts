/**
 * Outcome notices across relay instances on one Redis (docs/architecture.md §7, everyone
 * told): the step that ends a request queues its thread reply and its DM in
 * Redis, so whichever instances sweep, each part goes out once; and what an
 * instance ended just before it stopped is told by the instance that comes
 * after. The real messenger sends them, Slack's Web API played by the stand-in.
 */
import { describe, expect, it } from "vitest";
import { Action, encodeButton } from "../../../src/slack/ids.js";
import { ALICE, BOB } from "../../fixtures/people.js";
import { onPosts, sweepTogether as sweepAll, useRelaysOnRedis } from "../../helpers/redis-relays.js";
import type { SlackRelay } from "../../helpers/slack-relay.js";
import { blockAction, CHANNEL } from "../../helpers/slack.js";
import type { SlackScript } from "../../helpers/slack-script.js";

const relays = useRelaysOnRedis();
const forBob = { kind: "permission", toolName: "Bash", input: { command: "make deploy" }, requestedBy: { slackUserId: BOB.id } };

/** Answers every chat.postMessage with a ts of its own, chat.update, and the permalink a DM links to. */
function stubSlack(api: SlackScript, requests: number): void {
  onPosts(api, requests * 3)
    .on("chat.update", { ok: true }, requests)
    .on(
      "chat.getPermalink",
      (args) => ({ ok: true, channel: args.channel, permalink: `https://acme.slack.com/archives/${String(args.channel)}/p1` }),
      requests,
    );
}

async function allow(relay: SlackRelay, ts: string, id: string): Promise<void> {
  const response = await relay.post(blockAction({ actionId: Action.allow, value: encodeButton({ r: id }), ts, user: ALICE }));
  expect(response.status).toBe(200);
}

/** Runs the notice sweep on every instance at once, `rounds` times over; returns how many were sent in all. */
const sweepTogether = (instances: SlackRelay[], rounds = 3) => sweepAll(instances, (relay) => relay.service.sweepNotices(), rounds);

/** Who was told what: `thread <ts>` for a thread reply, `dm <user>` for a DM. */
function told(api: SlackScript): string[] {
  return api
    .callsTo("chat.postMessage")
    .filter((call) => call.args.thread_ts !== undefined || call.args.channel === BOB.id)
    .map((call) => (call.args.thread_ts === undefined ? `dm ${String(call.args.channel)}` : `thread ${String(call.args.thread_ts)}`));
}

describe("outcome notices with two instances on one Redis", () => {
  it("requests answered on one instance are told once each, in the thread and to the requester, whichever instances sweep", async () => {
    const a = await relays.start();
    const b = await relays.start();
    stubSlack(a.api, 5);
    const records = await Promise.all(Array.from({ length: 5 }, () => a.create(forBob)));
    for (const record of records) await allow(a, record.slack!.ts, record.id);
    await a.settle();

    expect(await sweepTogether([a, b])).toBe(10);
    expect(told(a.api).sort()).toEqual(records.flatMap((record) => [`thread ${record.slack!.ts}`, `dm ${BOB.id}`]).sort());
    expect(a.api.callsTo("chat.getPermalink")).toHaveLength(5);
    await Promise.all([a.settle(), b.settle()]);
  });

  it("a request that ended on an instance that then stopped is told by the instance that comes after", async () => {
    const before = await relays.start();
    onPosts(before.api, 1).on("chat.update");
    const record = await before.create(forBob);
    await before.service.cancel(record.id, "agent");
    await relays.stop(before);

    const after = await relays.start();
    stubSlack(after.api, 1);
    expect(await sweepTogether([after], 1)).toBe(2);
    expect(told(after.api)).toEqual([`thread ${record.slack!.ts}`, `dm ${BOB.id}`]);
    expect(after.api.callsTo("chat.postMessage").find((call) => call.args.thread_ts !== undefined)?.args).toMatchObject({
      channel: CHANNEL,
      text: expect.stringMatching(/^🚫 Cancelled by agent · /),
    });
  });
});
