/**
 * Who may answer, as the request message shows it: "For", "Who may answer",
 * the quorum and the self-approval guard; the approvals counted so far; and
 * the buttons a request that needs several approvals offers.
 */
import { describe, expect, it } from "vitest";
import type { RequestPolicy, RequestRecord } from "../../../../src/requests/model.js";
import { endedMessage, offersEdit, requestMessage } from "../../../../src/slack/blocks/index.js";
import { checkMessageLimits } from "../../../helpers/block-kit-limits.js";
import { showsAlwaysAllow } from "../../../../src/slack/blocks/permission.js";
import { Action, encodeButton } from "../../../../src/slack/ids.js";
import { ALICE, BOB, CAROL } from "../../../fixtures/people.js";
import { deployPolicy } from "../../../fixtures/policies.js";
import { answered, askRecord, CREATED_AT, interactiveRecord, permissionRecord, stepGateRecord } from "../../../fixtures/records.js";
import { actionIds, block, blocksOf, buttons } from "../../../helpers/blocks.js";

const suggestions = [{ type: "addRules", rules: [{ toolName: "Bash", ruleContent: "npm test:*" }], behavior: "allow", destination: "session" }];
const policy = deployPolicy();
const approval = (person: { id: string; name?: string }, at = CREATED_AT + 1000) => ({ person, at });

/** The mrkdwn texts of a context block. */
function contextTexts(record: RequestRecord, ended = false, blockId = "policy"): string[] | undefined {
  const found = block(ended ? endedMessage(record) : requestMessage(record), blockId) as { elements?: Array<{ text: string }> } | undefined;
  return found?.elements?.map((element) => element.text);
}

describe("who may answer, in the request message", () => {
  it("names who the request is for and who may answer, with the quorum and who may not, under who asks", () => {
    const record = permissionRecord({ suggestions }, { policy });
    const ids = blocksOf(requestMessage(record)).map((b) => b.block_id);
    expect(ids.indexOf("policy")).toBe(ids.indexOf("requester") + 1);
    expect(contextTexts(record)).toEqual([
      "For <@U0BOB0001>",
      "Who may answer: <@U0ALICE01>, <@U0CAROL01>, <!subteam^S0ONCALL1> · needs 2 approvals · any deny ends it · not <@U0BOB0001>, who asked for it",
    ]);
  });

  it("does not list the requester among who may answer when self-approval is denied", () => {
    const record = permissionRecord({}, { policy: { ...policy, approvers: { users: [BOB.id, ALICE.id] }, quorum: 1 } });
    expect(contextTexts(record)?.[1]).toBe("Who may answer: <@U0ALICE01> · not <@U0BOB0001>, who asked for it");
  });

  it("shows who the request is for in any case, also when anyone may answer it and once it has ended", () => {
    const record = stepGateRecord({}, { policy: { alwaysAllow: "tool", requestedBy: { id: BOB.id, email: "bob@example.com" } } });
    expect(contextTexts(record)).toEqual(["For <@U0BOB0001>"]);
    expect(contextTexts(answered(record, { reply: "y" }), true)).toEqual(["For <@U0BOB0001>"]);
  });

  it("says only the quorum when anyone may answer but two must agree", () => {
    const record = stepGateRecord({}, { policy: { alwaysAllow: "tool", quorum: 2 } });
    expect(contextTexts(record)).toEqual(["Needs 2 approvals · any deny ends it"]);
  });

  it("drops who may answer from the ended message", () => {
    const ended = answered(permissionRecord({}, { policy }), { behavior: "deny", message: "no" }, ALICE);
    expect(contextTexts(ended, true)).toEqual(["For <@U0BOB0001>"]);
  });

  it("shows no policy line for a request anyone may answer once", () => {
    expect(block(requestMessage(permissionRecord()), "policy")).toBeUndefined();
  });

  it("never turns an approver that is not a Slack id into a mention", () => {
    const hostile = { ...policy, approvers: { users: ["<!channel>", ALICE.id], usergroups: ["<!here>"] } } as RequestPolicy;
    expect(contextTexts(permissionRecord({}, { policy: hostile }))?.[1]).toMatch(/^Who may answer: <@U0ALICE01> · needs/);
  });

  it("shows a long approver list cut short with the rest counted, within Slack's limits", () => {
    const users = Array.from({ length: 100 }, (_, i) => `U0APPR${String(i).padStart(3, "0")}`);
    const usergroups = Array.from({ length: 20 }, (_, i) => `S0GRP${String(i).padStart(3, "0")}`);
    const record = permissionRecord({}, { policy: { ...policy, approvers: { users, usergroups } } });
    const line = contextTexts(record)![1]!;
    expect(line).toMatch(/^Who may answer: <@U0APPR000>, <@U0APPR001>, .* and \d+ more · needs 2 approvals/);
    expect(line.length).toBeLessThan(1400);
    expect(checkMessageLimits(requestMessage(record))).toEqual([]);
  });
});

