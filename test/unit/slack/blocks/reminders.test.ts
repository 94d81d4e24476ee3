/**
 * What the thread says at a reminder and at an escalation, and the post an
 * escalation makes in its own channel.
 */
import { describe, expect, it } from "vitest";
import { escalationPost, escalationText, reminderText, timeLeft } from "../../../../src/slack/blocks/index.js";
import { checkMessageLimits } from "../../../helpers/block-kit-limits.js";
import { ALICE, BOB, CAROL } from "../../../fixtures/people.js";
import { deployPolicy, LEADS, ONCALL } from "../../../fixtures/policies.js";
import { CREATED_AT, permissionRecord, stepGateRecord } from "../../../fixtures/records.js";
import { unescapedMarkup } from "../../../helpers/blocks.js";

const escalation = { after: 1200, users: [CAROL.id], usergroups: [LEADS], channel: "C0ESCALATE" };
/** Bob, who asks, is listed too: the reminders leave him out. */
const policy = deployPolicy({ approvers: { users: [ALICE.id, BOB.id], usergroups: [ONCALL] }, reminders: [300], escalate: [escalation] });
/** Posted at creation; expires ten minutes later (the fixtures' default). */
const record = permissionRecord({}, { policy, postedAt: CREATED_AT });
const EXPIRES = "<!date^1700000600^{date_short_pretty} {time}|2023-11-14 22:23 UTC>";
const PERMALINK = "https://acme.slack.com/archives/C0123456789/p1700000000000100";

describe("time left", () => {
  it.each([
    [40_000, "40 seconds"],
    [1000, "1 second"],
    [90_000, "2 minutes"],
    [60_000, "1 minute"],
    [3_600_000, "1 hour"],
    [3_900_000, "1 hour 5 minutes"],
    [26 * 3_600_000, "26 hours"],
    [0, "no time"],
  ])("%i ms reads %s", (ms, text) => {
    expect(timeLeft(ms)).toBe(text);
  });
});

describe("a reminder", () => {
  it("mentions the approvers, says how long is left and when the request expires", () => {
    const one = permissionRecord({}, { policy: { ...policy, quorum: 1, selfApproval: "allow" }, postedAt: CREATED_AT });
    expect(reminderText(one, CREATED_AT + 300_000)).toBe(
      `⏰ <@U0ALICE01>, <@U0BOB0001>, <!subteam^S0ONCALL1>: this request is still waiting for an answer. 5 minutes left: it expires ${EXPIRES}.`,
    );
  });

  it("leaves out the requester barred from answering and anyone whose approval counted, and counts the approvals", () => {
    const counted = { ...record, approvals: [{ person: ALICE, at: CREATED_AT + 1000 }] };
    expect(reminderText(counted, CREATED_AT + 300_000)).toBe(
      `⏰ <!subteam^S0ONCALL1>: this request is still waiting for an answer. 1 of 2 approvals so far. 5 minutes left: it expires ${EXPIRES}.`,
    );
  });

  it("mentions the escalation's people too once it is due", () => {
    expect(reminderText(record, CREATED_AT + 1_200_000 - 1)).not.toContain(CAROL.id);
    expect(reminderText(record, CREATED_AT + 1_200_000)).toContain("<@U0ALICE01>, <@U0CAROL01>, <!subteam^S0ONCALL1>, <!subteam^S0LEADS01>:");
  });

  it("mentions nobody when anyone may answer", () => {
    const anyone = stepGateRecord({}, { policy: { alwaysAllow: "tool" }, postedAt: CREATED_AT });
    expect(reminderText(anyone, CREATED_AT + 540_000)).toBe(`⏰ This request is still waiting for an answer. 1 minute left: it expires ${EXPIRES}.`);
  });

  it("stays within Slack's message text with the most approvers of the longest ids, the rest counted", () => {
    const users = Array.from({ length: 100 }, (_, i) => `U${String(i).padStart(30, "0")}`);
    const usergroups = Array.from({ length: 20 }, (_, i) => `S${String(i).padStart(30, "0")}`);
    const crowded = permissionRecord(
      {},
      { policy: { ...policy, approvers: { users, usergroups }, escalate: [{ after: 1, users, usergroups }] }, postedAt: CREATED_AT },
    );
    const text = reminderText(crowded, CREATED_AT + 300_000);
    expect(text.length).toBeLessThanOrEqual(3000);
    expect(text).toMatch(/ and \d+ more: this request/);
  });
});

describe("an escalation", () => {
  it("mentions its people and groups, says they may answer now, where it was posted too, and how long is left", () => {
    expect(escalationText(record, escalation, CREATED_AT + 480_000)).toBe(
      `🔺 Escalated: <@U0CAROL01>, <!subteam^S0LEADS01> may answer this request now. Also posted in <#C0ESCALATE>. 0 of 2 approvals so far. 2 minutes left: it expires ${EXPIRES}.`,
    );
  });

  it("says it is still waiting when the escalation names nobody", () => {
    expect(escalationText(record, { after: 60 }, CREATED_AT + 60_000)).toBe(
      `🔺 Escalated: this request is still waiting for an answer. 0 of 2 approvals so far. 9 minutes left: it expires ${EXPIRES}.`,
    );
  });

  it("posts in its channel a link to the request and what is asked, in one escaped line", () => {
    const asked = permissionRecord({ toolName: "Bash", input: { command: "kubectl apply <!channel> &\nrm -rf /" } }, { policy, postedAt: CREATED_AT });
    const post = escalationPost(asked, PERMALINK, CREATED_AT + 1_200_000);
    expect(post).toEqual({
      text: "🔺 Waiting for an answer: Permission request: Bash (2 lines): kubectl apply &lt;!channel&gt; &amp; … rm -rf /",
      blocks: [
        {
          type: "section",
          block_id: "escalation",
          text: {
            type: "mrkdwn",
            verbatim: true,
            text: `🔺 *A request is waiting for an answer* · <${PERMALINK}|Open the request>\nPermission request: Bash (2 lines): kubectl apply &lt;!channel&gt; &amp; … rm -rf /`,
          },
        },
        {
          type: "context",
          block_id: "escalation_meta",
          elements: [
            { type: "mrkdwn", verbatim: true, text: "Requested by *ci-bot*" },
            { type: "mrkdwn", verbatim: true, text: `no time left: it expires ${EXPIRES}.` },
          ],
        },
      ],
    });
  });

  it("leaves the link out unless the permalink is a plain https URL", () => {
    for (const permalink of ["javascript:alert(1)", "https://evil.example|Open>", "https://acme.slack.com/a b", "http://acme.slack.com/x"]) {
      const post = escalationPost(record, permalink, CREATED_AT);
      expect(JSON.stringify(post)).not.toContain("Open the request");
      expect(unescapedMarkup(post)).toEqual([]);
    }
  });

  it("cuts what is asked to one short line, within Slack's limits", () => {
    const huge = permissionRecord({ toolName: "Bash", input: { command: "<!here> ".repeat(100_000) } }, { policy, postedAt: CREATED_AT });
    const post = escalationPost(huge, PERMALINK, CREATED_AT);
    expect(checkMessageLimits(post)).toEqual([]);
    expect(JSON.stringify(post).length).toBeLessThan(3000);
  });
});
