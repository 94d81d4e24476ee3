/**
 * POST /v1/hooks/claude-code and more time (issue 9): Claude Code gives up
 * at the hook's own timeout, so a hook call's request is made not
 * extendable: its Slack message offers no "+30 min", and a forged click
 * gives it none, so the call is still answered before Claude Code's
 * timeout and the message shows Expired then.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { requestMessage } from "../../../src/slack/blocks/index.js";
import { Action } from "../../../src/slack/ids.js";
import { startApiRelay, type ApiRelay } from "../../helpers/api-relay.js";
import { actionIds } from "../../helpers/blocks.js";
import { hookFixture, type HookFixture } from "../../fixtures/claude-code.js";
import { ALICE } from "../../fixtures/people.js";
import { until } from "../../helpers/until.js";

let relay: ApiRelay;
beforeEach(async () => {
  relay = await startApiRelay();
});
afterEach(async () => {
  await relay.close();
});

/** Resolves once the relay holds a call and has posted its request. */
async function heldAndPosted() {
  await until(() => relay.service.waiting === 1 && relay.messenger.posts.length === 1, 3000, "the hook call to be held and posted");
  return relay.messenger.posts[0]!;
}

describe("a Claude Code hook call's request", () => {
  it.each<[HookFixture, string]>([
    ["permission-request", "?timeout=600"],
    ["pre-tool-use", "?timeout=30"],
  ])("(%s) is posted with its answer buttons and no +30 min", async (fixture, query) => {
    const call = relay.call(`/v1/hooks/claude-code${query}`, { json: hookFixture(fixture) });
    const posted = await heldAndPosted();
    expect(posted.body.extendable).toBe(false);
    const ids = actionIds(requestMessage(posted));
    expect(ids.length).toBeGreaterThan(2);
    expect(ids).not.toContain(Action.moreTime);
    const decision = posted.body.kind === "permission" ? { behavior: "allow" as const, updatedInput: posted.body.input } : { reply: "y" as const };
    await relay.service.answer(posted.id, decision, ALICE);
    expect((await call).status).toBe(200);
  });

  it("takes no more time from a forged click: the call is denied at its deadline all the same, and the request expires then", async () => {
    const started = Date.now();
    const call = relay.call("/v1/hooks/claude-code?timeout=3", { json: hookFixture("pre-tool-use") });
    const posted = await heldAndPosted();
    expect(await relay.service.extend(posted.id, ALICE)).toMatchObject({ outcome: "no_more_time", reason: "not_extendable" });
    const { status, body } = await call;
    expect(status).toBe(200);
    expect(body).toMatchObject({ hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny" } });
    expect(Date.now() - started).toBeLessThan(3000);
    expect(await relay.service.get(posted.id)).toMatchObject({ status: "expired", expiresAt: posted.expiresAt });
  });
});
