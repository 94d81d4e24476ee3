/**
 * The real Claude Code (bundled with the Agent SDK, run offline against the
 * fake-anthropic stand-in) with the relay as its `http` hook, configured
 * exactly as docs/integrations.md's settings.json snippet: the hook input reaches the
 * relay, the person's answer decides what Claude Code does, and the relay's
 * deny arrives before Claude Code's own hook timeout. Also proves the
 * fixtures are what Claude Code sends: the request the relay makes from the
 * real call equals the one it makes from the fixture, ids and paths aside.
 */
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { query, type SDKMessage, type Settings } from "@anthropic-ai/claude-agent-sdk";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { parseHookInput } from "../../../src/requests/hooks/input.js";
import { hookRequestBody } from "../../../src/requests/hooks/request.js";
import type { RequestRecord } from "../../../src/requests/model.js";
import { offlineEnv } from "../../helpers/agent-sdk.js";
import { echoToolResult, startFakeAnthropic, toolResults, toolUse, type FakeAnthropic } from "../../helpers/fake-anthropic.js";
import { startApiRelay, type ApiRelay } from "../../helpers/api-relay.js";
import { hookFixture, type HookFixture } from "../../fixtures/claude-code.js";
import { ALICE } from "../../fixtures/people.js";
import { until } from "../../helpers/until.js";

let relay: ApiRelay;
let model: FakeAnthropic;
let cwd: string;
beforeEach(async () => {
  relay = await startApiRelay();
  cwd = await mkdtemp(join(tmpdir(), "hook-cc-cwd-"));
  model = await startFakeAnthropic({
    turns: [{ content: [toolUse("toolu_01Deploy", "Bash", { command: "touch deployed.txt && echo deployed", description: "Deploy" })] }, echoToolResult()],
  });
});
afterEach(async () => {
  await model.close();
  await relay.close();
  await rm(cwd, { recursive: true, force: true });
});

type HookEvent = "PreToolUse" | "PermissionRequest";

/** The docs/integrations.md snippet for one event, pointed at the test relay. */
function readmeHooks(event: HookEvent, timeout: number): Settings["hooks"] {
  const hook = {
    type: "http" as const,
    url: `${relay.url}/v1/hooks/claude-code?timeout=${timeout}`,
    headers: { Authorization: "Bearer $RELAY_TOKEN" },
    allowedEnvVars: ["RELAY_TOKEN"],
    timeout,
    onFailure: "block" as const,
  };
  return { [event]: [{ matcher: "Bash", hooks: [hook] }] };
}

/** Runs one Claude Code session with `hooks`; resolves with what it streamed once it ends. */
async function runClaudeCode(hooks: Settings["hooks"], abortController = new AbortController()): Promise<{ messages: SDKMessage[]; error?: unknown }> {
  const home = await mkdtemp(join(tmpdir(), "hook-cc-home-"));
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    abortController.abort();
  }, 15_000);
  const run = query({
    prompt: "Deploy.",
    options: {
      cwd,
      permissionMode: "default",
      maxTurns: 3,
      settingSources: [],
      persistSession: false,
      abortController,
      env: { ...offlineEnv(model.url, home), RELAY_TOKEN: relay.tokens[0]!.token },
      settings: { hooks },
    },
  });
  const messages: SDKMessage[] = [];
  let error: unknown;
  try {
    for await (const message of run) messages.push(message);
  } catch (thrown) {
    error = thrown;
  } finally {
    clearTimeout(timer);
    run.close();
    await rm(home, { recursive: true, force: true });
  }
  if (timedOut) throw new Error("Claude Code did not finish in time");
  return { messages, error };
}

/** The request the relay holds for Claude Code, once it is posted. */
async function heldRequest(): Promise<RequestRecord> {
  await until(() => relay.service.waiting > 0 && relay.messenger.posts.length > 0, 12_000, "Claude Code's hook call to reach the relay");
  return relay.messenger.posts[0]!;
}

/**
 * The request body with what differs between sessions replaced by
 * placeholders. Suggestions depend on the command, so only their types are
 * kept: Claude Code suggests a rule for some commands and not for others.
 */
function comparable(body: RequestRecord["body"]): unknown {
  const suggestions = "suggestions" in body ? body.suggestions?.map((s) => s.type).filter((type) => type !== "addRules") : undefined;
  const text = JSON.stringify({ ...body, ...(suggestions ? { suggestions } : {}) })
    .replace(/"sessionId":"[^"]+"/, '"sessionId":"<session>"')
    .replace(/"cwd":"[^"]+"/, '"cwd":"<cwd>"')
    .replace(/"toolUseId":"[^"]+"/, '"toolUseId":"<tool use id>"')
    .replace(/"command":"[^"]+"/, '"command":"<command>"')
    .replace(/"description":"[^"]+"/, '"description":"<description>"');
  return JSON.parse(text);
}

