import type { CanUseTool, PermissionUpdate } from "@anthropic-ai/claude-agent-sdk";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createCanUseTool } from "../../../src/client/can-use-tool.js";
import { RelayClient } from "../../../src/client/relay-client.js";
import type { Asker } from "../../../src/client/types.js";
import { RelayStandIn, TOKEN, type StoredRequest } from "../../helpers/relay-stand-in.js";
import { until } from "../../helpers/until.js";

let relay: RelayStandIn;
let client: RelayClient;
beforeEach(async () => {
  relay = await new RelayStandIn().start();
  client = new RelayClient({ url: relay.url, token: TOKEN, maxWaitSeconds: 5, initialRetryDelayMs: 20, maxRetryDelayMs: 100, retries: 1 });
});
afterEach(async () => {
  await relay.stop();
});

type Context = Parameters<CanUseTool>[2];
function sdkContext(overrides: Partial<Context> = {}): Context {
  return { signal: new AbortController().signal, toolUseID: "toolu_01", requestId: "req_01", ...overrides };
}

const suggestions: PermissionUpdate[] = [
  { type: "addRules", rules: [{ toolName: "Bash", ruleContent: "npm test" }], behavior: "allow", destination: "session" },
];
const bash = { command: "npm test", description: "Run the tests" };

/** Runs the callback, answers the request it creates with `decision`, and returns what the SDK gets. */
async function answered(canUseTool: CanUseTool, toolName: string, input: Record<string, unknown>, decision: unknown, context = sdkContext()) {
  const next = relay.nextRequest();
  const result = canUseTool(toolName, input, context);
  const request = await next;
  relay.answer(request.id, decision);
  return { result: await result, request };
}

/** Runs the callback and ends the request it creates with `status`. */
async function ended(canUseTool: CanUseTool, change: Partial<StoredRequest> & { status: StoredRequest["status"] }) {
  const next = relay.nextRequest();
  const result = canUseTool("Bash", bash, sdkContext());
  relay.end((await next).id, change);
  return result;
}

