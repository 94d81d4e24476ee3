/**
 * The client library against the relay's real HTTP API (real handler, real
 * RequestService, memory store; Slack is the helper's fake messenger): the
 * adapters get exactly the decisions a person gives.
 */
import type { CanUseTool, HookCallback, PreToolUseHookInput } from "@anthropic-ai/claude-agent-sdk";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  createCanUseTool,
  createStepGate,
  RelayClient,
  RelayClientError,
  RequestEndedError,
  STEP_GATE_REJECTED,
  STEP_GATE_STOPPED,
} from "../../../src/client/index.js";
import type { Decision } from "../../../src/protocol/decisions.js";
import type { RequestRecord } from "../../../src/requests/model.js";
import { startApiRelay, type ApiRelay } from "../../helpers/api-relay.js";
import { ALICE, BOB } from "../../fixtures/people.js";
import { until } from "../../helpers/until.js";

let relay: ApiRelay;
let client: RelayClient;
beforeEach(async () => {
  relay = await startApiRelay();
  client = new RelayClient({ url: relay.url, token: relay.tokens[0]!.token, maxWaitSeconds: 5, initialRetryDelayMs: 20, retries: 1 });
});
afterEach(async () => {
  await relay.close();
});

/** Waits for the next request to reach the store, then answers it as alice. */
async function answerNext(decision: Decision): Promise<RequestRecord> {
  const seen = relay.stored.length;
  await until(() => relay.stored.length > seen);
  const record = relay.stored[seen]!;
  await relay.service.answer(record.id, decision, ALICE);
  return record;
}

const sdkContext = (signal = new AbortController().signal): Parameters<CanUseTool>[2] => ({ signal, toolUseID: "toolu_1", requestId: "req_1" });
const bash = { command: "npm run deploy" };

describe("RelayClient against the real relay", () => {
  it("when a person answers, ask returns the request with their decision and name", async () => {
    const asking = client.ask({ kind: "step_gate", toolName: "Bash", input: bash });
    await answerNext({ reply: "y" });
    await expect(asking).resolves.toMatchObject({ kind: "step_gate", status: "answered", decision: { reply: "y" }, answeredBy: ALICE });
  });

  it("while it waits, ask tells onPending the request's id and deadline, then where the relay posted it, polling briefly until then", async () => {
    const heard: Array<{ id: string; expiresAt: string; slack?: unknown }> = [];
    let post!: () => void;
    const posting = new Promise<void>((resolve) => (post = resolve));
    const postWith = relay.messenger.postWith;
    relay.messenger.postWith = async (record, options) => {
      await posting;
      return postWith(record, options);
    };
    const asking = client.ask({ kind: "step_gate", toolName: "Bash", input: bash }, { onPending: (request) => heard.push(request) });
    await until(() => heard.length >= 2);
    expect(heard[0]).toMatchObject({ status: "pending", expiresAt: expect.any(String) });
    expect(heard.every((view) => view.slack === undefined)).toBe(true);
    post();
    await until(() => heard.some((view) => view.slack !== undefined));
    expect(heard.at(-1)!.slack).toEqual({ channel: relay.messenger.refs[0]!.channel, ts: relay.messenger.refs[0]!.ts });
    const id = heard[0]!.id;
    await relay.service.answer(id, { reply: "y" }, ALICE);
    await expect(asking).resolves.toMatchObject({ id, status: "answered" });
    expect(heard.every((view) => view.id === id)).toBe(true);
  });

  it("when a request carries labels, the relay stores them with it", async () => {
    const asking = client.ask({ kind: "step_gate", toolName: "Bash", input: bash, labels: { env: "prod", team: "payments" } });
    const record = await answerNext({ reply: "y" });
    await asking;
    expect(record.body.labels).toEqual({ env: "prod", team: "payments" });
  });

  it("when canUseTool is given labels, every permission request it makes carries them", async () => {
    const result = createCanUseTool(client, { labels: { env: "prod" } })("Bash", bash, sdkContext());
    const record = await answerNext({ behavior: "allow", updatedInput: bash });
    await result;
    expect(record.body).toMatchObject({ kind: "permission", labels: { env: "prod" } });
  });

  it("when an adapter is given requestedBy, the relay keeps who each request is for on its policy", async () => {
    const result = createCanUseTool(client, { requestedBy: { slackUserId: BOB.id } })("Bash", bash, sdkContext());
    const record = await answerNext({ behavior: "allow", updatedInput: bash });
    await result;
    expect(record.body.requestedBy).toEqual({ slackUserId: BOB.id });
    expect(record.policy?.requestedBy).toEqual({ id: BOB.id });
  });

  it("when the same idempotency key is sent twice, both calls get the same request and it is posted once", async () => {
    const first = await client.request({ kind: "step_gate", toolName: "Bash", input: bash }, { idempotencyKey: "job-7" });
    const second = await client.request({ kind: "step_gate", toolName: "Bash", input: bash }, { idempotencyKey: "job-7" });
    expect(second.id).toBe(first.id);
    await relay.service.idle();
    expect(relay.messenger.posts).toHaveLength(1);
  });

  it("when the body is invalid, the 400 names the field and nothing is stored", async () => {
    const failure = await client.request({ kind: "step_gate", toolName: "", input: bash }).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(RelayClientError);
    expect(failure).toMatchObject({ code: "relay_invalid_request", status: 400, details: [expect.objectContaining({ path: "toolName" })] });
    expect(relay.stored).toHaveLength(0);
  });

  it("when the token is unknown, the 401 comes back as relay_unauthorized", async () => {
    const stranger = new RelayClient({ url: relay.url, token: "not-a-configured-token" });
    await expect(stranger.request({ kind: "step_gate", toolName: "Bash", input: bash })).rejects.toMatchObject({ code: "relay_unauthorized", status: 401 });
  });

  it("when the id is unknown, wait fails with relay_not_found", async () => {
    await expect(client.wait("no-such-request")).rejects.toMatchObject({ code: "relay_not_found", status: 404 });
  });

  it("when the agent aborts, the request is cancelled on the relay and Slack is told", async () => {
    const controller = new AbortController();
    const asking = client.ask({ kind: "step_gate", toolName: "Bash", input: bash }, { signal: controller.signal });
    await until(() => relay.stored.length === 1 && relay.service.waiting === 1);
    controller.abort();
    await expect(asking).rejects.toMatchObject({ name: "AbortError" });
    expect((await relay.service.get(relay.stored[0]!.id))?.status).toBe("cancelled");
    await relay.service.idle();
    expect(relay.messenger.ended.map((r) => r.status)).toEqual(["cancelled"]);
  });

  it("when no one answers before the timeout, ask returns the request expired", async () => {
    await expect(client.ask({ kind: "step_gate", toolName: "Bash", input: bash, timeoutSeconds: 1 })).resolves.toMatchObject({ status: "expired" });
  });
});

