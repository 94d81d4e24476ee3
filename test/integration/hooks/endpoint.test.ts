/**
 * POST /v1/hooks/claude-code over real HTTP, with the exact JSON Claude Code
 * sends (test/fixtures/claude-code, captured from Claude Code 2.1.332): the
 * call is held until the person answers (here through the service, as the
 * Slack listeners do) and the held response carries the hook JSON.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Decision } from "../../../src/protocol/decisions.js";
import { createMemoryStore } from "../../../src/store/memory-store.js";
import { DEFAULT_CHANNEL, startApiRelay, type ApiRelay } from "../../helpers/api-relay.js";
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

function hook(body: unknown, query = "", signal?: AbortSignal) {
  return relay.call(`/v1/hooks/claude-code${query}`, { json: body, ...(signal ? { signal } : {}) });
}

/** Resolves once the relay holds `count` calls. */
async function held(count: number) {
  await until(
    () => relay.service.waiting === count,
    3000,
    () => `${count} held calls (have ${relay.service.waiting})`,
  );
}

/** Sends the fixture, waits until the call is held, answers as alice, returns what Claude Code received. */
async function answerHook(name: HookFixture, decision: Decision) {
  const call = hook(hookFixture(name));
  await held(1);
  const id = relay.stored[0]!.id;
  const result = await relay.service.answer(id, decision, ALICE);
  expect(result.outcome).toBe("applied");
  return call;
}

const permission = (decision: unknown) => ({ hookSpecificOutput: { hookEventName: "PermissionRequest", decision } });
const preToolUse = (permissionDecision: "allow" | "deny", permissionDecisionReason?: string) => ({
  hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision, ...(permissionDecisionReason ? { permissionDecisionReason } : {}) },
});
const fixtureInput = hookFixture("permission-request").tool_input as Record<string, unknown>;
const fixtureSuggestions = hookFixture("permission-request").permission_suggestions as Array<{ type: string } & Record<string, unknown>>;

describe("a PermissionRequest hook", () => {
  it("is posted once as a permission request that shows Claude Code, the session and the suggestions, and expires when the relay must reply", async () => {
    const before = Date.now();
    const call = hook(hookFixture("permission-request"));
    await held(1);
    await relay.service.idle();
    expect(relay.messenger.posts).toHaveLength(1);
    const posted = relay.messenger.posts[0]!;
    expect(posted).toMatchObject({
      status: "pending",
      tokenName: "ci-bot",
      channel: DEFAULT_CHANNEL,
      body: {
        kind: "permission",
        toolName: "Bash",
        input: fixtureInput,
        suggestions: fixtureSuggestions,
        agent: { name: "Claude Code", sessionId: "00eab317-352c-497b-8392-08d449b6ae9e", cwd: "/home/dev/web" },
        timeoutSeconds: 595,
      },
    });
    expect(posted.expiresAt - before).toBeGreaterThanOrEqual(595_000);
    expect(posted.expiresAt - Date.now()).toBeLessThanOrEqual(595_000);
    await relay.service.answer(posted.id, { behavior: "allow", updatedInput: fixtureInput }, ALICE);
    expect((await call).status).toBe(200);
  });

  it("when the approver clicks Allow, the held call returns allow and Claude Code runs the original input", async () => {
    const { status, headers, body } = await answerHook("permission-request", { behavior: "allow", updatedInput: fixtureInput });
    expect(status).toBe(200);
    expect(headers.get("content-type")).toMatch(/^application\/json/);
    expect(body).toEqual(permission({ behavior: "allow" }));
  });

  it("when the approver clicks Always allow, Claude Code gets the permission updates to save", async () => {
    const chosen = [fixtureSuggestions[0]!];
    const { body } = await answerHook("permission-request", { behavior: "allow", updatedInput: fixtureInput, updatedPermissions: chosen });
    expect(body).toEqual(permission({ behavior: "allow", updatedPermissions: chosen }));
  });

  it("when the approver edits the command, Claude Code gets allow with the edited input", async () => {
    const edited = { command: "npm run deploy -- --env staging", description: "Deploy the web app to staging" };
    const { body } = await answerHook("permission-request", { behavior: "allow", updatedInput: edited });
    expect(body).toEqual(permission({ behavior: "allow", updatedInput: edited }));
  });

  it("when the approver denies with a reason, Claude Code gets deny with that message", async () => {
    const { body } = await answerHook("permission-request", { behavior: "deny", message: "Not during the freeze." });
    expect(body).toEqual(permission({ behavior: "deny", message: "Not during the freeze." }));
  });

  it("when the approver denies and stops, Claude Code gets deny with interrupt", async () => {
    const { body } = await answerHook("permission-request", { behavior: "deny", message: "Denied by alice in Slack.", interrupt: true });
    expect(body).toEqual(permission({ behavior: "deny", message: "Denied by alice in Slack.", interrupt: true }));
  });
});

