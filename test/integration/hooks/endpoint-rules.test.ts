/**
 * POST /v1/hooks/claude-code under an "Allow for a while" rule, over real
 * HTTP with the JSON Claude Code sends: once a person chose "Allow for 15
 * min" on one of a session's Bash calls (here through the service, as the
 * Slack listener does), that session's next Bash calls get their allow at
 * once, PermissionRequest and PreToolUse alike, with nothing posted; another
 * session is asked as before, and so is this one once the rule is revoked.
 * A call without a tool_use_id takes the answer of the request it just
 * created, as it would a person's (one request per call, one use each).
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startApiRelay, type ApiRelay } from "../../helpers/api-relay.js";
import { hookFixture } from "../../fixtures/claude-code.js";
import { ALICE } from "../../fixtures/people.js";
import { until } from "../../helpers/until.js";

let relay: ApiRelay;
beforeEach(async () => {
  relay = await startApiRelay();
});
afterEach(async () => {
  await relay.close();
});

const hook = (body: unknown) => relay.call("/v1/hooks/claude-code", { json: body });

/** Resolves once the relay holds `count` calls. */
async function held(count: number) {
  await until(
    () => relay.service.waiting === count,
    3000,
    () => `${count} held calls (have ${relay.service.waiting})`,
  );
}

/** A Bash PermissionRequest of `session` running `command`. */
const bash = (command: string, session = "00eab317-352c-497b-8392-08d449b6ae9e") => ({
  ...hookFixture("permission-request"),
  session_id: session,
  tool_input: { command },
});
const allowed = { hookSpecificOutput: { hookEventName: "PermissionRequest", decision: { behavior: "allow" } } };

/** The first call of the session, held until Alice clicks "Allow for 15 min" on it; resolves the rule's id. */
async function aliceAllowsTheSession(): Promise<string> {
  const first = hook(bash("npm test"));
  await held(1);
  const grant = await relay.service.allowForAWhile(relay.stored[0]!.id, ALICE);
  expect(await first).toMatchObject({ status: 200, body: allowed });
  const rule = await grant.rule;
  await relay.service.idle();
  return rule!.id;
}

describe("a Claude Code session under a rule", () => {
  it("gets its allow at once for the next Bash calls, with nothing posted, each answered in the rule creator's name", async () => {
    await aliceAllowsTheSession();
    expect(relay.messenger.posts).toHaveLength(1);
    for (const command of ["npm run lint", "git status"]) {
      expect(await hook(bash(command))).toMatchObject({ status: 200, body: allowed });
    }
    await relay.service.idle();
    expect(relay.messenger.posts).toHaveLength(1);
    expect(relay.stored.slice(1).map((record) => [record.status, record.answeredBy?.id, record.body.kind])).toStrictEqual([
      ["answered", ALICE.id, "permission"],
      ["answered", ALICE.id, "permission"],
    ]);
    expect((await relay.service.rules!.list({ limit: 1 }))[0]?.uses).toBe(2);
  });

  it("gets allow for a PreToolUse of the same tool, which the relay asks as a step gate", async () => {
    await aliceAllowsTheSession();
    const preToolUse = { ...hookFixture("pre-tool-use"), tool_use_id: "toolu_02RULE" };
    expect(await hook(preToolUse)).toMatchObject({ status: 200, body: { hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "allow" } } });
    expect(relay.messenger.posts).toHaveLength(1);
  });

  it("another session's call is posted and held for a person", async () => {
    await aliceAllowsTheSession();
    const other = hook(bash("npm test", "11111111-2222-4333-8444-555555555555"));
    await held(1);
    expect(relay.messenger.posts).toHaveLength(2);
    const id = relay.stored.at(-1)!.id;
    await relay.service.answer(id, { behavior: "deny", message: "Not this one." }, ALICE);
    expect((await other).body).toMatchObject({ hookSpecificOutput: { decision: { behavior: "deny" } } });
  });

  it("once the rule is revoked, the session's next call is posted and held again", async () => {
    const rule = await aliceAllowsTheSession();
    expect((await relay.call(`/v1/rules/${rule}`, { method: "DELETE" })).status).toBe(200);
    const next = hook(bash("npm run deploy"));
    await held(1);
    expect(relay.messenger.posts).toHaveLength(2);
    await relay.service.answer(relay.stored.at(-1)!.id, { behavior: "allow", updatedInput: { command: "npm run deploy" } }, ALICE);
    expect((await next).body).toStrictEqual(allowed);
  });
});
