/**
 * slack-approval-relay/openai-agents against the real OpenAI Agents SDK (its
 * runner, RunState and ScriptedModel test double, offline) and the relay's
 * real agent API: what the person decides in Slack is what the tool and the
 * model see.
 */
import { Agent, RunState, setTracingDisabled, tool, run } from "@openai/agents";
import { assistantMessage, functionCall, ScriptedModel } from "@openai/agents/testing";
import { beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { RelayClient } from "../../../src/client/index.js";
import { approveInterruptions, runWithApprovals } from "../../../src/client/openai-agents.js";
import type { RequestRecord } from "../../../src/requests/model.js";
import { useFrameworkRelay } from "../../helpers/frameworks.js";

beforeAll(() => setTracingDisabled(true));

const t = useFrameworkRelay();

function deployAgent(steps: ConstructorParameters<typeof ScriptedModel>[0]) {
  const ran: Array<{ env: string }> = [];
  const deploy = tool({
    name: "deploy",
    description: "Deploys the service",
    parameters: z.object({ env: z.string() }),
    needsApproval: true,
    execute: async (args) => {
      ran.push(args);
      return `deployed to ${args.env}`;
    },
  });
  const model = new ScriptedModel(steps);
  return { agent: new Agent({ name: "ops", instructions: "Deploy when asked.", model, tools: [deploy] }), model, ran };
}

/** The text the model was given as the deploy call's output on its last turn. */
function toolOutputSeen(model: ScriptedModel): string | undefined {
  const input = model.lastCall!.request.input;
  const items = Array.isArray(input) ? input : [];
  const result = items.find((item) => item.type === "function_call_result") as { output?: { text?: string } | string } | undefined;
  return typeof result?.output === "string" ? result.output : result?.output?.text;
}

const inputOf = (record: RequestRecord) => (record.body.kind === "permission" ? record.body.input : {});

const deployCall = [functionCall("deploy", { env: "prod" }, { callId: "call_deploy_1" })];

describe("openai-agents adapter", () => {
  it("when the person allows in Slack, runWithApprovals runs the tool and finishes the run", async () => {
    const { agent, model, ran } = deployAgent([deployCall, [assistantMessage("Deployed.")]]);
    const result = runWithApprovals(agent, "deploy to prod", t.client);
    const record = await t.answer({ behavior: "allow", updatedInput: { env: "prod" } });
    await expect(result).resolves.toMatchObject({ finalOutput: "Deployed." });
    expect(ran).toEqual([{ env: "prod" }]);
    expect(toolOutputSeen(model)).toBe("deployed to prod");
    expect(record.body).toMatchObject({ kind: "permission", toolName: "deploy", input: { env: "prod" }, toolUseId: "call_deploy_1" });
  });

  it("when the person denies with a reason, the tool does not run and the model reads the reason", async () => {
    const { agent, model, ran } = deployAgent([deployCall, [assistantMessage("Not deployed.")]]);
    const result = runWithApprovals(agent, "deploy to prod", t.client);
    await t.answer({ behavior: "deny", message: "Freeze until Monday." });
    await expect(result).resolves.toMatchObject({ finalOutput: "Not deployed." });
    expect(ran).toEqual([]);
    expect(toolOutputSeen(model)).toBe("Freeze until Monday.");
  });

  it("when the person edits the input, the SDK cannot carry it: the call is rejected with a message saying so, never run with the original input", async () => {
    const { agent, model, ran } = deployAgent([deployCall, [assistantMessage("Understood.")]]);
    const result = runWithApprovals(agent, "deploy to prod", t.client);
    await t.answer({ behavior: "allow", updatedInput: { env: "staging" } });
    await result;
    expect(ran).toEqual([]);
    expect(toolOutputSeen(model)).toBe(
      'The person edited the input of deploy in Slack, but the OpenAI Agents SDK cannot run a tool with changed input, so the call was not run. The edited input was: {"env":"staging"}',
    );
  });

  it("when no one answers in time, the call is rejected with the reason", async () => {
    const { agent, model, ran } = deployAgent([deployCall, [assistantMessage("Timed out.")]]);
    await runWithApprovals(agent, "deploy to prod", t.client, { timeoutSeconds: 1 });
    expect(ran).toEqual([]);
    expect(toolOutputSeen(model)).toBe("No one answered in Slack within 1 second.");
  });

  it("when the relay refuses the request, the call is rejected (fail closed) and onError hears why", async () => {
    const { agent, model, ran } = deployAgent([deployCall, [assistantMessage("Failed.")]]);
    const errors: unknown[] = [];
    const badClient = new RelayClient({ url: t.relay.url, token: "wrong-token", retries: 0 });
    await runWithApprovals(agent, "deploy to prod", badClient, { onError: (error) => errors.push(error) });
    expect(ran).toEqual([]);
    expect(toolOutputSeen(model)).toMatch(/^The approval relay refused the request \(.*\), so nothing was approved\.$/);
    expect(errors).toHaveLength(1);
  });

  it("approveInterruptions answers each of several calls on the state, which resumes after a round trip through toString", async () => {
    const { agent, ran } = deployAgent([
      [functionCall("deploy", { env: "eu" }, { callId: "call_eu" }), functionCall("deploy", { env: "us" }, { callId: "call_us" })],
      [assistantMessage("Done.")],
    ]);
    const first = await run(agent, "deploy eu and us");
    expect(first.interruptions).toHaveLength(2);
    const approving = approveInterruptions(first, t.client);
    await t.answerWhere((r) => inputOf(r).env === "eu", { behavior: "allow", updatedInput: { env: "eu" } });
    await t.answerWhere((r) => inputOf(r).env === "us", { behavior: "deny", message: "Not the US today." });
    const state = await approving;
    const resumed = await run(agent, await RunState.fromString(agent, state.toString()));
    expect(resumed.finalOutput).toBe("Done.");
    expect(ran).toEqual([{ env: "eu" }]);
  });

  it("asking about the same call twice (a resumed process) joins the first request: posted once", async () => {
    const { agent } = deployAgent([deployCall]);
    const first = await run(agent, "deploy to prod");
    const asking = [approveInterruptions(first, t.client), approveInterruptions(first, t.client)];
    await t.answer({ behavior: "allow", updatedInput: { env: "prod" } });
    await Promise.all(asking);
    expect(await t.posts()).toBe(1);
  });
});