describe("a PreToolUse hook", () => {
  it("is posted as a step gate with the tool use id, in the channel the URL names", async () => {
    const call = hook(hookFixture("pre-tool-use"), "?timeout=30&channel=C0DEPLOYS99");
    await held(1);
    await relay.service.idle();
    expect(relay.messenger.posts[0]).toMatchObject({
      channel: "C0DEPLOYS99",
      body: { kind: "step_gate", toolName: "Bash", toolUseId: "toolu_01D7FLrfh4GYq7yT1ULFeyMV", timeoutSeconds: 27, agent: { name: "Claude Code" } },
    });
    await relay.service.answer(relay.stored[0]!.id, { reply: "y" }, ALICE);
    await call;
  });

  it("y lets the tool run", async () => {
    const { status, body } = await answerHook("pre-tool-use", { reply: "y" });
    expect(status).toBe(200);
    expect(body).toEqual(preToolUse("allow"));
  });

  it("n denies with the step-by-step rejection text", async () => {
    const { body } = await answerHook("pre-tool-use", { reply: "n" });
    expect(body).toEqual(preToolUse("deny", "Action rejected by the user in step-by-step mode."));
  });

  it("q denies and stops the turn", async () => {
    const { body } = await answerHook("pre-tool-use", { reply: "q" });
    expect(body).toEqual({
      continue: false,
      stopReason: "Execution stopped manually by the user.",
      ...preToolUse("deny", "Execution stopped manually by the user."),
    });
  });
});

describe("when no one answers", () => {
  it("with ?timeout=3 the relay denies about two seconds before Claude Code would give up, and the Slack message shows Expired", async () => {
    const started = Date.now();
    const { status, body } = await hook(hookFixture("pre-tool-use"), "?timeout=3");
    const elapsed = Date.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(900);
    expect(elapsed).toBeLessThan(2000);
    expect(status).toBe(200);
    expect(body).toEqual(preToolUse("deny", "No one answered in Slack within 1 second, so the tool call was denied."));
    await relay.service.idle();
    expect(relay.messenger.ended.map((r) => r.status)).toEqual(["expired"]);
  });

  it("a PermissionRequest gets a deny whose message says no one answered", async () => {
    const { body } = await hook(hookFixture("permission-request"), "?timeout=4");
    expect(body).toEqual(permission({ behavior: "deny", message: "No one answered in Slack within 2 seconds, so the tool call was denied." }));
  });

  it("without ?timeout= the configured hook timeout sets the deadline", async () => {
    await relay.close();
    relay = await startApiRelay({ http: { hookTimeoutSeconds: 20 } });
    const call = hook(hookFixture("pre-tool-use"));
    await held(1);
    expect(relay.stored[0]!.body.timeoutSeconds).toBe(18);
    await relay.service.answer(relay.stored[0]!.id, { reply: "n" }, ALICE);
    await call;
  });
});

describe("when Claude Code closes the connection", () => {
  it("the request is cancelled and the Slack message says Claude Code closed the connection", async () => {
    const abort = new AbortController();
    const call = hook(hookFixture("pre-tool-use"), "", abort.signal).catch((error: unknown) => error);
    await held(1);
    await relay.service.idle();
    abort.abort();
    expect(await call).toBeInstanceOf(Error);
    await held(0);
    await until(() => relay.messenger.ended.length === 1);
    expect(relay.messenger.ended[0]).toMatchObject({ status: "cancelled", cancelledBy: "claude-code", error: "Claude Code closed the connection" });
    expect(await relay.service.get(relay.stored[0]!.id)).toMatchObject({ status: "cancelled" });
  });

  it("while a retry of the same tool call still waits, the request stays open for it", async () => {
    const abort = new AbortController();
    const first = hook(hookFixture("pre-tool-use"), "", abort.signal).catch((error: unknown) => error);
    const retry = hook(hookFixture("pre-tool-use"));
    await held(2);
    abort.abort();
    await first;
    await held(1);
    await relay.service.answer(relay.stored[0]!.id, { reply: "y" }, ALICE);
    expect((await retry).body).toEqual(preToolUse("allow"));
  });
});

