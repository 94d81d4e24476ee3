/**
 * End to end with the real Claude Agent SDK, offline: the bundled Claude Code
 * talks to the fake-anthropic stand-in, its permission prompts go through our
 * client adapters (createCanUseTool, createStepGate) to the whole relay as
 * `approval-relay serve` runs it, the relay posts to a stand-in of Slack's
 * Web API, and the test answers as a person in Slack would: signed clicks,
 * modal submissions and thread replies built from what the relay posted.
 * Every case asserts what the SDK did: what ran on disk, and what the model
 * was told (the tool_result in the next Messages API request).
 */
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { CanUseTool, HookCallbackMatcher, PermissionUpdate } from "@anthropic-ai/claude-agent-sdk";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createCanUseTool, createStepGate, RelayClient, STEP_GATE_REJECTED } from "../../../src/client/index.js";
import { Action, Field, View } from "../../../src/slack/ids.js";
import { runAgent } from "../../helpers/agent-sdk.js";
import { echoToolResult, startFakeAnthropic, toolResults, toolUse, type FakeAnthropic, type FakeTurn } from "../../helpers/fake-anthropic.js";
import { AGENT_TOKEN, startFullRelay, type FullRelay, type PostedMessage } from "../../helpers/full-relay.js";
import { messageEvent, state, viewSubmission } from "../../helpers/slack.js";
import { COLOR_QUESTION } from "../../fixtures/questions.js";

const HELLO = { command: "touch ran.txt && echo hello", description: "Say hello" };

let relay: FullRelay;
let client: RelayClient;
let model: FakeAnthropic | undefined;
let cwd: string;
/** Messages and modals the relay had posted before the current test. */
let postsBefore = 0;
let modalsBefore = 0;

beforeAll(async () => {
  relay = await startFullRelay();
  client = new RelayClient({ url: relay.url, token: AGENT_TOKEN.token });
});
afterAll(async () => {
  await relay.close();
});
beforeEach(async () => {
  cwd = await mkdtemp(join(tmpdir(), "agent-sdk-relay-"));
  postsBefore = relay.slack.requestPosts().length;
  modalsBefore = relay.slack.callsTo("views.open").length;
});
afterEach(async () => {
  expect(model?.problems).toEqual([]);
  expect(relay.slack.problems).toEqual([]);
  expect(relay.errors()).toEqual([]);
  await model?.close();
  model = undefined;
  await rm(cwd, { recursive: true, force: true });
});

/** A model that makes the given tool calls, one per turn, then repeats the last tool_result it got. */
async function modelCalling(...calls: Array<ReturnType<typeof toolUse>>): Promise<FakeAnthropic> {
  const turns: FakeTurn[] = [...calls.map((call) => ({ content: [call] })), echoToolResult()];
  model = await startFakeAnthropic({ turns });
  return model;
}

const message = (index = 0) => relay.message(postsBefore + index);
const modal = (index = 0) => relay.modal(modalsBefore + index);
const postedInThisTest = () => relay.slack.requestPosts().length - postsBefore;
const ran = (file: string) => existsSync(join(cwd, file));
const canUseTool = (options: Parameters<typeof createCanUseTool>[1] = { timeoutSeconds: 60 }) => createCanUseTool(client, options);

/** The step gate registered as the docs recommend: onFailure block and an explicit timeout. */
function stepGateHooks(timeoutSeconds = 30): { PreToolUse: HookCallbackMatcher[] } {
  return { PreToolUse: [{ hooks: [createStepGate(client, { timeoutSeconds })], timeout: timeoutSeconds, onFailure: "block" }] };
}

/** Submits a modal the relay opened, as Slack does, with the given input values. */
async function submit(callbackId: string, values: Record<string, Record<string, unknown>>) {
  const opened = await modal();
  expect(opened.callbackId).toBe(callbackId);
  const reply = await relay.post(viewSubmission({ callbackId, privateMetadata: opened.privateMetadata, values }));
  expect(reply).toBe("");
}

const at = (field: { block: string; action: string }, element: unknown) => ({ [field.block]: { [field.action]: element } });
const shows = (blocks: unknown, pattern: RegExp) => expect(JSON.stringify(blocks)).toMatch(pattern);

