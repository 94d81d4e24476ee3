/**
 * The App Home tab's view (src/slack/blocks/home.ts) on its JSON: what waits
 * on the person (what is asked, from which token, where, how long is left, a
 * link), the rules they made with a Revoke button each, the counts past
 * what is shown, the notice line after a click, and what it says when a part
 * could not be read. Limits and hostile text are in hostile.test.ts.
 */
import { describe, expect, it } from "vitest";
import { HOME_LIMITS, homeView, revokedNotice, REVOKE_NOTICES, type HomeContent } from "../../../../src/slack/blocks/index.js";
import { Action, decodeRuleButton } from "../../../../src/slack/ids.js";
import { permissionRecord, stepGateRecord } from "../../../fixtures/records.js";
import { block, blocksOf, buttons, sectionText } from "../../../helpers/blocks.js";
import { ruleOf, T0 } from "../../../helpers/rule-store-contract.js";

const MINUTE = 60_000;
const LINK = "https://acme.slack.com/archives/C0123456789/p1700000000000100";
const date = (ms: number, format = "{time}") => {
  const iso = new Date(ms).toISOString();
  return `<!date^${Math.floor(ms / 1000)}^${format}|${format === "{time}" ? "" : `${iso.slice(0, 10)} `}${iso.slice(11, 16)} UTC>`;
};
const pending = (overrides = {}) => permissionRecord({}, { createdAt: T0, expiresAt: T0 + 25 * MINUTE, ...overrides });

function view(content: Partial<HomeContent> = {}) {
  return homeView({ now: T0, waiting: { shown: [], more: 0, moreUncounted: false, unchecked: 0 }, rules: { shown: [], more: false }, ...content });
}

describe("the requests waiting on the person", () => {
  it("each say what is asked, from which token, in which channel, how long is left and link to the message", () => {
    const home = view({ waiting: { shown: [{ record: pending(), permalink: LINK }], more: 0, moreUncounted: false, unchecked: 0 } });
    expect(home.type).toBe("home");
    expect(blocksOf(home)[0]).toStrictEqual({ type: "header", block_id: "waiting_header", text: { type: "plain_text", text: "Waiting on you" } });
    expect(sectionText(home, "request_0")).toBe(
      "Permission request: Bash: npm test\n" +
        `from *ci-bot* · in <#C0123456789> · 25 minutes left (expires ${date(T0 + 25 * MINUTE, "{date_short_pretty} {time}")}) · <${LINK}|Open the request>`,
    );
  });

  it("are listed in the order given, newest first as the tab gathers them", () => {
    const records = [pending({ id: "new" }), stepGateRecord({}, { id: "old", createdAt: T0, expiresAt: T0 + 5 * MINUTE })];
    const home = view({ waiting: { shown: records.map((record) => ({ record })), more: 0, moreUncounted: false, unchecked: 0 } });
    expect([sectionText(home, "request_0")?.split("\n")[0], sectionText(home, "request_1")?.split("\n")[0]]).toStrictEqual([
      "Permission request: Bash: npm test",
      "Proposed action: Bash: rm -rf build",
    ]);
  });

  it("say where a message lives from its channel id only, and link only to a plain https permalink", () => {
    const where = (channel: string, permalink?: string) =>
      sectionText(
        view({
          waiting: {
            shown: [{ record: pending({ slack: { channel, ts: "1.2" } }), ...(permalink ? { permalink } : {}) }],
            more: 0,
            moreUncounted: false,
            unchecked: 0,
          },
        }),
        "request_0",
      )!.split("\n")[1]!;
    expect(where("D0DIRECT1")).toContain("· in a direct message ·");
    expect(where("<!channel>")).toContain("· in Slack ·");
    expect(where("C0123456789", "https://acme.slack.com/x|<!channel>")).not.toContain("Open the request");
    expect(where("C0123456789", "http://acme.slack.com/archives/C0123456789/p1")).not.toContain("Open the request");
  });

  it("past those shown are counted, with a + when the relay looked at only its newest pending requests", () => {
    const more = (count: number, moreUncounted: boolean) =>
      block(view({ waiting: { shown: [{ record: pending() }], more: count, moreUncounted, unchecked: 0 } }), "waiting_more");
    expect(more(5, false)).toMatchObject({ elements: [{ text: "…and 5 more waiting on you, older than these." }] });
    expect(more(5, true)).toMatchObject({ elements: [{ text: "…and 5+ more waiting on you, older than these." }] });
    expect(more(0, true)).toMatchObject({
      elements: [{ text: `Only the relay's newest ${HOME_LIMITS.scanned} pending requests were looked at: older ones may wait on you too.` }],
    });
    expect(more(0, false)).toBeUndefined();
  });

  it("say so when none waits, and count those Slack could not check", () => {
    const home = view({ waiting: { shown: [], more: 0, moreUncounted: false, unchecked: 2 } });
    expect(block(home, "waiting_none")).toMatchObject({ elements: [{ text: "Nothing is waiting on you." }] });
    expect(block(home, "waiting_unchecked")).toMatchObject({
      elements: [{ text: "⚠️ Slack could not say just now whether you may answer 2 more requests. Open this tab again in a moment." }],
    });
  });

  it("say the requests could not be read when the store did not answer", () => {
    expect(sectionText(view({ waiting: "unavailable" }), "waiting_unavailable")).toBe(
      "⚠️ The relay could not read its requests just now. Open this tab again in a moment.",
    );
  });
});

