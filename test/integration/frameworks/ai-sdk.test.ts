/**
 * slack-approval-relay/ai-sdk against the real AI SDK (generateText with its
 * MockLanguageModelV4 test double, offline) and the relay's real agent API:
 * the blocking `toolApproval` function and the durable approval-request /
 * approval-response flow.
 */
import { generateText, stepCountIs, tool, type ModelMessage } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { answerApprovalRequests, createToolApproval } from "../../../src/client/ai-sdk.js";
import { useFrameworkRelay } from "../../helpers/frameworks.js";

const t = useFrameworkRelay();

const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } };
const callDeploy = (env = "prod", toolCallId = "tc_deploy_1") => ({
  content: [{ type: "tool-call" as const, toolCallId, toolName: "deploy", input: JSON.stringify({ env }) }],
  finishReason: { unified: "tool-calls" as const, raw: undefined },
  usage,
  warnings: [],
});
const say = (text: string) => ({ content: [{ type: "text" as const, text }], finishReason: { unified: "stop" as const, raw: undefined }, usage, warnings: [] });

function deployTools() {
  const ran: Array<{ env: string }> = [];
  const tools = {
    deploy: tool({
      description: "Deploys the service",
      inputSchema: z.object({ env: z.string() }),
      execute: async (args: { env: string }) => {
        ran.push(args);
        return `deployed to ${args.env}`;
      },
    }),
  };
  return { tools, ran };
}

/** The deploy call's result the model was given on its last call. */
function toolResultSeen(model: MockLanguageModelV4): unknown {
  const prompt = model.doGenerateCalls.at(-1)!.prompt;
  const toolMessage = prompt.findLast((message) => message.role === "tool");
  return toolMessage?.content.find((part) => part.type === "tool-result")?.output;
}

describe("ai-sdk adapter: createToolApproval (blocking)", () => {
  it("when the person allows, the tool runs with its input", async () => {
    const { tools, ran } = deployTools();
    const model = new MockLanguageModelV4({ doGenerate: [callDeploy(), say("Deployed.")] });
    const result = generateText({ model, tools, prompt: "deploy", stopWhen: stepCountIs(3), toolApproval: createToolApproval(t.client) });
    const record = await t.answer({ behavior: "allow", updatedInput: { env: "prod" } });
    await expect(result).resolves.toMatchObject({ text: "Deployed." });
    expect(ran).toEqual([{ env: "prod" }]);
    expect(record.body).toMatchObject({ kind: "permission", toolName: "deploy", input: { env: "prod" }, toolUseId: "tc_deploy_1" });
  });

  it("when the person denies with a reason, the tool does not run and the model reads the reason", async () => {
    const { tools, ran } = deployTools();
    const model = new MockLanguageModelV4({ doGenerate: [callDeploy(), say("Not deployed.")] });
    const result = generateText({ model, tools, prompt: "deploy", stopWhen: stepCountIs(3), toolApproval: createToolApproval(t.client) });
    await t.answer({ behavior: "deny", message: "Freeze until Monday." });
    await result;
    expect(ran).toEqual([]);
    expect(toolResultSeen(model)).toEqual({ type: "execution-denied", reason: "Freeze until Monday." });
  });

  it("when the person edits the input, the SDK cannot carry it: the call is denied with a message saying so", async () => {
    const { tools, ran } = deployTools();
    const model = new MockLanguageModelV4({ doGenerate: [callDeploy(), say("Understood.")] });
    const result = generateText({ model, tools, prompt: "deploy", stopWhen: stepCountIs(3), toolApproval: createToolApproval(t.client) });
    await t.answer({ behavior: "allow", updatedInput: { env: "staging" } });
    await result;
    expect(ran).toEqual([]);
    expect(toolResultSeen(model)).toEqual({
      type: "execution-denied",
      reason:
        'The person edited the input of deploy in Slack, but the AI SDK cannot run a tool with changed input, so the call was not run. The edited input was: {"env":"staging"}',
    });
  });

  it("when no one answers in time, the call is denied with the reason", async () => {
    const { tools, ran } = deployTools();
    const model = new MockLanguageModelV4({ doGenerate: [callDeploy(), say("Timed out.")] });
    await generateText({ model, tools, prompt: "deploy", stopWhen: stepCountIs(3), toolApproval: createToolApproval(t.client, { timeoutSeconds: 1 }) });
    expect(ran).toEqual([]);
    expect(toolResultSeen(model)).toEqual({ type: "execution-denied", reason: "No one answered in Slack within 1 second." });
  });

  it("a call needsApproval rules out runs without asking anyone", async () => {
    const { tools, ran } = deployTools();
    const model = new MockLanguageModelV4({ doGenerate: [callDeploy("dev"), say("Deployed to dev.")] });
    const toolApproval = createToolApproval(t.client, { needsApproval: ({ input }) => (input as { env: string }).env !== "dev" });
    await generateText({ model, tools, prompt: "deploy", stopWhen: stepCountIs(3), toolApproval });
    expect(ran).toEqual([{ env: "dev" }]);
    expect(await t.posts()).toBe(0);
  });
});