describe("createCanUseTool with the person answering in Slack", () => {
  it("when the person clicks Allow, the command runs only then, and its output reaches the model", async () => {
    const model = await modelCalling(toolUse("toolu_allow", "Bash", HELLO));
    const run = runAgent({ prompt: "Say hello.", anthropicUrl: model.url, cwd, canUseTool: canUseTool() });

    const posted = await message();
    shows(posted.blocks, /Permission request/);
    shows(posted.blocks, /touch ran\.txt &amp;&amp; echo hello/);
    expect(ran("ran.txt")).toBe(false);
    await relay.click(posted, Action.allow);
    const { result } = await run;

    expect(ran("ran.txt")).toBe(true);
    expect(toolResults(model.turns[1]!)).toEqual([{ toolUseId: "toolu_allow", isError: false, text: "hello" }]);
    expect(result).toMatchObject({ subtype: "success", result: "tool_result: hello" });
    shows(await relay.updated(posted), /✅ Allowed/);
  });

  it("when the person denies with a reason in the modal, the model receives exactly that reason as an error and nothing runs", async () => {
    const model = await modelCalling(toolUse("toolu_deny", "Bash", HELLO));
    const run = runAgent({ prompt: "Say hello.", anthropicUrl: model.url, cwd, canUseTool: canUseTool() });

    await relay.click(await message(), Action.denyWithReason);
    await submit(View.denyReason, at(Field.denyReason, state.text("Not during the freeze.")));
    const { result } = await run;

    expect(ran("ran.txt")).toBe(false);
    expect(toolResults(model.turns[1]!)).toEqual([{ toolUseId: "toolu_deny", isError: true, text: "Not during the freeze." }]);
    expect(result).toMatchObject({ subtype: "success", permission_denials: [{ tool_name: "Bash", tool_use_id: "toolu_deny" }] });
  });

  it("when the person edits the command in the Edit… modal, the edited command runs instead of the original", async () => {
    const model = await modelCalling(toolUse("toolu_edit", "Bash", { command: "touch original.txt && echo original", description: "Touch" }));
    const run = runAgent({ prompt: "Touch a file.", anthropicUrl: model.url, cwd, canUseTool: canUseTool() });

    await relay.click(await message(), Action.edit);
    const edited = JSON.stringify({ command: "touch edited.txt && echo edited", description: "Touch" });
    await submit(View.edit, at(Field.editJson, state.text(edited)));
    await run;

    expect(ran("edited.txt")).toBe(true);
    expect(ran("original.txt")).toBe(false);
    expect(toolResults(model.turns[1]!)).toEqual([{ toolUseId: "toolu_edit", isError: false, text: "edited" }]);
  });

  it("when the person clicks Always allow, the SDK gets back only the Bash rule it suggested (not the directory or the mode change), and Claude Code saves it", async () => {
    const model = await modelCalling(toolUse("toolu_first", "Bash", HELLO), toolUse("toolu_again", "Bash", HELLO));
    const asked: Array<PermissionUpdate[] | undefined> = [];
    const adapter = canUseTool();
    const recording: CanUseTool = (toolName, input, context) => {
      asked.push(context.suggestions);
      return adapter(toolName, input, context);
    };
    const run = runAgent({ prompt: "Say hello twice.", anthropicUrl: model.url, cwd, canUseTool: recording });

    const first = await message();
    shows(first, /Not offered:/);
    await relay.click(first, Action.alwaysAllow);
    // Without the directory and the mode change, Claude Code asks about the second call too.
    await relay.click(await message(1), Action.allow);
    await run;

    const suggested = asked[0] ?? [];
    expect(suggested.map((update) => update.type)).toEqual(expect.arrayContaining(["addRules", "setMode"]));
    const bashRules = suggested.filter((update) => update.type === "addRules" && update.rules.every((rule) => rule.toolName === "Bash" && rule.ruleContent));
    expect(bashRules.length).toBeGreaterThan(0);
    const record = await relay.service.findBySlackMessage({ channel: first.channel, ts: first.ts });
    expect(record?.decision).toEqual({ behavior: "allow", updatedInput: HELLO, updatedPermissions: bashRules });
    expect(toolResults(model.turns[2]!)).toEqual([
      { toolUseId: "toolu_first", isError: false, text: "hello" },
      { toolUseId: "toolu_again", isError: false, text: "hello" },
    ]);
    const saved = JSON.parse(await readFile(join(cwd, ".claude", "settings.local.json"), "utf8")) as unknown;
    expect(saved).toEqual({
      permissions: {
        allow: bashRules.flatMap((update) => (update.type === "addRules" ? update.rules.map((rule) => `${rule.toolName}(${rule.ruleContent})`) : [])),
      },
    });
    shows(await relay.updated(first), /✅ Always allowed/);
  });

  it("with RELAY_ALWAYS_ALLOW=all, Always allow passes back every suggestion and Claude Code does not ask again for the same command", async () => {
    const allRelay = await startFullRelay({ env: { RELAY_ALWAYS_ALLOW: "all" } });
    try {
      const allClient = new RelayClient({ url: allRelay.url, token: AGENT_TOKEN.token });
      const model = await modelCalling(toolUse("toolu_first", "Bash", HELLO), toolUse("toolu_again", "Bash", HELLO));
      const asked: Array<PermissionUpdate[] | undefined> = [];
      const adapter = createCanUseTool(allClient, { timeoutSeconds: 60 });
      const recording: CanUseTool = (toolName, input, context) => {
        asked.push(context.suggestions);
        return adapter(toolName, input, context);
      };
      const run = runAgent({ prompt: "Say hello twice.", anthropicUrl: model.url, cwd, canUseTool: recording });

      const posted = await allRelay.message(0);
      await allRelay.click(posted, Action.alwaysAllow);
      await run;

      expect(asked).toHaveLength(1);
      expect(asked[0]?.length).toBeGreaterThan(0);
      const record = await allRelay.service.findBySlackMessage({ channel: posted.channel, ts: posted.ts });
      expect(record?.decision).toEqual({ behavior: "allow", updatedInput: HELLO, updatedPermissions: asked[0] });
      expect(allRelay.slack.requestPosts()).toHaveLength(1);
      expect(toolResults(model.turns[2]!)).toEqual([
        { toolUseId: "toolu_first", isError: false, text: "hello" },
        { toolUseId: "toolu_again", isError: false, text: "hello" },
      ]);
      // Claude Code applied the suggested rules: it saved them where the suggestion said (localSettings).
      const rules = (asked[0] ?? []).flatMap((update) =>
        update.type === "addRules" && update.destination === "localSettings"
          ? update.rules.map((rule) => (rule.ruleContent ? `${rule.toolName}(${rule.ruleContent})` : rule.toolName))
          : [],
      );
      expect(rules.length).toBeGreaterThan(0);
      const saved = JSON.parse(await readFile(join(cwd, ".claude", "settings.local.json"), "utf8")) as unknown;
      expect(saved).toEqual({ permissions: { allow: rules } });
      shows(await allRelay.updated(posted), /✅ Always allowed/);
      expect(allRelay.errors()).toEqual([]);
    } finally {
      await allRelay.close();
    }
  });
});

