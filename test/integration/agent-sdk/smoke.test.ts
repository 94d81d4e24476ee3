/**
 * Proves the offline harness for the real Claude Agent SDK: Claude Code runs
 * against the fake-anthropic stand-in, and what our callbacks answer shows up
 * in what Claude Code does and tells the model. The callbacks here are written
 * inline; the relay's own adapters are tested with the same helpers elsewhere.
 * Each case also pins an SDK behaviour the relay's adapters rely on.
 */
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { CanUseTool, HookCallback, PermissionResult, SDKMessage } from "@anthropic-ai/claude-agent-sdk";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { runAgent } from "../../helpers/agent-sdk.js";
import { echoToolResult, startFakeAnthropic, toolResults, toolUse, type FakeAnthropic, type FakeBlock } from "../../helpers/fake-anthropic.js";
import { COLOR_QUESTION } from "../../fixtures/questions.js";

interface PermissionCall {
  toolName: string;
  input: Record<string, unknown>;
  toolUseID: string;
}

let cwd: string;
let fake: FakeAnthropic | undefined;

beforeEach(async () => {
  cwd = await mkdtemp(join(tmpdir(), "agent-sdk-cwd-"));
});

afterEach(async () => {
  await fake?.close();
  fake = undefined;
  await rm(cwd, { recursive: true, force: true });
});

/** A stand-in whose model calls one tool, then repeats the tool_result it got back. */
async function modelCalling(block: FakeBlock): Promise<FakeAnthropic> {
  fake = await startFakeAnthropic({ turns: [{ content: [block] }, echoToolResult()] });
  return fake;
}

function recordingCanUseTool(decide: (input: Record<string, unknown>) => PermissionResult) {
  const calls: PermissionCall[] = [];
  const canUseTool: CanUseTool = async (toolName, input, { toolUseID }) => {
    calls.push({ toolName, input, toolUseID });
    return decide(input);
  };
  return { calls, canUseTool };
}

const allow = (input: Record<string, unknown>): PermissionResult => ({ behavior: "allow", updatedInput: input });

function preToolUse(output: Awaited<ReturnType<HookCallback>>) {
  const calls: string[] = [];
  const hook: HookCallback = async (input) => {
    if (input.hook_event_name === "PreToolUse") calls.push(input.tool_name);
    return output;
  };
  return { calls, hooks: { PreToolUse: [{ hooks: [hook] }] } };
}

/** The tool_result blocks Claude Code reported back through the SDK stream. */
function streamedToolResults(messages: SDKMessage[]): unknown[] {
  return messages.flatMap((m) =>
    m.type === "user" && Array.isArray(m.message.content) ? m.message.content.filter((block) => block.type === "tool_result") : [],
  );
}

