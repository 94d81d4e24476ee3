/**
 * The App Home tab through the real Bolt HTTP receiver with signed payloads:
 * opening it publishes the person's view (the requests they may answer,
 * newest first, linked to their messages; the rules they made, each with
 * Revoke), a non-approver does not see the requests they may not answer, a
 * Revoke click revokes only the clicker's own rule and publishes the view
 * again with a notice on top, and an answer from a person who opened the
 * tab lately refreshes it, while others' answers publish nothing.
 */
import type { HomeView } from "@slack/types";
import { describe, expect, it } from "vitest";
import { REVOKE_NOTICES, revokedNotice } from "../../../src/slack/blocks/index.js";
import { Action, encodeButton, encodeRuleButton } from "../../../src/slack/ids.js";
import { ALICE, BOB, RELAY_BOT } from "../../fixtures/people.js";
import { approverRoutes } from "../../fixtures/routes.js";
import { sectionText } from "../../helpers/blocks.js";
import { clickAs, members } from "../../helpers/slack-approvers.js";
import { useSlackRelay, type SlackRelay } from "../../helpers/slack-relay.js";
import { appHomeOpened, blockAction, CHANNEL, homeAction, MESSAGE_TS, messageEvent } from "../../helpers/slack.js";

const SESSION = { name: "claude-code", sessionId: "5f1c2a9e-0b7d-4c1e-9a55-3f0e8f7d2c11" };
const WORKSPACE = { ok: true, url: "https://acme.slack.com/", team_id: "T0TEAM", user_id: RELAY_BOT.userId, bot_id: RELAY_BOT.botId };
const link = (ts: string) => `<https://acme.slack.com/archives/${CHANNEL}/p${ts.replace(".", "")}|Open the request>`;

let relay: SlackRelay;
useSlackRelay((started) => (relay = started), { routes: approverRoutes });
const revocations = () => relay.audited.filter((entry) => entry.type === "rule_revoked");

/** Creates a request whose message is posted at `ts`. */
async function posted(input: unknown, ts: string) {
  relay.api.onPost(ts);
  return relay.create(input);
}

async function send(payload: { type: string }) {
  expect((await relay.post(payload)).status).toBe(200);
  await relay.settle();
}

/** Every view published so far for `user`, oldest first. */
const published = (user: string) =>
  relay.api
    .callsTo("views.publish")
    .filter((call) => call.args.user_id === user)
    .map((call) => call.args.view as HomeView);
const firstLines = (view: HomeView | undefined) =>
  (view?.blocks ?? []).flatMap((b) => (b.block_id?.startsWith("request_") ? [sectionText(view!, b.block_id)!.split("\n")[0]] : []));

describe("opening the Home tab", () => {
  it("shows an approver the requests waiting on them, newest first, linked to their messages, and their live rules with Revoke", async () => {
    relay.api.on("chat.update").on("chat.postEphemeral");
    const ruled = await posted({ kind: "permission", toolName: "Bash", input: { command: "npm test" }, agent: SESSION }, "1700000000.000100");
    await clickAs(relay, Action.allowForAWhile, ruled.id, ALICE);
    await posted({ kind: "permission", toolName: "Bash", input: { command: "git push" } }, "1700000000.000200");
    relay.advance(1);
    await posted({ kind: "step_gate", toolName: "Write", input: { file_path: "/tmp/x", content: "x" }, title: "Deploy" }, "1700000000.000300");
    relay.api.on("auth.test", WORKSPACE).on("views.publish");

    await send(appHomeOpened({ user: ALICE.id }));

    const [view] = published(ALICE.id);
    expect(view?.type).toBe("home");
    expect(firstLines(view)).toStrictEqual(["Proposed action: Write: /tmp/x", "Permission request: Bash: git push"]);
    expect(sectionText(view!, "request_0")).toContain(`from *ci-bot* · in <#${CHANNEL}> · 10 minutes left`);
    expect(sectionText(view!, "request_0")).toContain(link("1700000000.000300"));
    const [rule] = await relay.service.rules!.list({ limit: 10 });
    expect(sectionText(view!, "rule_0")).toMatch(/^\*Bash\* calls of session 5f1c2a9e-0b7d-4c1e-9a55-3f0e8f7d2c11 from \*ci-bot\*\nuntil .* · used 0 times · /);
    expect(view!.blocks.find((b) => b.block_id === "rule_0")).toMatchObject({
      accessory: { action_id: Action.revokeRule, value: encodeRuleButton({ rule: rule!.id }) },
    });
    relay.api.done();
  });

  it("shows someone who is no approver none of the requests they may not answer, and leaves those anyone may answer to their channel", async () => {
    await posted({ kind: "permission", toolName: "Bash", input: { command: "git push" } }, "1700000000.000100");
    await posted({ kind: "permission", toolName: "Bash", input: { command: "ls" }, labels: { policy: "anyone" } }, "1700000000.000200");
    relay.api.on("usergroups.users.list", members(ALICE.id)).on("auth.test", WORKSPACE).on("views.publish");

    await send(appHomeOpened({ user: BOB.id }));

    // Under approvers: any the relay cannot tell who reads the channel (a private one): listing it would show what is asked to outsiders.
    const [view] = published(BOB.id);
    expect(firstLines(view)).toStrictEqual([]);
    expect(view?.blocks.find((b) => b.block_id === "waiting_none")).toBeDefined();
    expect(view?.blocks.find((b) => b.block_id === "rules_none")).toBeDefined();
    relay.api.done();
  });

  it("of the Messages tab publishes nothing, and a reopen within seconds keeps the view just published", async () => {
    relay.api.on("auth.test", WORKSPACE).on("views.publish", { ok: true }, 2);
    await send(appHomeOpened({ user: ALICE.id, tab: "messages" }));
    expect(published(ALICE.id)).toHaveLength(0);
    await send(appHomeOpened({ user: ALICE.id }));
    await send(appHomeOpened({ user: ALICE.id }));
    expect(published(ALICE.id)).toHaveLength(1);
    relay.advance(5_000);
    await send(appHomeOpened({ user: ALICE.id }));
    expect(published(ALICE.id)).toHaveLength(2);
    relay.api.done();
  });
});

