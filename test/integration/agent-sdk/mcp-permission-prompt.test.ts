/**
 * The real Claude Code (bundled with the Agent SDK, run offline against the
 * fake-anthropic stand-in) with the relay's MCP server as its permission
 * prompt tool, as docs/integrations.md sets it up: `mcpServers` with the
 * relay's POST /mcp and the agent token as header, and
 * `permissionPromptToolName: "mcp__approval-relay__approve"` (Claude Code's
 * `--permission-prompt-tool`). No canUseTool and no hook: the MCP tool alone
 * decides; the person answers with signed Slack clicks on the relay's message.
 */
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { Action, Field, View } from "../../../src/slack/ids.js";
import { runAgent } from "../../helpers/agent-sdk.js";
import { echoToolResult, startFakeAnthropic, toolResults, toolUse, type FakeAnthropic } from "../../helpers/fake-anthropic.js";
import { AGENT_TOKEN, startFullRelay, type FullRelay } from "../../helpers/full-relay.js";
import { state, viewSubmission } from "../../helpers/slack.js";

const DEPLOY = { command: "touch deployed.txt && echo deployed", description: "Deploy" };

let relay: FullRelay;
let model: FakeAnthropic;
let cwd: string;
let postsBefore = 0;
let modalsBefore = 0;
/** Each session's tool_use id: approve joins the request of a tool_use_id it has seen, as a retry would. */
let toolUseId = "";
let sessions = 0;

beforeAll(async () => {
  relay = await startFullRelay();
});
afterAll(async () => {
  await relay.close();
});
beforeEach(async () => {
  cwd = await mkdtemp(join(tmpdir(), "claude-code-mcp-"));
  postsBefore = relay.slack.requestPosts().length;
  modalsBefore = relay.slack.callsTo("views.open").length;
  toolUseId = `toolu_mcp_deploy_${(sessions += 1)}`;
  model = await startFakeAnthropic({ turns: [{ content: [toolUse(toolUseId, "Bash", DEPLOY)] }, echoToolResult()] });
});
afterEach(async () => {
  expect(model.problems).toEqual([]);
  expect(relay.slack.problems).toEqual([]);
  expect(relay.errors()).toEqual([]);
  await model.close();
  await rm(cwd, { recursive: true, force: true });
});

function startSession() {
  return runAgent({
    prompt: "Deploy.",
    anthropicUrl: model.url,
    cwd,
    mcpServers: { "approval-relay": { type: "http", url: `${relay.url}/mcp`, headers: { Authorization: `Bearer ${AGENT_TOKEN.token}` } } },
    permissionPromptToolName: "mcp__approval-relay__approve",
  });
}

describe("Claude Code with the relay's MCP approve tool as its permission prompt tool", () => {
  it("when the person clicks Allow, the command runs and its output reaches the model", async () => {
    const session = startSession();
    const posted = await relay.message(postsBefore);
    expect(JSON.stringify(posted.blocks)).toMatch(/Permission request/);
    expect(existsSync(join(cwd, "deployed.txt"))).toBe(false);
    await relay.click(posted, Action.allow);
    await session;
    expect(existsSync(join(cwd, "deployed.txt"))).toBe(true);
    expect(toolResults(model.turns[1]!)).toEqual([{ toolUseId, isError: false, text: "deployed" }]);
  });

  it("when the person edits the command, the edited command runs instead", async () => {
    const session = startSession();
    await relay.click(await relay.message(postsBefore), Action.edit);
    const opened = await relay.modal(modalsBefore);
    const edited = JSON.stringify({ command: "touch edited.txt && echo edited", description: "Deploy" });
    const values = { [Field.editJson.block]: { [Field.editJson.action]: state.text(edited) } };
    expect(await relay.post(viewSubmission({ callbackId: View.edit, privateMetadata: opened.privateMetadata, values }))).toBe("");
    await session;
    expect(existsSync(join(cwd, "deployed.txt"))).toBe(false);
    expect(existsSync(join(cwd, "edited.txt"))).toBe(true);
    expect(toolResults(model.turns[1]!)).toEqual([{ toolUseId, isError: false, text: "edited" }]);
  });

  it("when the person clicks Deny, the command does not run and the model reads who denied it", async () => {
    const session = startSession();
    await relay.click(await relay.message(postsBefore), Action.deny);
    await session;
    expect(existsSync(join(cwd, "deployed.txt"))).toBe(false);
    expect(toolResults(model.turns[1]!)).toEqual([{ toolUseId, isError: true, text: "Denied by alice in Slack." }]);
  });
});