describe("a request that needs several approvals", () => {
  const value = encodeButton({ r: "req-0001" });

  it("offers Approve and the Deny variants only: no Edit…, no Always allow", () => {
    const record = permissionRecord({ suggestions }, { policy });
    const message = requestMessage(record);
    expect(buttons(message).filter((b) => b.blockId === "actions")).toEqual([
      { blockId: "actions", action_id: Action.allow, text: "Approve", value, style: "primary" },
      { blockId: "actions", action_id: Action.deny, text: "Deny", value, style: "danger" },
      { blockId: "actions", action_id: Action.denyWithReason, text: "Deny with reason…", value },
      expect.objectContaining({ action_id: Action.denyAndStop, text: "Deny & stop", style: "danger" }),
    ]);
    expect(block(message, "always_allow")).toBeUndefined();
    expect(showsAlwaysAllow(record)).toBe(false);
    expect(offersEdit(record)).toBe(false);
  });

  it("still asks to confirm Approve when the agent suggests answering No", () => {
    const message = requestMessage(permissionRecord({ defaultToNo: true }, { policy }));
    expect(buttons(message)[0]?.confirm).toMatchObject({ title: { text: "Approve?" }, confirm: { text: "Approve" } });
  });

  it("keeps Allow, Allow for 15 min, Always allow and Edit… where one approval decides", () => {
    const record = permissionRecord({ suggestions }, { policy: { ...policy, quorum: 1 } });
    expect(actionIds(requestMessage(record)).slice(0, 4)).toEqual([Action.allow, Action.allowForAWhile, Action.alwaysAllow, Action.edit]);
    expect(offersEdit(record)).toBe(true);
  });

  it("shows the approvals counted so far above the buttons, while pending", () => {
    const record = permissionRecord({}, { policy, approvals: [approval(ALICE)] });
    const ids = blocksOf(requestMessage(record)).map((b) => b.block_id);
    expect(ids.indexOf("approvals")).toBe(ids.indexOf("actions") - 1);
    expect(contextTexts(record, false, "approvals")).toEqual(["Approvals 1 of 2: <@U0ALICE01>"]);
    expect(contextTexts(permissionRecord({}, { policy }), false, "approvals")).toEqual(["Approvals 0 of 2"]);
  });

  it("shows every approval in the ended message, above the outcome", () => {
    const ended = answered(permissionRecord({}, { policy, approvals: [approval(ALICE), approval(CAROL)] }), { behavior: "allow", updatedInput: {} }, CAROL);
    const message = endedMessage(ended);
    const ids = blocksOf(message).map((b) => b.block_id);
    expect(ids.slice(-2)).toEqual(["approvals", "outcome"]);
    expect(contextTexts(ended, true, "approvals")).toEqual(["Approvals 2 of 2: <@U0ALICE01>, <@U0CAROL01>"]);
  });

  it("shows an approver whose id is no Slack user id by name, escaped", () => {
    const record = permissionRecord({}, { policy, approvals: [approval({ id: "<!channel>", name: "<!here> & co" })] });
    expect(contextTexts(record, false, "approvals")).toEqual(["Approvals 1 of 2: &lt;!here&gt; &amp; co"]);
  });

  it("keeps a step gate's Yes / No / Stop and its thread-reply hint", () => {
    const message = requestMessage(stepGateRecord({}, { policy, approvals: [approval(ALICE)] }));
    expect(actionIds(message)).toEqual([Action.stepYes, Action.stepNo, Action.stepStop, Action.moreTime]);
    expect(
      blocksOf(message)
        .map((b) => b.block_id)
        .slice(-4),
    ).toEqual(["approvals", "actions", "reply_hint", "more_time"]);
  });

  it("keeps the yes/no gate's one-tap Yes / No and counts its approvals", () => {
    const record = interactiveRecord({}, { policy });
    expect(actionIds(requestMessage(record))).toEqual([Action.confirmYes, Action.confirmNo, Action.moreTime]);
    expect(contextTexts(record, false, "approvals")).toEqual(["Approvals 0 of 2"]);
  });

  it("takes the first answer of a question: no count, no quorum line", () => {
    const record = askRecord({}, { policy });
    expect(block(requestMessage(record), "approvals")).toBeUndefined();
    expect(contextTexts(record)?.[1]).toBe("Who may answer: <@U0ALICE01>, <@U0CAROL01>, <!subteam^S0ONCALL1> · not <@U0BOB0001>, who asked for it");
  });
});
