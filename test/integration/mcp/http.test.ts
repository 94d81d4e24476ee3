/**
 * The relay's MCP server at POST /mcp, called by the official MCP SDK client
 * over Streamable HTTP, against the whole relay as `approval-relay serve`
 * runs it (Slack's Web API on the loopback stand-in); the person answers
 * with signed Slack clicks and modal submissions on what the relay posted.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { Action, Field, View } from "../../../src/slack/ids.js";
import { AGENT_TOKEN, startFullRelay, type FullRelay } from "../../helpers/full-relay.js";
import { clickOption, httpMcpClient, textOf } from "../../helpers/mcp.js";
import { state, viewSubmission } from "../../helpers/slack.js";

const DEPLOY = { command: "make deploy", description: "Deploy" };

let relay: FullRelay;
let client: Client;
let postsBefore = 0;
let modalsBefore = 0;

beforeAll(async () => {
  relay = await startFullRelay({ env: { RELAY_MCP_PROGRESS: "1", RELAY_MCP_ORIGINS: "https://inspector.example.com" } });
});
afterAll(async () => {
  await relay.close();
});
beforeEach(async () => {
  postsBefore = relay.slack.requestPosts().length;
  modalsBefore = relay.slack.callsTo("views.open").length;
  client = await httpMcpClient(relay.url, AGENT_TOKEN.token);
});
afterEach(async () => {
  await client.close();
  expect(relay.slack.problems).toEqual([]);
  expect(relay.errors()).toEqual([]);
});

const message = (index = 0) => relay.message(postsBefore + index);
const at = (field: { block: string; action: string }, element: unknown) => ({ [field.block]: { [field.action]: element } });

async function submit(callbackId: string, values: Record<string, Record<string, unknown>>) {
  const opened = await relay.modal(modalsBefore);
  expect(opened.callbackId).toBe(callbackId);
  expect(await relay.post(viewSubmission({ callbackId, privateMetadata: opened.privateMetadata, values }))).toBe("");
}

const approve = (args: Record<string, unknown>) => client.callTool({ name: "approve", arguments: args });

describe("approve, Claude Code's permission prompt tool, over Streamable HTTP", () => {
  it("when the person clicks Allow, the result text is an allow with the original input", async () => {
    const call = approve({ tool_name: "Bash", input: DEPLOY, tool_use_id: "toolu_allow" });
    await relay.click(await message(), Action.allow);
    expect(JSON.parse(textOf(await call))).toEqual({ behavior: "allow", updatedInput: DEPLOY });
  });

  it("when the person edits the input, the allow carries the edited input", async () => {
    const call = approve({ tool_name: "Bash", input: DEPLOY });
    await relay.click(await message(), Action.edit);
    const edited = { command: "make deploy-canary", description: "Deploy" };
    await submit(View.edit, at(Field.editJson, state.text(JSON.stringify(edited))));
    expect(JSON.parse(textOf(await call))).toEqual({ behavior: "allow", updatedInput: edited });
  });

  it("when the person clicks Deny, the result text is a deny with a message saying who denied", async () => {
    const call = approve({ tool_name: "Bash", input: DEPLOY });
    await relay.click(await message(), Action.deny);
    const result = JSON.parse(textOf(await call)) as { behavior: string; message: string };
    expect(result.behavior).toBe("deny");
    expect(result.message).toMatch(/Denied by .+ in Slack/);
  });

  it("AskUserQuestion is asked as questions, and the answer comes back as an allow with updatedInput.answers", async () => {
    const questions = [
      {
        question: "Which color?",
        header: "Color",
        multiSelect: false,
        options: [
          { label: "Red", description: "Warm" },
          { label: "Blue", description: "Cool" },
        ],
      },
    ];
    const call = approve({ tool_name: "AskUserQuestion", input: { questions }, tool_use_id: "toolu_ask" });
    await clickOption(relay, await message(), "Blue");
    expect(JSON.parse(textOf(await call))).toEqual({ behavior: "allow", updatedInput: { questions, answers: { "Which color?": "Blue" } } });
  });

  it("a repeated tool_use_id joins the request the first call made: one Slack message, one answer for both", async () => {
    const first = approve({ tool_name: "Bash", input: DEPLOY, tool_use_id: "toolu_twice" });
    const posted = await message();
    const second = approve({ tool_name: "Bash", input: DEPLOY, tool_use_id: "toolu_twice" });
    await new Promise((resolve) => setTimeout(resolve, 300));
    await relay.click(posted, Action.allow);
    const allow = { behavior: "allow", updatedInput: DEPLOY };
    expect(JSON.parse(textOf(await first))).toEqual(allow);
    expect(JSON.parse(textOf(await second))).toEqual(allow);
    expect(relay.slack.requestPosts().length - postsBefore).toBe(1);
  });

  it("a request the relay refuses (AskUserQuestion without valid questions) is a deny naming the field, never an allow", async () => {
    const result = JSON.parse(textOf(await approve({ tool_name: "AskUserQuestion", input: { questions: [] } }))) as { behavior: string; message: string };
    expect(result.behavior).toBe("deny");
    expect(result.message).toContain("questions");
    expect(relay.slack.requestPosts().length - postsBefore).toBe(0);
  });

  it("bad tool arguments are a tool error that names the field", async () => {
    const result = await approve({ input: DEPLOY });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/tool_name/);
  });
});

describe("ask_user and check_request over Streamable HTTP", () => {
  it("with options, the person's one tap is the answer, in the text and the structured content", async () => {
    const call = client.callTool({ name: "ask_user", arguments: { question: "Which region?", options: ["eu-west-1", "us-east-1"] } });
    await clickOption(relay, await message(), "us-east-1");
    const result = await call;
    expect(result.structuredContent).toMatchObject({ status: "answered", answer: "us-east-1", kind: "interactive_questions" });
    expect(textOf(result)).toMatch(/answered: us-east-1$/);
  });

  it("without options, the text the person typed in the Answer… modal is the answer", async () => {
    const call = client.callTool({ name: "ask_user", arguments: { question: "What should the release be called?", context: "Release *42*" } });
    await relay.click(await message(), Action.answer);
    await submit(View.answer, at(Field.question(0), state.text("Aurora")));
    const result = await call;
    expect(result.structuredContent).toMatchObject({ status: "answered", answer: "Aurora" });
    expect(textOf(result)).toMatch(/answered: Aurora$/);
  });

  it("wait: false returns the request id at once; check_request then returns the answer", async () => {
    const asked = await client.callTool({ name: "ask_user", arguments: { question: "Ship it?", options: ["yes", "no"], wait: false } });
    const { requestId, status } = asked.structuredContent as { requestId: string; status: string };
    expect(status).toBe("pending");
    expect(textOf(asked)).toContain(requestId);
    const checking = client.callTool({ name: "check_request", arguments: { request_id: requestId } });
    await clickOption(relay, await message(), "yes");
    expect((await checking).structuredContent).toMatchObject({ requestId, status: "answered", answer: "yes" });
  });

  it("check_request of an unknown id is a tool error saying it was not found", async () => {
    const result = await client.callTool({ name: "check_request", arguments: { request_id: "nope" } });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/not found/);
  });

  it("an ask_user that expires says no one answered", async () => {
    const result = await client.callTool({ name: "ask_user", arguments: { question: "Anyone?", timeoutSeconds: 1 } });
    expect(result.structuredContent).toMatchObject({ status: "expired" });
    expect(textOf(result)).toMatch(/No one answered in Slack within 1 second/);
  });
});

describe("a waiting call over Streamable HTTP", () => {
  it("sends progress every RELAY_MCP_PROGRESS seconds, keeping a client with a 1.5 s timeout waiting until the answer", async () => {
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
    expect(progress).toEqual([...progress].sort((a, b) => a - b));
  });

  it("a call the client cancels cancels its request, and the Slack message says so", async () => {
    const abort = new AbortController();
    const call = approve({ tool_name: "Bash", input: DEPLOY });
    void call.catch(() => undefined);
    const posted = await message();
    const waiting = client.callTool({ name: "approve", arguments: { tool_name: "Bash", input: DEPLOY } }, undefined, { signal: abort.signal });
    const second = await message(1);
    abort.abort("the user pressed Esc");
    await expect(waiting).rejects.toThrow();
    expect(JSON.stringify(await relay.updated(second))).toContain("🚫 Cancelled: the MCP client cancelled the call");
    const record = await relay.service.findBySlackMessage({ channel: second.channel, ts: second.ts });
    expect(record?.status).toBe("cancelled");
    // The other call, in flight on the same client, is untouched.
    await relay.click(posted, Action.allow);
    expect(JSON.parse(textOf(await call))).toEqual({ behavior: "allow", updatedInput: DEPLOY });
  });
});

describe("POST /mcp refusals", () => {
  const initialize = {
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "curl", version: "1" } },
  };
  const post = (headers: Record<string, string>) =>
    fetch(`${relay.url}/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
      body: JSON.stringify(initialize),
    });

  it("an unknown token is 401", async () => {
    const response = await post({ authorization: "Bearer not-a-token-of-this-relay" });
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({ error: { code: "relay_unauthorized" } });
  });

  it("a foreign Origin is 403, even with a good token", async () => {
    const response = await post({ authorization: `Bearer ${AGENT_TOKEN.token}`, origin: "https://evil.example" });
    expect(response.status).toBe(403);
    expect(await response.json()).toMatchObject({ error: { code: "relay_forbidden", message: expect.stringContaining("RELAY_MCP_ORIGINS") } });
  });

  it("an Origin listed in RELAY_MCP_ORIGINS is served, and initialize hands out a session id", async () => {
    const response = await post({ authorization: `Bearer ${AGENT_TOKEN.token}`, origin: "https://inspector.example.com" });
    expect(response.status).toBe(200);
    expect(response.headers.get("mcp-session-id")).toMatch(/^[\w-]{36}$/);
    expect(await response.text()).toContain('"serverInfo"');
  });
});
