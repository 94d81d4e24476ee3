/**
 * Everyone told (docs/architecture.md §7) through the real messenger and the Bolt HTTP
 * receiver, Slack's Web API played by the stand-in: once a person answers (or
 * nobody does), the service's sweep, run by hand, replies in the request's
 * thread with the outcome, who decided and when, and DMs the person the
 * request was made for (their user id as the channel) with the outcome and
 * the message's permalink. A rate-limited DM goes again after Slack's
 * Retry-After without a second thread reply; a DM Slack refuses for good is
 * given up.
 */
import { describe, expect, it } from "vitest";
import { Action, encodeButton } from "../../../src/slack/ids.js";
import { useSlackRelay, type SlackRelay } from "../../helpers/slack-relay.js";
import { blockAction, CHANNEL, MESSAGE_TS, type ApiReply } from "../../helpers/slack.js";
import { ALICE, BOB } from "../../fixtures/people.js";

const PERMALINK = `https://acme.slack.com/archives/${CHANNEL}/p1700000000000100`;
const input = { command: "make deploy" };
const forBob = { kind: "permission", toolName: "Bash", input, requestedBy: { slackUserId: BOB.id } };
const DATE = /<!date\^\d+\^\{time\}\|\d\d:\d\d UTC>/.source;

let relay: SlackRelay;
useSlackRelay((started) => (relay = started));

/** The request for Bob, posted, then allowed by Alice with a click. */
async function allowedByAlice() {
  relay.api.onPost().on("chat.update");
  const record = await relay.create(forBob);
  const response = await relay.post(blockAction({ actionId: Action.allow, value: encodeButton({ r: record.id }), user: ALICE }));
  expect(response.status).toBe(200);
  await relay.settle();
  return record;
}

const LINK: ApiReply = { ok: true, channel: CHANNEL, permalink: PERMALINK };
const DM_POSTED: ApiReply = { ok: true, channel: "D0BOBDM001", ts: "1700000100.000300" };

/** Slack takes the thread reply, gives the permalink (`link`) and answers the DM with `dm`. */
function stubNotices(dm = DM_POSTED, link = LINK): void {
  relay.api.onPost("1700000100.000200").on("chat.getPermalink", link).on("chat.postMessage", dm);
}

const threadReplies = () => relay.api.callsTo("chat.postMessage").filter((call) => call.args.thread_ts !== undefined);
const directMessages = () => relay.api.callsTo("chat.postMessage").filter((call) => call.args.channel === BOB.id);

describe("outcome notices", () => {
  it("after Alice allows, the thread gets the outcome with who and when, then Bob a DM with the outcome and a link to the message", async () => {
    await allowedByAlice();
    stubNotices();
    expect(await relay.service.sweepNotices()).toBe(2);

    expect(threadReplies().map((call) => call.args)).toEqual([
      {
        channel: CHANNEL,
        thread_ts: MESSAGE_TS,
        text: expect.stringMatching(new RegExp(`^✅ Allowed by <@${ALICE.id}> · ${DATE}$`)),
        unfurl_links: "false",
        unfurl_media: "false",
      },
    ]);
    expect(relay.api.callsTo("chat.getPermalink").map((call) => call.args)).toEqual([{ channel: CHANNEL, message_ts: MESSAGE_TS }]);
    const [dm] = directMessages();
    expect(dm?.args).toMatchObject({ channel: BOB.id, text: `✅ Allowed by <@${ALICE.id}> · Permission request: Bash: make deploy` });
    expect(JSON.stringify(dm?.args.blocks)).toContain(`<${PERMALINK}|Open the request>`);
    expect(JSON.stringify(dm?.args.blocks)).toContain("A request made for you has ended");
    expect(relay.api.callsTo("chat.postMessage").map((call) => call.args.channel)).toEqual([CHANNEL, CHANNEL, BOB.id]);

    expect(await relay.service.sweepNotices()).toBe(0);
    relay.api.done();
  });

  it("when nobody answers, the thread says the request expired and how long people had, and Bob is told too", async () => {
    relay.api.onPost().on("chat.update");
    const record = await relay.create(forBob);
    relay.advance(600_000);
    expect(await relay.service.expireDue()).toBe(1);
    await relay.settle();
    stubNotices();
    expect(await relay.service.sweepNotices()).toBe(2);
    expect(threadReplies()[0]?.args.text).toMatch(new RegExp(`^⏱ Expired: no one answered within 10 minutes · ${DATE}$`));
    expect(directMessages()[0]?.args.text).toBe("⏱ Expired · Permission request: Bash: make deploy");
    expect((await relay.service.get(record.id))?.status).toBe("expired");
    relay.api.done();
  });

  it("a DM Slack rate-limits is sent again after its Retry-After, and the thread reply is not repeated", async () => {
    await allowedByAlice();
    stubNotices({ status: 429, headers: { "retry-after": "30" } });
    expect(await relay.service.sweepNotices()).toBe(1);
    relay.advance(20_000);
    expect(await relay.service.sweepNotices()).toBe(0);
    relay.api.on("chat.getPermalink", LINK).on("chat.postMessage", DM_POSTED);
    relay.advance(11_000);
    expect(await relay.service.sweepNotices()).toBe(1);
    expect(threadReplies()).toHaveLength(1);
    expect(directMessages()).toHaveLength(2);
    expect(directMessages()[1]?.args.text).toBe(`✅ Allowed by <@${ALICE.id}> · Permission request: Bash: make deploy`);
    relay.api.done();
  });

  it("a DM Slack refuses for good (channel_not_found) is given up: no retry, the thread reply stands", async () => {
    await allowedByAlice();
    stubNotices({ ok: false, error: "channel_not_found" });
    expect(await relay.service.sweepNotices()).toBe(1);
    relay.advance(3_600_000);
    expect(await relay.service.sweepNotices()).toBe(0);
    expect(threadReplies()).toHaveLength(1);
    expect(directMessages()).toHaveLength(1);
    relay.api.done();
  });

  it("without a link from Slack (chat.getPermalink refused), the DM names the channel instead", async () => {
    await allowedByAlice();
    stubNotices(DM_POSTED, { ok: false, error: "message_not_found" });
    expect(await relay.service.sweepNotices()).toBe(2);
    const blocks = JSON.stringify(directMessages()[0]?.args.blocks);
    expect(blocks).toContain(`In <#${CHANNEL}>`);
    expect(blocks).not.toContain("Open the request");
    relay.api.done();
  });
});
