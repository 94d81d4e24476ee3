import { describe, expect, it } from "vitest";
import { endedMessage, requestMessage } from "../../../../src/slack/blocks/index.js";
import { checkMessageLimits } from "../../../helpers/block-kit-limits.js";
import { Action } from "../../../../src/slack/ids.js";
import { answered, askRecord, cancelled, expired, failed, interactiveRecord, permissionRecord, stepGateRecord } from "../../../fixtures/records.js";
import { actionIds, sectionText } from "../../../helpers/blocks.js";

const AT = "<!date^1700000060^{time}|22:14 UTC>";
const input = { command: "npm test", description: "Run the unit tests" };

function outcome(record: Parameters<typeof endedMessage>[0]): string | undefined {
  const message = endedMessage(record);
  expect(checkMessageLimits(message)).toEqual([]);
  expect(message.blocks.some((b) => b.type === "actions")).toBe(false);
  return sectionText(message, "outcome");
}

describe("ended message", () => {
  it("keeps the request's content, drops every button block and adds who allowed it and when", () => {
    const pending = permissionRecord({ suggestions: [{ type: "addRules", rules: [] }] });
    const message = endedMessage(answered(pending, { behavior: "allow", updatedInput: input }));
    const before = requestMessage(pending).blocks.filter((b) => b.type !== "actions" && b.block_id !== "always_allow");
    expect(message.blocks.slice(0, -1).map((b) => b.block_id)).toEqual(before.map((b) => b.block_id));
    expect(sectionText(message, "tool_code_0")).toBe("```npm test```");
    expect(message.blocks.at(-1)).toEqual({
      type: "section",
      block_id: "outcome",
      text: { type: "mrkdwn", verbatim: true, text: `✅ Allowed by <@U0ALICE01> · ${AT}` },
    });
    expect(message.text).toBe("✅ Allowed by <@U0ALICE01> · Permission request: Bash: npm test");
    expect(JSON.stringify(message)).not.toContain("Expires");
  });

  it("says Always allowed when the person saved the rule", () => {
    const record = answered(permissionRecord(), { behavior: "allow", updatedInput: input, updatedPermissions: [{ type: "addRules" }] });
    expect(outcome(record)).toBe(`✅ Always allowed by <@U0ALICE01> · ${AT}`);
  });

  it("says Denied, without the relay's default message", () => {
    const record = answered(permissionRecord(), { behavior: "deny", message: "Denied by alice in Slack." });
    expect(outcome(record)).toBe(`❌ Denied by <@U0ALICE01> · ${AT}`);
  });

  it("says Denied with the reason the person gave, escaped", () => {
    const record = answered(permissionRecord(), { behavior: "deny", message: "Use <staging> & not prod" });
    expect(outcome(record)).toBe(`❌ Denied by <@U0ALICE01> · ${AT}\nReason: Use &lt;staging&gt; &amp; not prod`);
  });

  it("says Denied and stopped when the agent was interrupted", () => {
    const record = answered(permissionRecord(), { behavior: "deny", message: "Denied by alice in Slack.", interrupt: true });
    expect(outcome(record)).toBe(`❌ Denied and stopped by <@U0ALICE01> · ${AT}`);
  });

  it("says Approved (y), Rejected (n) or Stopped (q) for a step gate, and drops the reply hint", () => {
    expect(outcome(answered(stepGateRecord(), { reply: "y" }))).toBe(`✅ Approved (y) by <@U0ALICE01> · ${AT}`);
    expect(outcome(answered(stepGateRecord(), { reply: "n" }))).toBe(`❌ Rejected (n) by <@U0ALICE01> · ${AT}`);
    expect(outcome(answered(stepGateRecord(), { reply: "q" }))).toBe(`🛑 Stopped (q) by <@U0ALICE01> · ${AT}`);
    expect(sectionText(endedMessage(answered(stepGateRecord(), { reply: "y" })), "reply_hint")).toBeUndefined();
  });

  it("lists AskUserQuestion answers under their header, and removes the option buttons", () => {
    const record = answered(askRecord(), { answers: { "Which database should the service use?": "PostgreSQL" } });
    expect(outcome(record)).toBe(`✅ Answered by <@U0ALICE01> · ${AT}\n> *Database*: PostgreSQL`);
    expect(actionIds(endedMessage(record))).toEqual([]);
  });

  it("lists a free-text response too", () => {
    const record = answered(askRecord(), { answers: {}, response: "Neither, use <redis>" });
    expect(outcome(record)).toBe(`✅ Answered by <@U0ALICE01> · ${AT}\n> *Response*: Neither, use &lt;redis&gt;`);
  });

  it("lists InteractiveQuestion answers, and says when the relay answered by itself", () => {
    const pending = interactiveRecord({
      questions: [
        { id: "deploy", question: "Deploy?", type: "confirm" },
        { id: "regions", question: "Regions?", type: "multiChoice", options: ["eu", "us"] },
      ],
    });
    const record = answered(pending, { answers: { deploy: true, regions: ["eu", "us"] } }, { id: "relay", name: "autonomous mode" });
    expect(outcome(record)).toBe(`✅ Answered automatically (autonomous mode) · ${AT}\n> *Deploy?*: Yes\n> *Regions?*: eu, us`);
  });

  it("says Expired", () => {
    expect(outcome(expired(permissionRecord()))).toBe("⏱ Expired · <!date^1700000600^{time}|22:23 UTC>");
  });

  it("says Cancelled with the reason when there is one", () => {
    expect(outcome(cancelled(permissionRecord(), "Claude Code closed the connection"))).toBe(`🚫 Cancelled: Claude Code closed the connection · ${AT}`);
    expect(outcome(cancelled(permissionRecord(), undefined, "agent"))).toBe(`🚫 Cancelled by agent · ${AT}`);
    expect(outcome(cancelled(permissionRecord()))).toBe(`🚫 Cancelled · ${AT}`);
  });

  it("says Failed with the error", () => {
    expect(outcome(failed(permissionRecord(), "channel_not_found"))).toBe(`⚠️ Failed: channel_not_found · ${AT}`);
  });

  it("never turns an answerer id that is not a Slack user id into a mention", () => {
    const record = answered(stepGateRecord(), { reply: "y" }, { id: "<!channel>", name: "<!here>" });
    expect(outcome(record)).toBe(`✅ Approved (y) by &lt;!here&gt; · ${AT}`);
  });

  it("keeps the View full input button after the decision", () => {
    const pending = permissionRecord({ input: { command: "z".repeat(50_000) } });
    const message = endedMessage(answered(pending, { behavior: "allow", updatedInput: pending.body.input }));
    expect(actionIds(message)).toEqual([Action.viewInput]);
  });

  it("cuts long content exactly as the pending message did", () => {
    const pending = permissionRecord({ context: "c".repeat(20_000), input: { command: "z".repeat(50_000) } });
    const before = requestMessage(pending);
    const after = endedMessage(answered(pending, { behavior: "allow", updatedInput: pending.body.input }));
    for (const id of ["context", "tool", "tool_code_0", "tool_code_1", "full_input"]) {
      expect(after.blocks.find((b) => b.block_id === id)).toEqual(before.blocks.find((b) => b.block_id === id));
    }
  });

  it("leaves the time out when the record has no end time", () => {
    expect(outcome({ ...expired(permissionRecord()), endedAt: undefined })).toBe("⏱ Expired");
  });

  it("shows a still-pending request with its buttons", () => {
    const record = permissionRecord();
    expect(endedMessage(record)).toEqual(requestMessage(record));
  });
});
