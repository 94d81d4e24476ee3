/**
 * POST /v1/hooks/claude-code when no one answers under a route's
 * `onTimeout: halt` (docs/architecture.md §7), over real HTTP with the JSON Claude Code
 * sends: the expired request carries the decision that stops the agent, and
 * the held call answers with it; under another route the deny is the usual
 * one and the turn goes on.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Route } from "../../../src/requests/route-schema.js";
import { startApiRelay, type ApiRelay } from "../../helpers/api-relay.js";
import { hookFixture } from "../../fixtures/claude-code.js";

let relay: ApiRelay;
beforeEach(async () => {
  relay = await startApiRelay({ routes: [Route.parse({ match: { token: "ci-bot" }, onTimeout: "halt" })] });
});
afterEach(async () => {
  await relay.close();
});

function hook(body: unknown, query: string, as = "ci-bot") {
  return relay.call(`/v1/hooks/claude-code${query}`, { json: body, as });
}

describe("a hook call that no one answers under onTimeout: halt", () => {
  it("a PreToolUse call gets the q output: deny, continue false and a stop reason saying no one answered; the request expired with q", async () => {
    const { status, body } = await hook(hookFixture("pre-tool-use"), "?timeout=3");
    const halted = "No one answered in Slack within 1 second, so the tool call was denied and the agent was stopped.";
    expect(status).toBe(200);
    expect(body).toEqual({
      continue: false,
      stopReason: halted,
      hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: halted },
    });
    expect(await relay.service.get(relay.stored[0]!.id)).toMatchObject({ status: "expired", decision: { reply: "q" } });
    await relay.service.idle();
    expect(relay.messenger.ended.map(({ status, decision }) => ({ status, decision }))).toStrictEqual([{ status: "expired", decision: { reply: "q" } }]);
  });

  it("a PermissionRequest call gets a deny with interrupt whose message says no one answered in time", async () => {
    const { status, body } = await hook(hookFixture("permission-request"), "?timeout=4");
    const decision = {
      behavior: "deny",
      message: "No one answered in Slack within 2 seconds, so the tool call was denied and the agent was stopped.",
      interrupt: true,
    };
    expect(status).toBe(200);
    expect(body).toEqual({ hookSpecificOutput: { hookEventName: "PermissionRequest", decision } });
    expect(await relay.service.get(relay.stored[0]!.id)).toMatchObject({ status: "expired", decision });
  });

  it("under another route the expiry carries nothing: a plain deny, and the turn goes on", async () => {
    const { body } = await hook(hookFixture("pre-tool-use"), "?timeout=3", "laptop");
    expect(body).toEqual({
      hookSpecificOutput: {
        hookEventName: "PreToolUse",
        permissionDecision: "deny",
        permissionDecisionReason: "No one answered in Slack within 1 second, so the tool call was denied.",
      },
    });
    expect((await relay.service.get(relay.stored[0]!.id))?.decision).toBeUndefined();
  });
});