describe("retries", () => {
  it("a retried PreToolUse (same session and tool_use_id) joins the first request: one post, both calls answered", async () => {
    const first = hook(hookFixture("pre-tool-use"));
    const retry = hook(hookFixture("pre-tool-use"));
    await held(2);
    await relay.service.idle();
    expect(relay.messenger.posts).toHaveLength(1);
    await relay.service.answer(relay.messenger.posts[0]!.id, { reply: "n" }, ALICE);
    const denied = preToolUse("deny", "Action rejected by the user in step-by-step mode.");
    expect((await first).body).toEqual(denied);
    expect((await retry).body).toEqual(denied);
  });

  it("a retry that arrives after the answer gets it at once, without a second post", async () => {
    await answerHook("pre-tool-use", { reply: "y" });
    const started = Date.now();
    const { body } = await hook(hookFixture("pre-tool-use"));
    expect(Date.now() - started).toBeLessThan(500);
    expect(body).toEqual(preToolUse("allow"));
    await relay.service.idle();
    expect(relay.messenger.posts).toHaveLength(1);
  });

  it("a retry after Claude Code dropped the first call asks again instead of denying", async () => {
    const abort = new AbortController();
    const first = hook(hookFixture("pre-tool-use"), "", abort.signal).catch((error: unknown) => error);
    await held(1);
    abort.abort();
    await first;
    await until(() => relay.messenger.ended.length === 1);
    const retry = hook(hookFixture("pre-tool-use"));
    await held(1);
    await relay.service.idle();
    expect(relay.messenger.posts).toHaveLength(2);
    await relay.service.answer(relay.messenger.posts[1]!.id, { reply: "y" }, ALICE);
    expect((await retry).body).toEqual(preToolUse("allow"));
  });

  it("a retried PermissionRequest (which has no tool_use_id) joins the pending request", async () => {
    const first = hook(hookFixture("permission-request"));
    const retry = hook(hookFixture("permission-request"));
    await held(2);
    await relay.service.idle();
    expect(relay.messenger.posts).toHaveLength(1);
    await relay.service.answer(relay.messenger.posts[0]!.id, { behavior: "deny", message: "No." }, ALICE);
    expect((await first).body).toEqual(permission({ behavior: "deny", message: "No." }));
    expect((await retry).body).toEqual(permission({ behavior: "deny", message: "No." }));
  });

  it("the same command asked for again after an Allow is asked again, never allowed by the earlier answer", async () => {
    await answerHook("permission-request", { behavior: "allow", updatedInput: fixtureInput });
    const again = hook(hookFixture("permission-request"));
    await held(1);
    await relay.service.idle();
    expect(relay.messenger.posts).toHaveLength(2);
    await relay.service.answer(relay.messenger.posts[1]!.id, { behavior: "deny", message: "Once was enough." }, ALICE);
    expect((await again).body).toEqual(permission({ behavior: "deny", message: "Once was enough." }));
  });

  it("the same tool call from another agent token is another request", async () => {
    const first = hook(hookFixture("pre-tool-use"));
    const other = relay.call("/v1/hooks/claude-code", { json: hookFixture("pre-tool-use"), as: "laptop" });
    await held(2);
    await relay.service.idle();
    expect(relay.messenger.posts.map((p) => p.tokenName).sort()).toEqual(["ci-bot", "laptop"]);
    for (const post of relay.messenger.posts) await relay.service.answer(post.id, { reply: "y" }, ALICE);
    await Promise.all([first, other]);
  });
});

describe("when the relay itself fails", () => {
  it("Claude Code gets a 200 deny with a reference, never a 5xx that would let the tool run", async () => {
    await relay.close();
    const store = createMemoryStore();
    relay = await startApiRelay({ store: { ...store, create: () => Promise.reject(new Error("store is down")) } });
    const { status, body } = await hook(hookFixture("pre-tool-use"));
    expect(status).toBe(200);
    expect(body).toEqual(
      preToolUse("deny", expect.stringMatching(/^The relay failed to handle this request \(reference [0-9a-f-]{36}\)\. The tool call was denied\.$/)),
    );
    expect(relay.logs.some((line) => line.includes("store is down"))).toBe(true);
  });
});