function fixtureRequest(name: HookFixture, timeoutSeconds: number): unknown {
  return comparable(hookRequestBody(parseHookInput(hookFixture(name)), { timeoutSeconds }));
}

describe("Claude Code with the relay as its PreToolUse http hook", () => {
  it("when the approver answers y, the command runs, and the relay saw the same fields as in the fixture", async () => {
    const session = runClaudeCode(readmeHooks("PreToolUse", 30));
    const request = await heldRequest();
    expect(comparable(request.body)).toEqual(fixtureRequest("pre-tool-use", 27));
    await relay.service.answer(request.id, { reply: "y" }, ALICE);
    await session;
    expect(existsSync(join(cwd, "deployed.txt"))).toBe(true);
    expect(toolResults(model.turns[1]!)).toEqual([{ toolUseId: "toolu_01Deploy", isError: false, text: "deployed" }]);
  });

  it("when the approver answers n, the command does not run and the model reads the rejection", async () => {
    const session = runClaudeCode(readmeHooks("PreToolUse", 30));
    await relay.service.answer((await heldRequest()).id, { reply: "n" }, ALICE);
    await session;
    expect(existsSync(join(cwd, "deployed.txt"))).toBe(false);
    expect(toolResults(model.turns[1]!)).toEqual([
      { toolUseId: "toolu_01Deploy", isError: true, text: "PreToolUse:Bash hook error: Action rejected by the user in step-by-step mode." },
    ]);
  });

  it("when the approver answers q, the command does not run and the turn stops", async () => {
    const session = runClaudeCode(readmeHooks("PreToolUse", 30));
    await relay.service.answer((await heldRequest()).id, { reply: "q" }, ALICE);
    const { messages } = await session;
    expect(existsSync(join(cwd, "deployed.txt"))).toBe(false);
    expect(model.turns).toHaveLength(1);
    expect(messages.at(-1)).toMatchObject({ type: "result", terminal_reason: "hook_stopped" });
  });

  it("when no one answers, the relay's deny reaches Claude Code before its hook timeout, so the command never runs", async () => {
    const started = Date.now();
    await runClaudeCode(readmeHooks("PreToolUse", 4));
    expect(Date.now() - started).toBeLessThan(12_000);
    expect(existsSync(join(cwd, "deployed.txt"))).toBe(false);
    expect(toolResults(model.turns[1]!)).toEqual([
      {
        toolUseId: "toolu_01Deploy",
        isError: true,
        text: "PreToolUse:Bash hook error: No one answered in Slack within 2 seconds, so the tool call was denied.",
      },
    ]);
    expect(relay.messenger.ended.map((r) => r.status)).toEqual(["expired"]);
  });
});

describe("Claude Code stopped while the relay holds its hook call", () => {
  it("cancels the request, and the Slack message says Claude Code closed the connection", async () => {
    const stop = new AbortController();
    const session = runClaudeCode(readmeHooks("PreToolUse", 30), stop);
    const request = await heldRequest();
    stop.abort();
    await session;
    const deadline = Date.now() + 5000;
    while (relay.messenger.ended.length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(relay.messenger.ended).toEqual([
      expect.objectContaining({ id: request.id, status: "cancelled", cancelledBy: "claude-code", error: "Claude Code closed the connection" }),
    ]);
    expect(existsSync(join(cwd, "deployed.txt"))).toBe(false);
  });
});

describe("Claude Code with the relay as its PermissionRequest http hook", () => {
  it("when the approver clicks Allow, the command runs, and the relay saw the same fields as in the fixture", async () => {
    const session = runClaudeCode(readmeHooks("PermissionRequest", 30));
    const request = await heldRequest();
    expect(comparable(request.body)).toEqual(fixtureRequest("permission-request", 27));
    await relay.service.answer(request.id, { behavior: "allow", updatedInput: request.body.kind === "permission" ? request.body.input : {} }, ALICE);
    await session;
    expect(existsSync(join(cwd, "deployed.txt"))).toBe(true);
  });

  it("when the approver denies with a reason, the command does not run and the model reads the reason", async () => {
    const session = runClaudeCode(readmeHooks("PermissionRequest", 30));
    await relay.service.answer((await heldRequest()).id, { behavior: "deny", message: "Not during the freeze." }, ALICE);
    await session;
    expect(existsSync(join(cwd, "deployed.txt"))).toBe(false);
    expect(toolResults(model.turns[1]!)).toEqual([{ toolUseId: "toolu_01Deploy", isError: true, text: "Not during the freeze." }]);
  });
});
