/**
 * The real Claude Code (bundled with the Agent SDK, offline against the
 * fake-anthropic stand-in) reads a held hook reply that starts with keepalive
 * spaces: its `http` hook goes through a proxy that cuts connections idle for
 * 2 s, the relay (as `approval-relay serve` runs it) writes a space every
 * second, and the person answers in Slack after 3 s. Claude Code must still
 * parse the hook JSON after the spaces and obey the decision.
 */
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Settings } from "@anthropic-ai/claude-agent-sdk";
import { afterAll, afterEach, beforeAll, beforeEach, expect, it } from "vitest";
import { Action } from "../../../src/slack/ids.js";
import { runAgent } from "../../helpers/agent-sdk.js";
import { echoToolResult, startFakeAnthropic, toolResults, toolUse, type FakeAnthropic } from "../../helpers/fake-anthropic.js";
import { AGENT_TOKEN, startFullRelay, type FullRelay } from "../../helpers/full-relay.js";
import { startIdleProxy, type IdleProxy } from "../../helpers/idle-proxy.js";
import { sleep } from "../../helpers/until.js";

const DEPLOY = { command: "touch deployed.txt && echo deployed", description: "Deploy" };
const HOOK_TIMEOUT_SECONDS = 30;
const PROXY_IDLE_MS = 2000;
/** Longer than the proxy's idle timeout: without keepalive the proxy would cut the call. */
const ANSWER_AFTER_MS = 3500;

let relay: FullRelay;
let proxy: IdleProxy;
let model: FakeAnthropic;
let cwd: string;

beforeAll(async () => {
  relay = await startFullRelay({ env: { RELAY_HOOK_KEEPALIVE: "1" } });
  proxy = await startIdleProxy(relay.url, PROXY_IDLE_MS);
});
afterAll(async () => {
  await proxy.close();
  await relay.close();
});
beforeEach(async () => {
  cwd = await mkdtemp(join(tmpdir(), "claude-code-keepalive-"));
  model = await startFakeAnthropic({ turns: [{ content: [toolUse("toolu_deploy", "Bash", DEPLOY)] }, echoToolResult()] });
});
afterEach(async () => {
  expect(model.problems).toEqual([]);
  expect(relay.errors()).toEqual([]);
  await model.close();
  await rm(cwd, { recursive: true, force: true });
});

function settings(event: "PreToolUse" | "PermissionRequest"): Settings {
  const hook = {
    type: "http" as const,
    url: `${proxy.url}/v1/hooks/claude-code?timeout=${HOOK_TIMEOUT_SECONDS}`,
    headers: { Authorization: "Bearer $RELAY_TOKEN" },
    allowedEnvVars: ["RELAY_TOKEN"],
    timeout: HOOK_TIMEOUT_SECONDS,
    onFailure: "block" as const,
  };
  return { hooks: { [event]: [{ matcher: "Bash", hooks: [hook] }] } };
}

async function answerLate(event: "PreToolUse" | "PermissionRequest", actionId: string, messageIndex: number) {
  const run = runAgent({
    prompt: "Deploy.",
    anthropicUrl: model.url,
    cwd,
    settings: settings(event),
    env: { RELAY_TOKEN: AGENT_TOKEN.token },
    timeoutMs: 25_000,
  });
  const posted = await relay.message(messageIndex);
  await sleep(ANSWER_AFTER_MS);
  await relay.click(posted, actionId);
  await run;
  const reply = proxy.replies.find((text) => text.startsWith("HTTP/1.1 200") && /hookSpecificOutput/.test(text) && text.includes(event))!;
  return { body: reply.slice(reply.indexOf("\r\n\r\n") + 4) };
}

it(
  "when the person clicks Yes after the proxy's idle timeout, Claude Code parses the reply after the keepalive spaces and runs the command",
  { timeout: 40_000 },
  async () => {
    const { body } = await answerLate("PreToolUse", Action.stepYes, 0);

    expect(proxy.cuts).toBe(0);
    // Chunked: the keepalive spaces come in their own chunks before the JSON.
    expect(body).toMatch(/^(1\r\n \r\n){2,}[0-9a-f]+\r\n\{/);
    expect(existsSync(join(cwd, "deployed.txt"))).toBe(true);
    expect(toolResults(model.turns[1]!)).toEqual([{ toolUseId: "toolu_deploy", isError: false, text: "deployed" }]);
  },
);

it(
  "when the person clicks Deny after the proxy's idle timeout, Claude Code reads the deny after the keepalive spaces and the command does not run",
  { timeout: 40_000 },
  async () => {
    const { body } = await answerLate("PermissionRequest", Action.deny, 1);

    expect(proxy.cuts).toBe(0);
    expect(body).toMatch(/^(1\r\n \r\n){2,}[0-9a-f]+\r\n\{/);
    expect(existsSync(join(cwd, "deployed.txt"))).toBe(false);
    expect(toolResults(model.turns[1]!)).toEqual([{ toolUseId: "toolu_deploy", isError: true, text: "Denied by alice in Slack." }]);
  },
);
