/**
 * "Allow for a while" in Slack (src/slack/blocks/rules.ts): where the button
 * sits and what it says, where it is not offered, and the texts people get:
 * the tally thread reply and the clicker's notices, with agent text escaped.
 */
import { describe, expect, it } from "vitest";
import { requestMessage } from "../../../../src/slack/blocks/index.js";
import { ruleButtonLabel, ruleCreatedNotice, ruleLength, ruleNotSavedNotice, ruleTallyText } from "../../../../src/slack/blocks/rules.js";
import { Action } from "../../../../src/slack/ids.js";
import { deployPolicy } from "../../../fixtures/policies.js";
import { permissionRecord, stepGateRecord } from "../../../fixtures/records.js";
import { actionIds, buttons } from "../../../helpers/blocks.js";
import { ruleOf, T0 } from "../../../helpers/rule-store-contract.js";

const session = { agent: { name: "claude", sessionId: "sess-1" } };
const UNTIL = `<!date^${Math.floor((T0 + 15 * 60_000) / 1000)}^{time}|${new Date(T0 + 15 * 60_000).toISOString().slice(11, 16)} UTC>`;

describe("the Allow for a while button", () => {
  it("sits right after Allow on a permission request and after Yes on a step gate", () => {
    expect(actionIds(requestMessage(permissionRecord())).slice(0, 2)).toStrictEqual([Action.allow, Action.allowForAWhile]);
    expect(actionIds(requestMessage(stepGateRecord(session)))).toStrictEqual([
      Action.stepYes,
      Action.allowForAWhile,
      Action.stepNo,
      Action.stepStop,
      Action.moreTime,
    ]);
  });

  it("is labelled with the route's ruleMinutes", () => {
    const label = (ruleMinutes?: number) => ruleButtonLabel(permissionRecord({}, { policy: { alwaysAllow: "tool", ...(ruleMinutes ? { ruleMinutes } : {}) } }));
    expect([label(), label(1), label(60), label(90), label(720)]).toStrictEqual([
      "Allow for 15 min",
      "Allow for 1 min",
      "Allow for 1 h",
      "Allow for 90 min",
      "Allow for 12 h",
    ]);
    const button = buttons(requestMessage(permissionRecord({}, { policy: { alwaysAllow: "tool", ruleMinutes: 30 } }))).find(
      (b) => b.action_id === Action.allowForAWhile,
    );
    expect(button?.text).toBe("Allow for 30 min");
  });

  it("asks to confirm, as Allow does, when the agent suggests No", () => {
    const rule = buttons(requestMessage(permissionRecord({ defaultToNo: true }))).find((b) => b.action_id === Action.allowForAWhile);
    expect(rule?.confirm).toMatchObject({ title: { text: "Allow for 15 min?" }, confirm: { text: "Allow for 15 min" } });
  });

  it("is not offered without a session, under allowRules: false, or under a quorum", () => {
    for (const record of [
      permissionRecord({ agent: { name: "claude" } }),
      stepGateRecord(),
      permissionRecord({}, { policy: { alwaysAllow: "tool", allowRules: false } }),
      stepGateRecord(session, { policy: { alwaysAllow: "tool", allowRules: false } }),
      permissionRecord({}, { policy: deployPolicy({ quorum: 2 }) }),
      stepGateRecord(session, { policy: deployPolicy({ quorum: 2 }) }),
    ]) {
      expect(actionIds(requestMessage(record))).not.toContain(Action.allowForAWhile);
    }
  });
});

describe("what people read about a rule", () => {
  it("the tally counts the calls under the creator's mention, with the rule's end", () => {
    expect(ruleTallyText(ruleOf({ uses: 1 }))).toBe(`🔁 Auto-approved 1 more Bash call under <@U0ALICE01>'s rule · until ${UNTIL}`);
    expect(ruleTallyText(ruleOf({ uses: 3 }))).toBe(`🔁 Auto-approved 3 more Bash calls under <@U0ALICE01>'s rule · until ${UNTIL}`);
  });

  it("escapes the agent's tool name and never mentions anyone but by a Slack user id", () => {
    const text = ruleTallyText(ruleOf({ uses: 2, toolName: "<!channel> & <@U0BOB0001>", createdBy: { id: "relay", name: "<!here>" } }));
    expect(text).toContain("&lt;!channel&gt; &amp; &lt;@U0BOB0001&gt;");
    expect(text).not.toMatch(/<!channel>|<!here>|<@U0BOB0001>/);
    expect(ruleCreatedNotice(ruleOf({ toolName: "<!channel>" }))).not.toContain("<!channel>");
  });

  it("the clicker learns the rule's scope, its end and how to revoke it", () => {
    const rule = ruleOf({ id: "3f1c-rule" });
    expect(ruleCreatedNotice(rule)).toBe(
      `⏱️ Allowed, and for the next 15 min (until ${UNTIL}) every Bash call of this agent session is allowed without asking; ` +
        "each is counted in this thread. Revoke the rule in the relay's App Home tab or with `DELETE /v1/rules/3f1c-rule`.",
    );
  });

  it("or that the request was allowed but the rule not saved", () => {
    expect(ruleNotSavedNotice(permissionRecord({ toolName: "Read" }, { policy: { alwaysAllow: "tool", ruleMinutes: 60 } }))).toBe(
      "⚠️ Allowed, but the 1 h rule could not be saved just now: the next Read calls will ask again.",
    );
  });

  it("writes lengths in minutes, or hours when whole", () => {
    expect([ruleLength(5), ruleLength(120), ruleLength(125)]).toStrictEqual(["5 min", "2 h", "125 min"]);
  });
});