describe("canUseTool", () => {
  test("when canUseTool allows a Bash call, the command runs and its output reaches the model", async () => {
    const model = await modelCalling(toolUse("toolu_bash", "Bash", { command: "touch ran.txt && echo hello", description: "Say hello" }));
    const { calls, canUseTool } = recordingCanUseTool(allow);

    const run = await runAgent({ prompt: "Say hello.", anthropicUrl: model.url, cwd, canUseTool });

    expect(calls).toEqual([{ toolName: "Bash", input: { command: "touch ran.txt && echo hello", description: "Say hello" }, toolUseID: "toolu_bash" }]);
    expect(existsSync(join(cwd, "ran.txt"))).toBe(true);
    expect(model.turns).toHaveLength(2);
    expect(toolResults(model.turns[1]!)).toEqual([{ toolUseId: "toolu_bash", isError: false, text: "hello" }]);
    expect(run.result).toMatchObject({ subtype: "success", result: "tool_result: hello" });
    expect(model.problems).toEqual([]);
  });

  test("when canUseTool allows with an edited input, the edited command is the one that runs", async () => {
    const model = await modelCalling(toolUse("toolu_bash", "Bash", { command: "touch original.txt && echo original", description: "Touch" }));
    const { canUseTool } = recordingCanUseTool(() => ({
      behavior: "allow",
      updatedInput: { command: "touch edited.txt && echo edited", description: "Touch" },
    }));

    await runAgent({ prompt: "Touch a file.", anthropicUrl: model.url, cwd, canUseTool });

    expect(existsSync(join(cwd, "edited.txt"))).toBe(true);
    expect(existsSync(join(cwd, "original.txt"))).toBe(false);
    expect(toolResults(model.turns[1]!)).toEqual([{ toolUseId: "toolu_bash", isError: false, text: "edited" }]);
  });

  test("a read-only Bash command runs without asking canUseTool", async () => {
    const model = await modelCalling(toolUse("toolu_echo", "Bash", { command: "echo hello", description: "Say hello" }));
    const { calls, canUseTool } = recordingCanUseTool(() => ({ behavior: "deny", message: "Never." }));

    await runAgent({ prompt: "Say hello.", anthropicUrl: model.url, cwd, canUseTool });

    expect(calls).toEqual([]);
    expect(toolResults(model.turns[1]!)).toEqual([{ toolUseId: "toolu_echo", isError: false, text: "hello" }]);
  });

  test("when canUseTool denies a Write with a message, the model receives exactly that message as an error and nothing is written", async () => {
    const target = join(cwd, "denied.txt");
    const model = await modelCalling(toolUse("toolu_write", "Write", { file_path: target, content: "secret" }));
    const { calls, canUseTool } = recordingCanUseTool(() => ({ behavior: "deny", message: "No writes today." }));

    const run = await runAgent({ prompt: "Write the file.", anthropicUrl: model.url, cwd, canUseTool });

    expect(calls.map((c) => c.toolName)).toEqual(["Write"]);
    expect(existsSync(target)).toBe(false);
    expect(toolResults(model.turns[1]!)).toEqual([{ toolUseId: "toolu_write", isError: true, text: "No writes today." }]);
    expect(run.result).toMatchObject({ subtype: "success", permission_denials: [{ tool_name: "Write", tool_use_id: "toolu_write" }] });
    expect(model.problems).toEqual([]);
  });

  test("when canUseTool denies with interrupt, the turn stops and the model is not asked again", async () => {
    const target = join(cwd, "denied.txt");
    const model = await modelCalling(toolUse("toolu_write", "Write", { file_path: target, content: "secret" }));
    const { canUseTool } = recordingCanUseTool(() => ({ behavior: "deny", message: "Stop here.", interrupt: true }));

    const run = await runAgent({ prompt: "Write the file.", anthropicUrl: model.url, cwd, canUseTool });

    expect(existsSync(target)).toBe(false);
    expect(model.turns).toHaveLength(1);
    expect(streamedToolResults(run.messages)).toEqual([
      expect.objectContaining({
        tool_use_id: "toolu_write",
        is_error: true,
        content: expect.stringMatching(/^The user doesn't want to proceed with this tool use\./),
      }),
    ]);
    expect(run.result).toMatchObject({ subtype: "error_during_execution", terminal_reason: "aborted_tools" });
    expect(run.error?.message).toMatch(/Claude Code returned an error result/);
  });
});

describe("PreToolUse hook callbacks", () => {
  test("a hook that denies with a reason blocks the tool without asking canUseTool, and the model reads the reason", async () => {
    const target = join(cwd, "gated.txt");
    const model = await modelCalling(toolUse("toolu_gate", "Write", { file_path: target, content: "x" }));
    const gate = preToolUse({
      hookSpecificOutput: {
        hookEventName: "PreToolUse",
        permissionDecision: "deny",
        permissionDecisionReason: "Action rejected by the user in step-by-step mode.",
      },
    });
    const { calls, canUseTool } = recordingCanUseTool(allow);

    const run = await runAgent({ prompt: "Write the file.", anthropicUrl: model.url, cwd, canUseTool, hooks: gate.hooks });

    expect(gate.calls).toEqual(["Write"]);
    expect(calls).toEqual([]);
    expect(existsSync(target)).toBe(false);
    expect(toolResults(model.turns[1]!)).toEqual([
      { toolUseId: "toolu_gate", isError: true, text: "PreToolUse:Write hook error: Action rejected by the user in step-by-step mode." },
    ]);
    expect(run.result).toMatchObject({ subtype: "success", terminal_reason: "completed" });
  });

  test("a hook that denies with continue false blocks the tool and stops the turn", async () => {
    const target = join(cwd, "gated.txt");
    const model = await modelCalling(toolUse("toolu_gate", "Write", { file_path: target, content: "x" }));
    const gate = preToolUse({
      continue: false,
      stopReason: "Execution stopped manually by the user.",
      hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: "Execution stopped manually by the user." },
    });

    const { calls, canUseTool } = recordingCanUseTool(allow);

    const run = await runAgent({ prompt: "Write the file.", anthropicUrl: model.url, cwd, canUseTool, hooks: gate.hooks });

    expect(calls).toEqual([]);
    expect(existsSync(target)).toBe(false);
    expect(model.turns).toHaveLength(1);
    expect(streamedToolResults(run.messages)).toEqual([
      expect.objectContaining({ tool_use_id: "toolu_gate", is_error: true, content: "PreToolUse:Write hook error: Execution stopped manually by the user." }),
    ]);
    expect(run.result).toMatchObject({ subtype: "success", is_error: false, terminal_reason: "hook_stopped" });
    expect(run.error).toBeUndefined();
  });

  test("a hook that only says continue false does not block the tool: it runs, then the turn stops", async () => {
    const target = join(cwd, "written.txt");
    const model = await modelCalling(toolUse("toolu_gate", "Write", { file_path: target, content: "x" }));
    const gate = preToolUse({ continue: false, stopReason: "Stopped." });
    const { calls, canUseTool } = recordingCanUseTool(allow);

    const run = await runAgent({ prompt: "Write the file.", anthropicUrl: model.url, cwd, canUseTool, hooks: gate.hooks });

    expect(calls.map((c) => c.toolName)).toEqual(["Write"]);
    expect(existsSync(target)).toBe(true);
    expect(model.turns).toHaveLength(1);
    expect(run.result).toMatchObject({ terminal_reason: "hook_stopped" });
  });

  test("a hook that throws blocks the tool when its matcher says onFailure block", async () => {
    const target = join(cwd, "gated.txt");
    const model = await modelCalling(toolUse("toolu_gate", "Write", { file_path: target, content: "x" }));
    const failing: HookCallback = async () => {
      throw new Error("relay unreachable");
    };
    const { calls, canUseTool } = recordingCanUseTool(allow);

    await runAgent({
      prompt: "Write the file.",
      anthropicUrl: model.url,
      cwd,
      canUseTool,
      hooks: { PreToolUse: [{ hooks: [failing], onFailure: "block" }] },
    });

    expect(calls).toEqual([]);
    expect(existsSync(target)).toBe(false);
    expect(toolResults(model.turns[1]!)).toEqual([
      expect.objectContaining({ toolUseId: "toolu_gate", isError: true, text: expect.stringMatching(/^PreToolUse:Write hook error: .*onFailure is "block"/) }),
    ]);
  });

  test("a hook that allows runs the tool without asking canUseTool", async () => {
    const target = join(cwd, "written.txt");
    const model = await modelCalling(toolUse("toolu_gate", "Write", { file_path: target, content: "x" }));
    const gate = preToolUse({ hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "allow" } });
    const { calls, canUseTool } = recordingCanUseTool(() => ({ behavior: "deny", message: "Never." }));

    await runAgent({ prompt: "Write the file.", anthropicUrl: model.url, cwd, canUseTool, hooks: gate.hooks });

    expect(calls).toEqual([]);
    expect(existsSync(target)).toBe(true);
    expect(toolResults(model.turns[1]!)).toMatchObject([{ toolUseId: "toolu_gate", isError: false }]);
  });
});

