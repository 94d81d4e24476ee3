/**
 * End to end for Claude Code users: the real Claude Code (bundled with the
 * Agent SDK, run offline against the fake-anthropic stand-in) configured with
 * docs/integrations.md's `type: "http"` hook snippet (Authorization header through
 * allowedEnvVars, `onFailure: "block"`, `?timeout=`), pointed at the whole
 * relay as `approval-relay serve` runs it; the person answers with signed
 * Slack clicks on the message the relay posted. No canUseTool: the hook is
 * the only thing that decides.
 */
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Settings } from "@anthropic-ai/claude-agent-sdk";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { STEP_GATE_REJECTED } from "../../../src/protocol/decisions.js";
import { Action } from "../../../src/slack/ids.js";
import { runAgent } from "../../helpers/agent-sdk.js";
import { echoToolResult, startFakeAnthropic, toolResults, toolUse, type FakeAnthropic } from "../../helpers/fake-anthropic.js";
import { AGENT_TOKEN, startFullRelay, type FullRelay } from "../../helpers/full-relay.js";

const DEPLOY = { command: "touch deployed.txt && echo deployed", description: "Deploy" };
const HOOK_TIMEOUT_SECONDS = 30;

let relay: FullRelay;
let model: FakeAnthropic;
let cwd: string;
let postsBefore = 0;

beforeAll(async () => {
  relay = await startFullRelay();
});
afterAll(async () => {
  await relay.close();
});
beforeEach(async () => {
  cwd = await mkdtemp(join(tmpdir(), "claude-code-hook-e2e-"));
  postsBefore = relay.slack.requestPosts().length;
  model = await startFakeAnthropic({ turns: [{ content: [toolUse("toolu_deploy", "Bash", DEPLOY)] }, echoToolResult()] });
});
afterEach(async () => {
  expect(model.problems).toEqual([]);
  expect(relay.slack.problems).toEqual([]);
  expect(relay.errors()).toEqual([]);
  await model.close();
  await rm(cwd, { recursive: true, force: true });
});

/** docs/integrations.md's settings.json snippet for one hook event, pointed at the relay. */
function readmeSettings(event: "PreToolUse" | "PermissionRequest"): Settings {
  const hook = {
    type: "http" as const,
    url: `${relay.url}/v1/hooks/claude-code?timeout=${HOOK_TIMEOUT_SECONDS}`,
    headers: { Authorization: "Bearer $RELAY_TOKEN" },
    allowedEnvVars: ["RELAY_TOKEN"],
    timeout: HOOK_TIMEOUT_SECONDS,
    onFailure: "block" as const,
  };
  return { hooks: { [event]: [{ matcher: "Bash", hooks: [hook] }] } };
}

/** Starts a Claude Code session with the hook, clicks `actionId` on the message the relay posts, and waits for the session to end. */
async function answerInSlack(event: "PreToolUse" | "PermissionRequest", actionId: string) {
  const run = runAgent({
    prompt: "Deploy.",
    anthropicUrl: model.url,
    cwd,
    settings: readmeSettings(event),
    env: { RELAY_TOKEN: AGENT_TOKEN.token },
  });
  const posted = await relay.message(postsBefore);
  expect(existsSync(join(cwd, "deployed.txt"))).toBe(false);
  await relay.click(posted, actionId);
  const session = await run;
  return { posted, session };
}

describe("Claude Code with the relay as its PreToolUse http hook, answered in Slack", () => {
  it("when the person clicks Yes, the command runs and its output reaches the model", async () => {
    const { posted } = await answerInSlack("PreToolUse", Action.stepYes);

    expect(JSON.stringify(posted.blocks)).toMatch(/Proposed action/);
    expect(existsSync(join(cwd, "deployed.txt"))).toBe(true);
    expect(toolResults(model.turns[1]!)).toEqual([{ toolUseId: "toolu_deploy", isError: false, text: "deployed" }]);
  });

  it("when the person clicks No, the command does not run and the model reads the step-by-step rejection", async () => {
    await answerInSlack("PreToolUse", Action.stepNo);

    expect(existsSync(join(cwd, "deployed.txt"))).toBe(false);
    expect(toolResults(model.turns[1]!)).toEqual([{ toolUseId: "toolu_deploy", isError: true, text: `PreToolUse:Bash hook error: ${STEP_GATE_REJECTED}` }]);
  });
});

describe("Claude Code with the relay as its PermissionRequest http hook, answered in Slack", () => {
  it("when the person clicks Allow, the command runs", async () => {
    const { posted } = await answerInSlack("PermissionRequest", Action.allow);

    expect(JSON.stringify(posted.blocks)).toMatch(/Permission request/);
    expect(existsSync(join(cwd, "deployed.txt"))).toBe(true);
    expect(toolResults(model.turns[1]!)).toEqual([{ toolUseId: "toolu_deploy", isError: false, text: "deployed" }]);
  });

  it("when the person clicks Deny, the command does not run and the model reads who denied it", async () => {
    await answerInSlack("PermissionRequest", Action.deny);

    expect(existsSync(join(cwd, "deployed.txt"))).toBe(false);
    expect(toolResults(model.turns[1]!)).toEqual([{ toolUseId: "toolu_deploy", isError: true, text: "Denied by alice in Slack." }]);
  });
});
