import type { HookCallback, PreToolUseHookInput } from "@anthropic-ai/claude-agent-sdk";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { RelayClient } from "../../../src/client/relay-client.js";
import { createStepGate, STEP_GATE_REJECTED, STEP_GATE_STOPPED } from "../../../src/client/step-gate.js";
import { RelayStandIn, TOKEN } from "../../helpers/relay-stand-in.js";
import { until } from "../../helpers/until.js";
import { ALICE } from "../../fixtures/people.js";

let relay: RelayStandIn;
let client: RelayClient;
beforeEach(async () => {
  relay = await new RelayStandIn().start();
  client = new RelayClient({ url: relay.url, token: TOKEN, maxWaitSeconds: 5, initialRetryDelayMs: 20, maxRetryDelayMs: 100, retries: 1 });
});
afterEach(async () => {
  await relay.stop();
});

function preToolUse(overrides: Partial<PreToolUseHookInput> = {}): PreToolUseHookInput {
  return {
    hook_event_name: "PreToolUse",
    session_id: "session-1",
    transcript_path: "/tmp/t.jsonl",
    cwd: "/srv/app",
    tool_name: "Bash",
    tool_input: { command: "rm -rf build" },
    tool_use_id: "toolu_9",
    ...overrides,
  };
}

function call(gate: HookCallback, input = preToolUse(), signal = new AbortController().signal) {
  return gate(input, input.tool_use_id, { signal });
}

async function reply(gate: HookCallback, answer: "y" | "n" | "q") {
  const next = relay.nextRequest();
  const output = call(gate);
  const request = await next;
  relay.answer(request.id, { reply: answer });
  return { output: await output, request };
}