describe("createCanUseTool for any tool", () => {
  it("when the approver clicks Allow, the agent receives allow with the original input", async () => {
    const { result } = await answered(createCanUseTool(client), "Bash", bash, { behavior: "allow", updatedInput: bash });
    expect(result).toEqual({ behavior: "allow", updatedInput: bash });
  });

  it("when the SDK asks, the permission request carries everything the SDK passed, with the adapter's options", async () => {
    const canUseTool = createCanUseTool(client, {
      channel: "C0123456789",
      agent: { name: "deploy-bot", sessionId: "s-1" },
      timeoutSeconds: 300,
      context: "Nightly release",
      labels: { env: "prod" },
      requestedBy: { email: "alice@example.com" },
    });
    const context = sdkContext({
      suggestions,
      title: "Claude wants to run npm test",
      displayName: "Run command",
      description: "Runs the test suite",
      decisionReason: "Bash is not in the allow list",
      blockedPath: "/etc",
      agentID: "agent-7",
      defaultToNo: true,
      suppressAlwaysAllowRule: true,
    });
    const { request } = await answered(canUseTool, "Bash", bash, { behavior: "allow", updatedInput: bash }, context);
    expect(request.body).toMatchObject({
      kind: "permission",
      toolName: "Bash",
      input: bash,
      suggestions,
      title: "Claude wants to run npm test",
      displayName: "Run command",
      description: "Runs the test suite",
      decisionReason: "Bash is not in the allow list",
      blockedPath: "/etc",
      toolUseId: "toolu_01",
      defaultToNo: true,
      suppressAlwaysAllowRule: true,
      channel: "C0123456789",
      timeoutSeconds: 300,
      labels: { env: "prod" },
      requestedBy: { email: "alice@example.com" },
      agent: { name: "deploy-bot", sessionId: "s-1", host: expect.any(String), cwd: expect.any(String) },
    });
    expect(request.body.context).toBe("Nightly release\nSubagent: agent-7");
  });

  it("when the SDK passes a title longer than the relay takes, it is cut instead of refused", async () => {
    const { request } = await answered(
      createCanUseTool(client),
      "Bash",
      bash,
      { behavior: "allow", updatedInput: bash },
      sdkContext({ title: "x".repeat(600) }),
    );
    expect(request.body.title).toHaveLength(500);
    expect(String(request.body.title).endsWith("…")).toBe(true);
  });

  it("when the approver edits the input, the agent receives the edited input", async () => {
    const edited = { command: "npm test -- --run" };
    const { result } = await answered(createCanUseTool(client), "Bash", bash, { behavior: "allow", updatedInput: edited });
    expect(result).toEqual({ behavior: "allow", updatedInput: edited });
  });

  it("when the approver clicks Always allow, the agent receives the chosen permission updates", async () => {
    const { result } = await answered(createCanUseTool(client), "Bash", bash, { behavior: "allow", updatedInput: bash, updatedPermissions: suggestions });
    expect(result).toEqual({ behavior: "allow", updatedInput: bash, updatedPermissions: suggestions });
  });

  it("when the approver denies with a reason, the agent receives that reason", async () => {
    const { result } = await answered(createCanUseTool(client), "Bash", bash, { behavior: "deny", message: "Not on Fridays." });
    expect(result).toEqual({ behavior: "deny", message: "Not on Fridays." });
  });

  it("when the approver denies and stops, the agent receives deny with interrupt", async () => {
    const { result } = await answered(createCanUseTool(client), "Bash", bash, { behavior: "deny", message: "Denied by alice in Slack.", interrupt: true });
    expect(result).toEqual({ behavior: "deny", message: "Denied by alice in Slack.", interrupt: true });
  });

  it("when no one answers in time, the agent is denied with a message that says so", async () => {
    relay.defaultTimeoutSeconds = 600;
    await expect(ended(createCanUseTool(client), { status: "expired" })).resolves.toEqual({
      behavior: "deny",
      message: "No one answered in Slack within 10 minutes.",
    });
  });

  it("when the request expires with a deny that interrupts (its route's onTimeout: halt), the agent is denied and stopped", async () => {
    const decision = {
      behavior: "deny",
      message: "No one answered in Slack within 10 minutes, so the tool call was denied and the agent was stopped.",
      interrupt: true,
    };
    await expect(ended(createCanUseTool(client), { status: "expired", decision })).resolves.toEqual(decision);
  });

  it("an expired request never allows, whatever decision it carries", async () => {
    relay.defaultTimeoutSeconds = 600;
    await expect(ended(createCanUseTool(client), { status: "expired", decision: { behavior: "allow", updatedInput: {} } })).resolves.toEqual({
      behavior: "deny",
      message: "No one answered in Slack within 10 minutes.",
    });
  });

  it("when the request is cancelled, the agent is denied with a message that says so", async () => {
    const result = await ended(createCanUseTool(client), { status: "cancelled" });
    expect(result).toMatchObject({ behavior: "deny", message: expect.stringMatching(/cancelled/) });
  });

  it("when Slack refuses the message, the agent is denied with Slack's reason", async () => {
    const result = await ended(createCanUseTool(client), { status: "failed", error: "channel_not_found" });
    expect(result).toMatchObject({ behavior: "deny", message: expect.stringMatching(/channel_not_found/) });
  });

  it("when the relay is unreachable, the agent is denied and nothing escapes the callback", async () => {
    await relay.stop();
    const errors: unknown[] = [];
    const result = await createCanUseTool(client, { onError: (e) => errors.push(e) })("Bash", bash, sdkContext());
    expect(result).toMatchObject({ behavior: "deny", message: expect.stringMatching(/could not be reached/) });
    expect(errors).toHaveLength(1);
  });

  it("when the relay refuses the token, the agent is denied with the relay's reason", async () => {
    const stranger = new RelayClient({ url: relay.url, token: "wrong-token-000000000" });
    const result = await createCanUseTool(stranger)("Bash", bash, sdkContext());
    expect(result).toMatchObject({ behavior: "deny", message: expect.stringMatching(/refused/) });
  });

  it("when the answer is not a permission decision, the agent is denied", async () => {
    const { result } = await answered(createCanUseTool(client), "Bash", bash, { reply: "y" });
    expect(result?.behavior).toBe("deny");
  });

  it("when the SDK aborts, the request is cancelled on the relay and the agent is denied", async () => {
    const controller = new AbortController();
    const next = relay.nextRequest();
    const result = createCanUseTool(client)("Bash", bash, sdkContext({ signal: controller.signal }));
    const request = await next;
    await until(() => relay.calls.some((c) => c.method === "GET"));
    controller.abort();
    await expect(result).resolves.toMatchObject({ behavior: "deny" });
    expect(relay.callsTo("DELETE", `/v1/requests/${request.id}`)).toHaveLength(1);
  });

  it("when onError itself throws, the callback still answers deny", async () => {
    const broken: Asker = { ask: () => Promise.reject(new Error("boom")) };
    const result = await createCanUseTool(broken, {
      onError: () => {
        throw new Error("logger down");
      },
    })("Bash", bash, sdkContext());
    expect(result).toMatchObject({ behavior: "deny", message: expect.stringMatching(/boom/) });
  });
});

describe("createCanUseTool for AskUserQuestion", () => {
  const questions = [
    {
      question: "Which database?",
      header: "Database",
      options: [
        { label: "Postgres", description: "" },
        { label: "SQLite", description: "" },
      ],
      multiSelect: false,
    },
  ];

  it("when the person picks an option, the agent receives allow with the questions and the answers", async () => {
    const { result, request } = await answered(createCanUseTool(client), "AskUserQuestion", { questions }, { answers: { "Which database?": "Postgres" } });
    expect(request.body).toMatchObject({ kind: "ask_user_question", questions });
    expect(request.body).not.toHaveProperty("toolName");
    expect(result).toEqual({ behavior: "allow", updatedInput: { questions, answers: { "Which database?": "Postgres" } } });
  });

  it("when the person answers in free text, the response is passed on too", async () => {
    const decision = { answers: { "Which database?": "MySQL, actually" }, response: "MySQL, actually" };
    const { result } = await answered(createCanUseTool(client), "AskUserQuestion", { questions }, decision);
    expect(result).toEqual({ behavior: "allow", updatedInput: { questions, ...decision } });
  });

  it("when no one answers, the agent is denied with a message that says so", async () => {
    const next = relay.nextRequest();
    const result = createCanUseTool(client)("AskUserQuestion", { questions }, sdkContext());
    relay.end((await next).id, { status: "expired" });
    await expect(result).resolves.toMatchObject({ behavior: "deny", message: expect.stringMatching(/No one answered/) });
  });

  it("when the input has no questions list, the agent is denied and nothing is posted", async () => {
    const result = await createCanUseTool(client)("AskUserQuestion", { question: "Which?" }, sdkContext());
    expect(result).toMatchObject({ behavior: "deny" });
    expect(relay.calls).toHaveLength(0);
  });
});