describe("AskUserQuestion", () => {
  const questions = [
    COLOR_QUESTION,
    {
      question: "Which sizes?",
      header: "Sizes",
      multiSelect: true,
      options: [
        { label: "S", description: "Small" },
        { label: "M", description: "Medium" },
      ],
    },
  ];

  test("canUseTool is asked with the questions, and the answers it returns reach the model", async () => {
    const model = await modelCalling(toolUse("toolu_ask", "AskUserQuestion", { questions }));
    const answers = { "Which color?": "Blue", "Which sizes?": "S, M" };
    const { calls, canUseTool } = recordingCanUseTool((input) => ({ behavior: "allow", updatedInput: { ...input, answers } }));

    await runAgent({ prompt: "Ask me.", anthropicUrl: model.url, cwd, canUseTool });

    expect(calls).toEqual([{ toolName: "AskUserQuestion", input: { questions }, toolUseID: "toolu_ask" }]);
    expect(toolResults(model.turns[1]!)).toEqual([
      {
        toolUseId: "toolu_ask",
        isError: false,
        text: 'Your questions have been answered: "Which color?"="Blue", "Which sizes?"="S, M". You can now continue with these answers in mind.',
      },
    ]);
    expect(model.problems).toEqual([]);
  });
});

describe("the harness", () => {
  test("a run that outlives its timeout fails with what it saw so far", async () => {
    const model = await modelCalling(toolUse("toolu_wait", "Write", { file_path: join(cwd, "never.txt"), content: "x" }));
    const neverAnswers: CanUseTool = () => new Promise(() => undefined);

    const run = runAgent({ prompt: "Write the file.", anthropicUrl: model.url, cwd, canUseTool: neverAnswers, timeoutMs: 1_500 });

    await expect(run).rejects.toThrow(/^runAgent timed out after 1500 ms\nmessages: /);
    expect(existsSync(join(cwd, "never.txt"))).toBe(false);
  });

  test("the stand-in refuses and reports an attempt to reach another host through it", async () => {
    fake = await startFakeAnthropic({ turns: [] });
    const { port } = new URL(fake.url);

    const status = await new Promise<number | undefined>((resolve, reject) => {
      const req = request({ host: "127.0.0.1", port, method: "CONNECT", path: "api.anthropic.com:443" });
      req.on("connect", (res, socket) => {
        socket.destroy();
        resolve(res.statusCode);
      });
      req.on("error", reject);
      req.end();
    });

    expect(status).toBe(403);
    expect(fake.problems).toEqual(["tried to reach api.anthropic.com:443"]);
  });
});