describe("createStepGate", () => {
  it("when the person answers y, the tool call is allowed", async () => {
    const { output } = await reply(createStepGate(client), "y");
    expect(output).toEqual({ hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "allow" } });
  });

  it("when the person answers n, the tool call is denied as rejected in step-by-step mode", async () => {
    const { output } = await reply(createStepGate(client), "n");
    expect(output).toEqual({
      hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: STEP_GATE_REJECTED },
    });
    expect(STEP_GATE_REJECTED).toBe("Action rejected by the user in step-by-step mode.");
  });

  it("when the person answers q, the tool call is denied and the turn stops", async () => {
    const { output } = await reply(createStepGate(client), "q");
    expect(output).toEqual({
      continue: false,
      stopReason: "Execution stopped manually by the user.",
      hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: STEP_GATE_STOPPED },
    });
  });

  it("when a tool call is gated, the step_gate request names the tool, its input, the session, the labels and who it is for, and expires before the hook's timeout, given no more time", async () => {
    const gate = createStepGate(client, { timeoutSeconds: 600, channel: "C0123456789", labels: { env: "prod" }, requestedBy: { slackUserId: ALICE.id } });
    const { request } = await reply(gate, "y");
    expect(request.body).toMatchObject({
      kind: "step_gate",
      toolName: "Bash",
      input: { command: "rm -rf build" },
      toolUseId: "toolu_9",
      channel: "C0123456789",
      labels: { env: "prod" },
      requestedBy: { slackUserId: ALICE.id },
      agent: { sessionId: "session-1", cwd: "/srv/app" },
      extendable: false,
    });
    expect(request.body.timeoutSeconds).toBeLessThan(600 - 4);
  });

  it("when the tool is on the skip list, it passes without asking", async () => {
    const gate = createStepGate(client);
    await expect(call(gate, preToolUse({ tool_name: "AskUserQuestion" }))).resolves.toEqual({});
    await expect(call(gate, preToolUse({ tool_name: "TodoWrite" }))).resolves.toEqual({});
    expect(relay.calls).toHaveLength(0);
  });

  it("when the skip list is configured, only those tools pass without asking", async () => {
    const gate = createStepGate(client, { skipTools: ["Read"] });
    await expect(call(gate, preToolUse({ tool_name: "Read" }))).resolves.toEqual({});
    expect(relay.calls).toHaveLength(0);
    const { output } = await reply(gate, "y");
    expect(output).toMatchObject({ hookSpecificOutput: { permissionDecision: "allow" } });
  });

  it("when step-by-step mode is off, tools pass without asking, and it asks again once it is on", async () => {
    let active = false;
    const gate = createStepGate(client, { isActive: () => active });
    await expect(call(gate)).resolves.toEqual({});
    expect(relay.calls).toHaveLength(0);
    active = true;
    const { output } = await reply(gate, "n");
    expect(output).toMatchObject({ hookSpecificOutput: { permissionDecision: "deny" } });
  });

  it("when no one answers, the gate denies by itself before the hook's timeout, and withdraws the request", async () => {
    const gate = createStepGate(client, { timeoutSeconds: 3, marginSeconds: 1 });
    const started = Date.now();
    const output = await call(gate);
    const elapsed = Date.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(1900);
    expect(elapsed).toBeLessThan(3000);
    expect(output).toEqual({
      hookSpecificOutput: {
        hookEventName: "PreToolUse",
        permissionDecision: "deny",
        permissionDecisionReason: "No one answered in Slack within 2 seconds, so the step was not run.",
      },
    });
    expect(relay.callsTo("DELETE", "/v1/requests/")).toHaveLength(1);
  });

  it("when the relay accepts the connection but never answers, the gate still denies before the hook's timeout", async () => {
    relay.fault = () => new Promise(() => undefined);
    const started = Date.now();
    const output = await call(createStepGate(client, { timeoutSeconds: 3, marginSeconds: 1 }));
    expect(Date.now() - started).toBeLessThan(3000);
    expect(output).toMatchObject({ hookSpecificOutput: { permissionDecision: "deny" } });
  });

  it("when the relay expires the request, the tool call is denied with a message that says no one answered", async () => {
    const next = relay.nextRequest();
    const output = call(createStepGate(client));
    relay.end((await next).id, { status: "expired" });
    await expect(output).resolves.toMatchObject({
      hookSpecificOutput: { permissionDecision: "deny", permissionDecisionReason: expect.stringMatching(/^No one answered in Slack within/) },
    });
  });

  it("when the relay expires the request with q (its route's onTimeout: halt), the tool call is denied and the turn stops, saying no one answered", async () => {
    const next = relay.nextRequest();
    const output = call(createStepGate(client, { timeoutSeconds: 60 }));
    relay.end((await next).id, { status: "expired", decision: { reply: "q" } });
    const halted = "No one answered in Slack within 54 seconds, so the tool call was denied and the agent was stopped.";
    await expect(output).resolves.toEqual({
      continue: false,
      stopReason: halted,
      hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: halted },
    });
  });

  it("when the relay is unreachable, the tool call is denied", async () => {
    await relay.stop();
    await expect(call(createStepGate(client))).resolves.toMatchObject({
      hookSpecificOutput: { permissionDecision: "deny", permissionDecisionReason: expect.stringMatching(/could not be reached/) },
    });
  });

  it("when the SDK aborts the hook, the request is cancelled on the relay and the call is denied", async () => {
    const controller = new AbortController();
    const next = relay.nextRequest();
    const output = call(createStepGate(client), preToolUse(), controller.signal);
    const request = await next;
    await until(() => relay.calls.some((c) => c.method === "GET"));
    controller.abort();
    await expect(output).resolves.toMatchObject({ hookSpecificOutput: { permissionDecision: "deny" } });
    expect(relay.callsTo("DELETE", `/v1/requests/${request.id}`)).toHaveLength(1);
  });

  it("when the answer is not y, n or q, the tool call is denied", async () => {
    const next = relay.nextRequest();
    const output = call(createStepGate(client));
    relay.answer((await next).id, { behavior: "allow", updatedInput: {} });
    await expect(output).resolves.toMatchObject({ hookSpecificOutput: { permissionDecision: "deny" } });
  });

  it("when the gate is configured with no time to ask before its timeout, it refuses to be created", () => {
    expect(() => createStepGate(client, { timeoutSeconds: 5, marginSeconds: 5 })).toThrow(RangeError);
  });
});