describe("AskUserQuestion through createCanUseTool", () => {
  const questions = [
    COLOR_QUESTION,
    {
      question: "Which sizes?",
      header: "Sizes",
      multiSelect: true,
      options: [
        { label: "S", description: "Small" },
        { label: "M", description: "Medium" },
        { label: "L", description: "Large" },
      ],
    },
  ];

  it("when the person answers both questions in the Answer… modal, the model receives the labels, multi-select joined", async () => {
    const model = await modelCalling(toolUse("toolu_ask", "AskUserQuestion", { questions }));
    const run = runAgent({ prompt: "Ask me.", anthropicUrl: model.url, cwd, canUseTool: canUseTool() });

    await relay.click(await message(), Action.answer);
    await submit(View.answer, { ...at(Field.question(0), state.radio("1")), ...at(Field.question(1), state.checkboxes(["0", "2"])) });
    await run;

    expect(toolResults(model.turns[1]!)).toEqual([
      {
        toolUseId: "toolu_ask",
        isError: false,
        text: 'Your questions have been answered: "Which color?"="Blue", "Which sizes?"="S, L". You can now continue with these answers in mind.',
      },
    ]);
  });
});

describe("createStepGate as a PreToolUse hook with the person answering in Slack", () => {
  it("when the person clicks Yes, the tool runs without a second prompt", async () => {
    const model = await modelCalling(toolUse("toolu_yes", "Bash", HELLO));
    const run = runAgent({ prompt: "Say hello.", anthropicUrl: model.url, cwd, canUseTool: canUseTool(), hooks: stepGateHooks() });

    const posted = await message();
    shows(posted.blocks, /Proposed action/);
    await relay.click(posted, Action.stepYes);
    await run;

    expect(ran("ran.txt")).toBe(true);
    expect(toolResults(model.turns[1]!)).toEqual([{ toolUseId: "toolu_yes", isError: false, text: "hello" }]);
    expect(postedInThisTest()).toBe(1);
  });

  it("when the person clicks No, the tool does not run and the model reads the step-by-step rejection", async () => {
    const model = await modelCalling(toolUse("toolu_no", "Bash", HELLO));
    const run = runAgent({ prompt: "Say hello.", anthropicUrl: model.url, cwd, canUseTool: canUseTool(), hooks: stepGateHooks() });

    await relay.click(await message(), Action.stepNo);
    const { result } = await run;

    expect(ran("ran.txt")).toBe(false);
    expect(toolResults(model.turns[1]!)).toEqual([{ toolUseId: "toolu_no", isError: true, text: `PreToolUse:Bash hook error: ${STEP_GATE_REJECTED}` }]);
    expect(result).toMatchObject({ subtype: "success", terminal_reason: "completed" });
  });

  it.each([
    ["clicks Stop", (posted: PostedMessage) => relay.click(posted, Action.stepStop)],
    ["replies q in the thread", (posted: PostedMessage) => relay.post(messageEvent({ text: "q", channel: posted.channel, threadTs: posted.ts }))],
  ])("when the person %s, the tool does not run and the turn stops without another model call", async (_how, answer) => {
    const model = await modelCalling(toolUse("toolu_stop", "Bash", HELLO));
    const run = runAgent({ prompt: "Say hello.", anthropicUrl: model.url, cwd, canUseTool: canUseTool(), hooks: stepGateHooks() });

    const posted = await message();
    await answer(posted);
    const { result } = await run;

    expect(ran("ran.txt")).toBe(false);
    expect(model.turns).toHaveLength(1);
    expect(result).toMatchObject({ subtype: "success", terminal_reason: "hook_stopped" });
    shows(await relay.updated(posted), /🛑 Stopped \(q\)/);
  });
});