describe("the person's rules", () => {
  it("each show the scope (tool, session, token), until when it lasts, its uses, the message it was made on and a Revoke button", () => {
    const rule = ruleOf({ uses: 3 });
    const home = view({ rules: { shown: [rule], more: false, permalinks: new Map([[rule.id, LINK]]) } });
    expect(sectionText(home, "rule_0")).toBe(
      `*Bash* calls of session s-1 from *ci-bot*\nuntil ${date(rule.expiresAt)} (15 minutes left) · used 3 times · <${LINK}|Open the request>`,
    );
    const [revoke] = buttons(home);
    expect(revoke).toMatchObject({ blockId: "rule_0", action_id: Action.revokeRule, text: "Revoke", style: "danger" });
    expect(revoke?.confirm).toMatchObject({ title: { text: "Revoke this rule?" }, confirm: { text: "Revoke" }, style: "danger" });
    expect(decodeRuleButton(revoke?.value)).toStrictEqual({ rule: rule.id });
  });

  it("count a single use as once, and say there are more than shown", () => {
    const home = view({ rules: { shown: [ruleOf({ uses: 1 })], more: true } });
    expect(sectionText(home, "rule_0")).toContain("· used once");
    expect(block(home, "rules_more")).toMatchObject({ elements: [{ text: `…and more: the newest ${HOME_LIMITS.rules} are shown.` }] });
  });

  it("say how to make one when there is none, and that they could not be read when the store did not answer", () => {
    expect(block(view(), "rules_none")).toMatchObject({
      elements: [{ text: "You have no live rules. *Allow for 15 min* on a request makes one for that agent session and tool." }],
    });
    expect(sectionText(view({ rules: "unavailable" }), "rules_unavailable")).toBe("⚠️ Your rules could not be read just now. Open this tab again in a moment.");
  });

  it("are left out where the relay keeps no rules", () => {
    const home = view({ rules: "none" });
    expect(block(home, "rules_header")).toBeUndefined();
    expect(blocksOf(home).map((b) => b.type)).toStrictEqual(["header", "context", "context"]);
  });
});

describe("the notice line after a Revoke click", () => {
  it("sits on top of the view", () => {
    const home = view({ notice: REVOKE_NOTICES.gone });
    expect(blocksOf(home)[0]).toMatchObject({ type: "section", block_id: "notice", text: { text: REVOKE_NOTICES.gone } });
  });

  it("names the revoked rule's scope, escaped", () => {
    expect(revokedNotice(ruleOf({ toolName: "<!channel>", sessionId: "a&b" }))).toBe(
      "✅ Revoked: *&lt;!channel&gt;* calls of session a&amp;b from *ci-bot* will be asked about again.",
    );
  });
});

it("ends with when it was built", () => {
  expect(block(view(), "updated")).toMatchObject({
    type: "context",
    elements: [{ text: `Updated ${date(T0)}. It changes when you open this tab and after you answer or revoke.` }],
  });
});
