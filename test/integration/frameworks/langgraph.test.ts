/**
 * slack-approval-relay/langgraph against real LangGraph.js and langchain
 * (createAgent with humanInTheLoopMiddleware and the fakeModel() test
 * double, a StateGraph whose node interrupts twice, MemorySaver, offline) and
 * the relay's real agent API.
 */
import { Annotation, END, interrupt, MemorySaver, START, StateGraph } from "@langchain/langgraph";
import { AIMessage, createAgent, fakeModel, humanInTheLoopMiddleware, tool, ToolMessage, type HITLRequest, type InterruptOnConfig } from "langchain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { answerHitlRequest, HitlDecisionError, invokeWithApprovals } from "../../../src/client/langgraph.js";
import { useFrameworkRelay } from "../../helpers/frameworks.js";

const t = useFrameworkRelay();

let threads = 0;
const newThread = () => ({ configurable: { thread_id: `thread-${++threads}-${Date.now()}` } });

function deployAgent(review: InterruptOnConfig | true = true) {
  const ran: Array<{ env: string }> = [];
  const deploy = tool(
    async (args: { env: string }) => {
      ran.push(args);
      return `deployed to ${args.env}`;
    },
    { name: "deploy", description: "Deploys the service", schema: z.object({ env: z.string() }) },
  );
  const model = fakeModel()
    .respondWithTools([{ name: "deploy", args: { env: "prod" }, id: "call_deploy_1" }])
    .respond(new AIMessage("Finished."));
  const agent = createAgent({
    model,
    tools: [deploy],
    middleware: [humanInTheLoopMiddleware({ interruptOn: { deploy: review } })],
    checkpointer: new MemorySaver(),
  });
  return { agent, ran };
}

/** The deploy call's ToolMessage in the agent's final messages, when one was made without running the tool. */
function rejectionSeen(result: { messages: unknown[] }): string | undefined {
  const message = result.messages.find((m): m is ToolMessage => ToolMessage.isInstance(m) && m.status === "error");
  return typeof message?.content === "string" ? message.content : undefined;
}

describe("langgraph adapter with humanInTheLoopMiddleware", () => {
  it("when the person allows, the tool runs with its arguments and the run finishes", async () => {
    const { agent, ran } = deployAgent();
    const result = invokeWithApprovals(agent, { messages: [{ role: "user", content: "deploy" }] }, newThread(), t.client);
    const record = await t.answer({ behavior: "allow", updatedInput: { env: "prod" } });
    const final = await result;
    expect(ran).toEqual([{ env: "prod" }]);
    expect(final.messages.at(-1)?.content).toBe("Finished.");
    expect(record.body).toMatchObject({ kind: "permission", toolName: "deploy", input: { env: "prod" }, description: expect.stringContaining("Tool: deploy") });
  });

  it("when the person edits the input and the review allows edits, the tool runs with the edited input", async () => {
    const { agent, ran } = deployAgent({ allowedDecisions: ["approve", "edit", "reject"] });
    const result = invokeWithApprovals(agent, { messages: [{ role: "user", content: "deploy" }] }, newThread(), t.client);
    await t.answer({ behavior: "allow", updatedInput: { env: "staging" } });
    await result;
    expect(ran).toEqual([{ env: "staging" }]);
  });

  it("when the person edits the input and the review allows no edits, the call is rejected with a message saying so", async () => {
    const { agent, ran } = deployAgent({ allowedDecisions: ["approve", "reject"] });
    const result = invokeWithApprovals(agent, { messages: [{ role: "user", content: "deploy" }] }, newThread(), t.client);
    await t.answer({ behavior: "allow", updatedInput: { env: "staging" } });
    const final = await result;
    expect(ran).toEqual([]);
    expect(rejectionSeen(final)).toBe(
      'The person edited the input of deploy in Slack, but its review does not allow edits, so the call was not run. The edited input was: {"env":"staging"}',
    );
  });

  it("when the person denies with a reason, the tool does not run and the model reads the reason", async () => {
    const { agent, ran } = deployAgent();
    const result = invokeWithApprovals(agent, { messages: [{ role: "user", content: "deploy" }] }, newThread(), t.client);
    await t.answer({ behavior: "deny", message: "Freeze until Monday." });
    const final = await result;
    expect(ran).toEqual([]);
    expect(rejectionSeen(final)).toBe("Freeze until Monday.");
  });

  it("when no one answers in time, the call is rejected with the reason", async () => {
    const { agent, ran } = deployAgent();
    const final = await invokeWithApprovals(agent, { messages: [{ role: "user", content: "deploy" }] }, newThread(), t.client, { timeoutSeconds: 1 });
    expect(ran).toEqual([]);
    expect(rejectionSeen(final)).toBe("No one answered in Slack within 1 second.");
  });

  it("without a thread id it refuses at once: an interrupt could not be resumed", async () => {
    const { agent } = deployAgent();
    await expect(invokeWithApprovals(agent, { messages: [] }, {}, t.client)).rejects.toThrow(/thread_id/);
  });
});

