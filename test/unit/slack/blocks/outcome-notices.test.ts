/**
 * What the thread and the requester's DM say once a request ended (docs/architecture.md
 * §7, everyone told): the outcome, who decided and when, an expiry with how
 * long people had; the DM with what was asked and a link to the message.
 * Agent text is escaped, mentions come only from ids, links only from a
 * plain https permalink.
 */
import { describe, expect, it } from "vitest";
import { outcomeDirectMessage, outcomeReplyText } from "../../../../src/slack/blocks/index.js";
import { checkMessageLimits } from "../../../helpers/block-kit-limits.js";
import { ALICE, BOB, CAROL } from "../../../fixtures/people.js";
import { answered, cancelled, ENDED_AT, expired, failed, permissionRecord, stepGateRecord } from "../../../fixtures/records.js";
import { unescapedMarkup } from "../../../helpers/blocks.js";

const AT = "<!date^1700000060^{time}|22:14 UTC>";
const EXPIRED_AT = "<!date^1700000600^{time}|22:23 UTC>";
const PERMALINK = "https://acme.slack.com/archives/C0123456789/p1700000000000100";
const forBob = { policy: { alwaysAllow: "tool", requestedBy: { id: BOB.id } } } as const;
const allow = { behavior: "allow", updatedInput: { command: "npm test", description: "Run the unit tests" } } as const;

describe("the thread reply", () => {
  it("an answer says what was decided, by whom and when", () => {
    expect(outcomeReplyText(answered(permissionRecord(), allow))).toBe(`✅ Allowed by <@${ALICE.id}> · ${AT}`);
  });

  it("a deny with a reason gives the reason, escaped", () => {
    const record = answered(permissionRecord(), { behavior: "deny", message: "Not <!channel> & not today" }, CAROL);
    expect(outcomeReplyText(record)).toBe(`❌ Denied by <@${CAROL.id}> · ${AT}\nReason: Not &lt;!channel&gt; &amp; not today`);
  });

  it("an answer under a quorum lists every approval", () => {
    const approvals = [ALICE, CAROL].map((person) => ({ person, at: ENDED_AT }));
    const record = answered(stepGateRecord({}, { approvals }), { reply: "y" }, CAROL);
    expect(outcomeReplyText(record)).toBe(`✅ Approved (y) by <@${CAROL.id}> · ${AT}\nApprovals: <@${ALICE.id}>, <@${CAROL.id}>`);
  });

  it("an expiry says no one answered within the request's time, and when", () => {
    expect(outcomeReplyText(expired(stepGateRecord()))).toBe(`⏱ Expired: no one answered within 10 minutes · ${EXPIRED_AT}`);
  });

  it("an expiry under onTimeout: halt says the agent was stopped", () => {
    const record = { ...expired(stepGateRecord()), decision: { reply: "q" } } as const;
    expect(outcomeReplyText(record)).toBe(`⏱ Expired: no one answered within 10 minutes, so the agent was stopped · ${EXPIRED_AT}`);
  });

  it("a cancel and a failure say why", () => {
    expect(outcomeReplyText(cancelled(permissionRecord(), "Claude Code closed the connection"))).toBe(
      `🚫 Cancelled: Claude Code closed the connection · ${AT}`,
    );
    expect(outcomeReplyText(failed(permissionRecord(), "msg_too_long"))).toBe(`⚠️ Failed: msg_too_long · ${AT}`);
  });

  it("a person whose id is not a Slack user id is named, escaped, never mentioned", () => {
    const record = answered(permissionRecord(), allow, { id: "<!here>", name: "<@U0EVIL001> & co" });
    expect(outcomeReplyText(record)).toBe(`✅ Allowed by &lt;@U0EVIL001&gt; &amp; co · ${AT}`);
  });
});

describe("the DM to the requester", () => {
  const record = answered(permissionRecord({}, forBob), allow);

  it("says a request made for them ended, what was asked, how it ended and links to the message", () => {
    expect(outcomeDirectMessage(record, PERMALINK)).toEqual({
      text: `✅ Allowed by <@${ALICE.id}> · Permission request: Bash: npm test`,
      blocks: [
        {
          type: "section",
          block_id: "outcome_notice",
          text: { type: "mrkdwn", verbatim: true, text: "*A request made for you has ended*\nPermission request: Bash: npm test" },
        },
        { type: "section", block_id: "outcome_notice_result", text: { type: "mrkdwn", verbatim: true, text: `✅ Allowed by <@${ALICE.id}> · ${AT}` } },
        {
          type: "context",
          block_id: "outcome_notice_meta",
          elements: [
            { type: "mrkdwn", verbatim: true, text: `<${PERMALINK}|Open the request>` },
            { type: "mrkdwn", verbatim: true, text: "Requested by *ci-bot*" },
          ],
        },
      ],
    });
  });

  it("without a usable permalink it names the channel instead, and never builds a link from anything else", () => {
    for (const permalink of [undefined, "javascript:alert(1)", "https://evil.example/x|Click here", "http://acme.slack.com/archives/C1/p1"]) {
      const meta = JSON.stringify(outcomeDirectMessage(record, permalink).blocks[2]);
      expect(meta).toContain("In <#C0123456789>");
      expect(meta).not.toContain("Open the request");
    }
  });

  it("a request posted to a DM names no channel when there is no link", () => {
    const inDm = answered(permissionRecord({}, { ...forBob, slack: { channel: "D0DIRECT01", ts: "1700000000.000100" } }), allow);
    expect(outcomeDirectMessage(inDm, undefined).blocks[2]).toEqual({
      type: "context",
      block_id: "outcome_notice_meta",
      elements: [{ type: "mrkdwn", verbatim: true, text: "Requested by *ci-bot*" }],
    });
  });

  it("hostile and huge agent text is escaped and the DM keeps to Slack's limits", () => {
    const hostile = permissionRecord(
      { input: { command: `<!channel> <@U0BOB0001> <https://evil.example|x> & ${"x".repeat(20_000)}` }, title: "<!here>" },
      { ...forBob, tokenName: "<!everyone>" },
    );
    const message = outcomeDirectMessage(answered(hostile, { behavior: "deny", message: `<!channel> ${"y".repeat(5000)}` }), PERMALINK);
    expect(checkMessageLimits(message)).toEqual([]);
    expect(unescapedMarkup(message, [], [`<${PERMALINK}|Open the request>`])).toEqual([]);
  });
});
