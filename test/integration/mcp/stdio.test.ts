/**
 * `approval-relay mcp` spawned as MCP clients configured by command run it,
 * called by the official MCP SDK client over stdio; it forwards to the whole
 * relay (`approval-relay serve` as src/main.ts runs it, Slack's Web API on
 * the loopback stand-in), where the person answers with signed Slack clicks.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { Action, Field, View } from "../../../src/slack/ids.js";
import { AGENT_TOKEN, startFullRelay, type FullRelay } from "../../helpers/full-relay.js";
import { clickOption, stdioMcpClient, textOf } from "../../helpers/mcp.js";
import { state, viewSubmission } from "../../helpers/slack.js";

const DEPLOY = { command: "make deploy", description: "Deploy" };

let relay: FullRelay;
let client: Client;
let postsBefore = 0;
let modalsBefore = 0;

beforeAll(async () => {
  relay = await startFullRelay();
  ({ client } = await stdioMcpClient({ RELAY_URL: relay.url, RELAY_TOKEN: AGENT_TOKEN.token, RELAY_MCP_PROGRESS: "1" }));
}, 30_000);
afterAll(async () => {
  await client.close();
  await relay.close();
});
beforeEach(() => {
  postsBefore = relay.slack.requestPosts().length;
  modalsBefore = relay.slack.callsTo("views.open").length;
});
afterEach(() => {
  expect(relay.slack.problems).toEqual([]);
  expect(relay.errors()).toEqual([]);
});

const message = (index = 0) => relay.message(postsBefore + index);
const at = (field: { block: string; action: string }, element: unknown) => ({ [field.block]: { [field.action]: element } });
const approve = (args: Record<string, unknown>) => client.callTool({ name: "approve", arguments: args });

async function submit(callbackId: string, values: Record<string, Record<string, unknown>>) {
  const opened = await relay.modal(modalsBefore);
  expect(opened.callbackId).toBe(callbackId);
  expect(await relay.post(viewSubmission({ callbackId, privateMetadata: opened.privateMetadata, values }))).toBe("");
}

describe("approve over stdio", () => {
  it("when the person clicks Allow, the result text is an allow with the original input; Slack shows who asks from where", async () => {
    const call = approve({ tool_name: "Bash", input: DEPLOY, tool_use_id: "toolu_stdio_allow" });
    const posted = await message();
    expect(JSON.stringify(posted.blocks)).toContain("test-agent");
    await relay.click(posted, Action.allow);
    expect(JSON.parse(textOf(await call))).toEqual({ behavior: "allow", updatedInput: DEPLOY });
  });

  it("when the person edits the input, the allow carries the edited input", async () => {
    const call = approve({ tool_name: "Bash", input: DEPLOY });
    await relay.click(await message(), Action.edit);
    const edited = { command: "make deploy-canary", description: "Deploy" };
    await submit(View.edit, at(Field.editJson, state.text(JSON.stringify(edited))));
    expect(JSON.parse(textOf(await call))).toEqual({ behavior: "allow", updatedInput: edited });
  });

  it("when the person clicks Deny, the result text is a deny", async () => {
    const call = approve({ tool_name: "Bash", input: DEPLOY });
    await relay.click(await message(), Action.deny);
    expect(JSON.parse(textOf(await call))).toMatchObject({ behavior: "deny", message: expect.stringMatching(/Denied by .+ in Slack/) });
  });

  it("AskUserQuestion comes back as an allow with updatedInput.answers", async () => {
    const questions = [{ question: "Which color?", header: "Color", multiSelect: false, options: [{ label: "Red" }, { label: "Blue" }] }];
    const call = approve({ tool_name: "AskUserQuestion", input: { questions } });
    await clickOption(relay, await message(), "Red");
    expect(JSON.parse(textOf(await call))).toEqual({ behavior: "allow", updatedInput: { questions, answers: { "Which color?": "Red" } } });
  });

  it("bad tool arguments are a tool error naming the field", async () => {
    const result = await approve({ tool_name: "Bash" });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/input/);
  });
});

describe("ask_user and check_request over stdio", () => {
  it("with options, the person's one tap is the answer", async () => {
    const call = client.callTool({ name: "ask_user", arguments: { question: "Which region?", options: ["eu-west-1", "us-east-1"] } });
    await clickOption(relay, await message(), "eu-west-1");
    const result = await call;
    expect(result.structuredContent).toMatchObject({ status: "answered", answer: "eu-west-1" });
    expect(textOf(result)).toMatch(/answered: eu-west-1$/);
  });

  it("without options, the typed text is the answer", async () => {
    const call = client.callTool({ name: "ask_user", arguments: { question: "Release name?" } });
    await relay.click(await message(), Action.answer);
    await submit(View.answer, at(Field.question(0), state.text("Borealis")));
    expect((await call).structuredContent).toMatchObject({ status: "answered", answer: "Borealis" });
  });

  it("wait: false returns the id at once; check_request returns the answer once given", async () => {
    const asked = await client.callTool({ name: "ask_user", arguments: { question: "Ship it?", options: ["yes", "no"], wait: false } });
    const { requestId } = asked.structuredContent as { requestId: string };
    const checking = client.callTool({ name: "check_request", arguments: { request_id: requestId } });
    await clickOption(relay, await message(), "no");
    expect((await checking).structuredContent).toMatchObject({ requestId, status: "answered", answer: "no" });
  });
});

describe("a waiting call over stdio", () => {
  it("sends progress every RELAY_MCP_PROGRESS seconds, keeping a client with a 1.5 s timeout waiting", async () => {
    const progress: number[] = [];
    const call = client.callTool({ name: "approve", arguments: { tool_name: "Bash", input: DEPLOY } }, undefined, {
      timeout: 1500,
      resetTimeoutOnProgress: true,
      onprogress: (p) => progress.push(p.progress),
    });
    const posted = await message();
    await new Promise((resolve) => setTimeout(resolve, 3500));
    await relay.click(posted, Action.allow);
    expect(JSON.parse(textOf(await call))).toEqual({ behavior: "allow", updatedInput: DEPLOY });
    expect(progress.length).toBeGreaterThanOrEqual(2);
  });

  it("a call the client cancels cancels its request, and the Slack message says so", async () => {
    const abort = new AbortController();
    const call = client.callTool({ name: "approve", arguments: { tool_name: "Bash", input: DEPLOY } }, undefined, { signal: abort.signal });
    const posted = await message();
    abort.abort();
    await expect(call).rejects.toThrow();
    expect(JSON.stringify(await relay.updated(posted))).toContain("🚫 Cancelled");
    expect((await relay.service.findBySlackMessage({ channel: posted.channel, ts: posted.ts }))?.status).toBe("cancelled");
  });

  it("when the client goes (stdin closes), the request of a call still waiting is cancelled", async () => {
    const { client: leaving } = await stdioMcpClient({ RELAY_URL: relay.url, RELAY_TOKEN: AGENT_TOKEN.token });
    void leaving.callTool({ name: "approve", arguments: { tool_name: "Bash", input: DEPLOY } }).catch(() => undefined);
    const posted = await message();
    await leaving.close();
    expect(JSON.stringify(await relay.updated(posted))).toContain("🚫 Cancelled");
  });
});

describe("approval-relay mcp misconfigured", () => {
  it("with a token the relay does not know, approve denies saying the relay refused, never allows", async () => {
    const { client: stranger } = await stdioMcpClient({ RELAY_URL: relay.url, RELAY_TOKEN: "not-a-token-of-this-relay", RELAY_RETRIES: "0" });
    try {
      const result = JSON.parse(textOf(await stranger.callTool({ name: "approve", arguments: { tool_name: "Bash", input: DEPLOY } })));
      expect(result).toMatchObject({ behavior: "deny", message: expect.stringMatching(/refused the request \(.*token/i) });
      expect(relay.slack.requestPosts().length - postsBefore).toBe(0);
    } finally {
      await stranger.close();
    }
  });
});