describe("a Revoke click in the Home tab", () => {
  async function aliceRule() {
    relay.api.on("chat.update").on("chat.postEphemeral");
    const record = await posted({ kind: "permission", toolName: "Bash", input: { command: "npm test" }, agent: SESSION }, MESSAGE_TS);
    await clickAs(relay, Action.allowForAWhile, record.id, ALICE);
    return (await relay.service.rules!.list({ limit: 10 }))[0]!;
  }

  it("revokes the clicker's own rule, audits it and publishes the view again saying so, the rule gone from it", async () => {
    const rule = await aliceRule();
    relay.api.on("auth.test", WORKSPACE).on("views.publish");

    await send(homeAction({ actionId: Action.revokeRule, value: encodeRuleButton({ rule: rule.id }), user: ALICE }));

    expect(await relay.service.rules!.list({ limit: 10 })).toStrictEqual([]);
    expect(revocations()).toMatchObject([{ person: { id: ALICE.id } }]);
    const [view] = published(ALICE.id);
    expect(sectionText(view!, "notice")).toBe(revokedNotice(rule));
    expect(view?.blocks.find((b) => b.block_id === "rule_0")).toBeUndefined();
    relay.api.done();
  });

  it("on someone else's rule revokes nothing and tells the clicker it was already gone, as for an unknown one", async () => {
    const rule = await aliceRule();
    relay.api.on("auth.test", WORKSPACE).on("views.publish", { ok: true }, 2);

    await send(homeAction({ actionId: Action.revokeRule, value: encodeRuleButton({ rule: rule.id }), user: BOB }));
    await send(homeAction({ actionId: Action.revokeRule, value: encodeRuleButton({ rule: "no-such-rule" }), user: BOB }));

    expect((await relay.service.rules!.list({ limit: 10 })).map((live) => live.id)).toStrictEqual([rule.id]);
    expect(revocations()).toStrictEqual([]);
    expect(published(BOB.id).map((view) => sectionText(view, "notice"))).toStrictEqual([REVOKE_NOTICES.gone, REVOKE_NOTICES.gone]);
    expect(published(ALICE.id)).toHaveLength(0);
    relay.api.done();
  });
});

describe("after an answer", () => {
  it("by a person who opened the tab lately, from a button or a thread reply, their view is published again without the request", async () => {
    const permission = await posted({ kind: "permission", toolName: "Bash", input: { command: "git push" } }, "1700000000.000100");
    relay.advance(1);
    await posted({ kind: "step_gate", toolName: "Bash", input: { command: "ls" } }, "1700000000.000200");
    relay.api.on("auth.test", WORKSPACE).on("views.publish", { ok: true }, 3).on("chat.update", { ok: true }, 2);
    await send(appHomeOpened({ user: ALICE.id }));
    expect(firstLines(published(ALICE.id)[0])).toStrictEqual(["Proposed action: Bash: ls", "Permission request: Bash: git push"]);

    await clickAs(relay, Action.deny, permission.id, ALICE);
    expect(firstLines(published(ALICE.id)[1])).toStrictEqual(["Proposed action: Bash: ls"]);

    await send(messageEvent({ text: "y", user: ALICE.id, threadTs: "1700000000.000200" }));
    const last = published(ALICE.id)[2];
    expect(firstLines(last)).toStrictEqual([]);
    expect(last?.blocks.find((b) => b.block_id === "waiting_none")).toBeDefined();
    relay.api.done();
  });

  it("by someone who has not opened the tab, or opened it long ago, publishes nothing", async () => {
    const anyone = { kind: "permission", toolName: "Bash", labels: { policy: "anyone" }, timeoutSeconds: 3600 };
    const first = await posted({ ...anyone, input: { command: "git push" } }, "1700000000.000100");
    const second = await posted({ ...anyone, input: { command: "ls" } }, "1700000000.000200");
    relay.api.on("auth.test", WORKSPACE).on("views.publish").on("chat.update", { ok: true }, 2);
    await send(appHomeOpened({ user: ALICE.id }));
    await send(blockAction({ actionId: Action.deny, value: encodeButton({ r: first.id }), user: BOB, ts: "1700000000.000100" }));
    relay.advance(15 * 60_000);
    await send(blockAction({ actionId: Action.deny, value: encodeButton({ r: second.id }), user: ALICE, ts: "1700000000.000200" }));
    expect((await relay.service.get(second.id))?.status).toBe("answered");
    expect(relay.api.callsTo("views.publish")).toHaveLength(1);
    relay.api.done();
  });
});