describe("failing closed", () => {
  it("when no one answers a permission request in time, the tool is denied with a message saying so", async () => {
    const model = await modelCalling(toolUse("toolu_late", "Bash", HELLO));
    // 3 s, not 1: a request that expires before its post is never posted, and a busy CI machine has taken over a second to post.
    const run = runAgent({ prompt: "Say hello.", anthropicUrl: model.url, cwd, canUseTool: canUseTool({ timeoutSeconds: 3 }) });

    const posted = await message();
    await run;

    expect(ran("ran.txt")).toBe(false);
    expect(toolResults(model.turns[1]!)).toEqual([{ toolUseId: "toolu_late", isError: true, text: "No one answered in Slack within 3 seconds." }]);
    shows(await relay.updated(posted), /⏱ Expired/);
  });

  it("when no one answers the step gate before its hook timeout, the tool is denied with a message saying so", async () => {
    const model = await modelCalling(toolUse("toolu_gate_late", "Bash", HELLO));
    // A 9 s hook timeout: the gate answers within 4 s and its request expires after 3 (not 1: see above).
    const run = runAgent({ prompt: "Say hello.", anthropicUrl: model.url, cwd, hooks: stepGateHooks(9) });

    const posted = await message();
    await run;

    expect(ran("ran.txt")).toBe(false);
    expect(toolResults(model.turns[1]!)).toEqual([
      { toolUseId: "toolu_gate_late", isError: true, text: "PreToolUse:Bash hook error: No one answered in Slack within 3 seconds." },
    ]);
    shows(await relay.updated(posted), /⏱ Expired/);
  });

  it("when the relay cannot be reached, the tool is denied with a message saying so and nothing is posted", async () => {
    const model = await modelCalling(toolUse("toolu_unreachable", "Bash", HELLO));
    const unreachable = new RelayClient({ url: await closedPortUrl(), token: AGENT_TOKEN.token, retries: 1, initialRetryDelayMs: 50 });
    const run = await runAgent({ prompt: "Say hello.", anthropicUrl: model.url, cwd, canUseTool: createCanUseTool(unreachable) });

    expect(ran("ran.txt")).toBe(false);
    expect(toolResults(model.turns[1]!)).toEqual([
      {
        toolUseId: "toolu_unreachable",
        isError: true,
        text: expect.stringMatching(/^The approval relay could not be reached \(.+\), so nothing was approved\.$/),
      },
    ]);
    expect(run.result).toMatchObject({ permission_denials: [{ tool_use_id: "toolu_unreachable" }] });
    expect(postedInThisTest()).toBe(0);
  });
});

describe("closing the SDK query while a person is being asked", () => {
  it("cancels the relay's request, and the Slack message says it was cancelled", async () => {
    const model = await modelCalling(toolUse("toolu_abort", "Bash", HELLO));
    const stop = new AbortController();
    const run = runAgent({ prompt: "Say hello.", anthropicUrl: model.url, cwd, canUseTool: canUseTool(), signal: stop.signal });

    const posted = await message();
    stop.abort();
    await run;
    expect(ran("ran.txt")).toBe(false);

    const record = await relay.service.findBySlackMessage({ channel: posted.channel, ts: posted.ts });
    const ended = await relay.service.wait(record!.id, 5000);
    expect(ended).toMatchObject({ status: "cancelled", cancelledBy: `agent:${AGENT_TOKEN.name}` });
    shows(await relay.updated(posted), /🚫 Cancelled/);
    // Claude Code may still tell the model that the permission prompt failed; never that the command ran.
    expect(model.turns.flatMap(toolResults).filter((result) => !result.isError)).toEqual([]);
  });
});

/** A URL on which nothing listens: a port that was just free. */
async function closedPortUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}