describe("ai-sdk adapter: answerApprovalRequests (durable)", () => {
  /** A first call that stops on the approval request; returns what the next call needs. */
  async function stopOnApproval(env = "prod") {
    const { tools, ran } = deployTools();
    const model = new MockLanguageModelV4({ doGenerate: [callDeploy(env), say("Finished.")] });
    const first = await generateText({ model, tools, prompt: "deploy", toolApproval: { deploy: "user-approval" } });
    const resume = (answer: ModelMessage) =>
      generateText({
        model,
        tools,
        messages: [{ role: "user", content: "deploy" }, ...first.response.messages, answer],
        toolApproval: { deploy: "user-approval" },
      });
    return { first, resume, ran, model };
  }

  it("when the person allows, the response approves and the next call runs the tool", async () => {
    const { first, resume, ran } = await stopOnApproval();
    const answering = answerApprovalRequests(first.content, t.client);
    await t.answer({ behavior: "allow", updatedInput: { env: "prod" } });
    const message = await answering;
    const approvalId = first.content.find((part) => part.type === "tool-approval-request")!.approvalId;
    expect(message).toEqual({ role: "tool", content: [{ type: "tool-approval-response", approvalId, approved: true }] });
    await resume(message);
    expect(ran).toEqual([{ env: "prod" }]);
  });

  it("read from the response messages, an edit is a denial saying so, and the model reads it", async () => {
    const { first, resume, ran, model } = await stopOnApproval();
    const answering = answerApprovalRequests(first.response.messages, t.client);
    await t.answer({ behavior: "allow", updatedInput: { env: "staging" } });
    const message = await answering;
    expect(message.content[0]).toMatchObject({ approved: false, reason: expect.stringContaining("the AI SDK cannot run a tool with changed input") });
    await resume(message);
    expect(ran).toEqual([]);
    expect(toolResultSeen(model)).toMatchObject({ type: "execution-denied", reason: expect.stringContaining('{"env":"staging"}') });
  });

  it("when no one answers in time, the response denies with the reason", async () => {
    const { first } = await stopOnApproval();
    const message = await answerApprovalRequests(first.content, t.client, { timeoutSeconds: 1 });
    expect(message.content[0]).toMatchObject({ approved: false, reason: "No one answered in Slack within 1 second." });
  });

  it("answering the same content twice (a retried handler) joins the first request: posted once", async () => {
    const { first } = await stopOnApproval();
    const answering = [answerApprovalRequests(first.content, t.client), answerApprovalRequests(first.content, t.client)];
    await t.answer({ behavior: "deny", message: "No." });
    const [a, b] = await Promise.all(answering);
    expect(a).toEqual(b);
    expect(await t.posts()).toBe(1);
  });
});