describe("adapters against the real relay", () => {
  it("when the approver clicks Always allow, canUseTool returns the PermissionResult the relay recorded", async () => {
    const suggestions = [{ type: "addRules" as const, rules: [{ toolName: "Bash" }], behavior: "allow" as const, destination: "session" as const }];
    const result = createCanUseTool(client)("Bash", bash, { ...sdkContext(), suggestions });
    const record = await answerNext({ behavior: "allow", updatedInput: bash, updatedPermissions: suggestions });
    await expect(result).resolves.toEqual({ behavior: "allow", updatedInput: bash, updatedPermissions: suggestions });
    expect(record.body).toMatchObject({ kind: "permission", toolName: "Bash", toolUseId: "toolu_1", suggestions });
  });

  it("when no one answers in time, canUseTool denies with a message that says so", async () => {
    const result = await createCanUseTool(client, { timeoutSeconds: 1 })("Bash", bash, sdkContext());
    expect(result).toEqual({ behavior: "deny", message: "No one answered in Slack within 1 second." });
  });

  it("when the person answers AskUserQuestion, the answers reach updatedInput", async () => {
    const questions = [
      {
        question: "Which?",
        header: "Pick",
        options: [
          { label: "A", description: "" },
          { label: "B", description: "" },
        ],
        multiSelect: false,
      },
    ];
    const result = createCanUseTool(client)("AskUserQuestion", { questions }, sdkContext());
    await answerNext({ answers: { "Which?": "B" } });
    await expect(result).resolves.toEqual({ behavior: "allow", updatedInput: { questions, answers: { "Which?": "B" } } });
  });

  const preToolUse: PreToolUseHookInput = {
    hook_event_name: "PreToolUse",
    session_id: "s-1",
    transcript_path: "/tmp/t.jsonl",
    cwd: "/srv",
    tool_name: "Bash",
    tool_input: bash,
    tool_use_id: "toolu_2",
  };
  const gateCall = (gate: HookCallback) => gate(preToolUse, "toolu_2", { signal: new AbortController().signal });

  for (const [reply, expected] of [
    ["y", { hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "allow" } }],
    ["n", { hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: STEP_GATE_REJECTED } }],
    [
      "q",
      {
        continue: false,
        stopReason: STEP_GATE_STOPPED,
        hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: STEP_GATE_STOPPED },
      },
    ],
  ] as const) {
    it(`when the person answers ${reply}, the step gate returns the matching hook output`, async () => {
      const output = gateCall(createStepGate(client));
      await answerNext({ reply });
      await expect(output).resolves.toEqual(expected);
    });
  }

  it("when every InteractiveQuestion has a default in autonomous mode, askInteractive answers at once and nothing is posted", async () => {
    const answers = await client.askInteractive(
      [
        { id: "region", question: "Region?", type: "choice", options: ["eu", "us"], default: "eu" },
        { id: "notify", question: "Notify?", type: "confirm", default: false },
      ],
      { autonomous: true },
    );
    expect(answers).toEqual({ region: "eu", notify: false });
    await relay.service.idle();
    expect(relay.messenger.posts).toHaveLength(0);
  });

  it("when Slack refuses the message, askInteractive rejects with the reason", async () => {
    relay.messenger.refuseWith = "channel_not_found";
    const failure = await client.askInteractive([{ id: "go", question: "Go?", type: "confirm" }]).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(RequestEndedError);
    expect(failure).toMatchObject({ status: "failed", message: expect.stringMatching(/channel_not_found/) });
  });
});