describe("langgraph adapter: re-runs post once", () => {
  const deployRequest = (env: string): HITLRequest => ({
    actionRequests: [{ name: "deploy", args: { env }, description: `Deploy to ${env}?` }],
    reviewConfigs: [{ actionName: "deploy", allowedDecisions: ["approve", "reject"] }],
  });

  it("a node that interrupts twice re-runs from its start on resume, and each question is posted once", async () => {
    let nodeRuns = 0;
    const State = Annotation.Root({ outcome: Annotation<string[]>({ reducer: (a, b) => a.concat(b), default: () => [] }) });
    const graph = new StateGraph(State)
      .addNode("gate", () => {
        nodeRuns += 1;
        const eu = interrupt(deployRequest("eu")) as { decisions: Array<{ type: string }> };
        const us = interrupt(deployRequest("us")) as { decisions: Array<{ type: string }> };
        return { outcome: [`eu:${eu.decisions[0]!.type}`, `us:${us.decisions[0]!.type}`] };
      })
      .addEdge(START, "gate")
      .addEdge("gate", END)
      .compile({ checkpointer: new MemorySaver() });
    const result = invokeWithApprovals(graph, { outcome: [] }, newThread(), t.client);
    await t.answer({ behavior: "allow", updatedInput: { env: "eu" } });
    await t.answer({ behavior: "deny", message: "Not the US." });
    await expect(result).resolves.toEqual({ outcome: ["eu:approve", "us:reject"] });
    expect(nodeRuns).toBe(3);
    expect(await t.posts()).toBe(2);
  });

  it("asking about the same interrupt again (a resumed process) joins the request already posted", async () => {
    const ids = { threadId: "thread-resumed", interruptId: "interrupt-1" };
    const asking = [answerHitlRequest(deployRequest("prod"), t.client, ids), answerHitlRequest(deployRequest("prod"), t.client, ids)];
    await t.answer({ behavior: "allow", updatedInput: { env: "prod" } });
    await expect(Promise.all(asking)).resolves.toEqual([{ decisions: [{ type: "approve" }] }, { decisions: [{ type: "approve" }] }]);
    expect(await t.posts()).toBe(1);
  });

  it("when the person denies but the review allows no reject, it throws rather than letting the call go ahead", async () => {
    const request: HITLRequest = {
      actionRequests: [{ name: "deploy", args: { env: "prod" } }],
      reviewConfigs: [{ actionName: "deploy", allowedDecisions: ["approve"] }],
    };
    const asking = answerHitlRequest(request, t.client, { threadId: "t", interruptId: "i" });
    await t.answer({ behavior: "deny", message: "No." });
    await expect(asking).rejects.toBeInstanceOf(HitlDecisionError);
  });
});
