/**
 * What the relay's MCP tools do, whichever transport carries them: one suite,
 * run over Streamable HTTP (POST /mcp) and over stdio (`approval-relay mcp`)
 * by test/integration/mcp, each against the whole relay with the Slack
 * stand-in; the person answers with signed clicks and modal submissions.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { Action, Field, View } from "../../src/slack/ids.js";
import { startFullRelay, type FullRelay } from "./full-relay.js";
import { clickOption, textOf } from "./mcp.js";
import { state, viewSubmission } from "./slack.js";
import { COLOR_QUESTION } from "../fixtures/questions.js";

export const DEPLOY = { command: "make deploy", description: "Deploy" };

export interface McpContractOptions {
  /** The relay's environment (over startFullRelay's defaults). */
  relayEnv?: Record<string, string>;
  /** A client connected to `relay` whose waiting calls send progress every second. */
  connect: (relay: FullRelay) => Promise<Client>;
  /** What the Slack message of a request whose call was cancelled says. */
  cancelledLine: string;
}

export interface McpContract {
  relay: () => FullRelay;
  client: () => Client;
  /** Requests posted before the current test. */
  postsBefore: () => number;
}

export function mcpToolsContract(transport: string, options: McpContractOptions): McpContract {
  let relay: FullRelay;
  let client: Client;
  let postsBefore = 0;
  let modalsBefore = 0;

  beforeAll(async () => {
    relay = await startFullRelay(options.relayEnv ? { env: options.relayEnv } : {});
    client = await options.connect(relay);
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
  const submit = async (callbackId: string, values: Record<string, Record<string, unknown>>) => {
    const opened = await relay.modal(modalsBefore);
    expect(opened.callbackId).toBe(callbackId);
    expect(await relay.post(viewSubmission({ callbackId, privateMetadata: opened.privateMetadata, values }))).toBe("");
  };

  describe(`approve, Claude Code's permission prompt tool, over ${transport}`, () => {
    it("when the person clicks Allow, the result text is an allow with the original input", async () => {
      const call = approve({ tool_name: "Bash", input: DEPLOY, tool_use_id: "toolu_allow" });
      const posted = await message();
      expect(JSON.stringify(posted.blocks)).toMatch(/Permission request/);
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

    it("when the person clicks Deny, the result text is a deny saying who denied", async () => {
      const call = approve({ tool_name: "Bash", input: DEPLOY });
      await relay.click(await message(), Action.deny);
      expect(JSON.parse(textOf(await call))).toEqual({ behavior: "deny", message: "Denied by alice in Slack." });
    });

    it("AskUserQuestion is asked as its questions and comes back as an allow with updatedInput.answers", async () => {
      const questions = [COLOR_QUESTION];
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

    it("a request the relay refuses (AskUserQuestion without questions) is a deny naming the field, never an allow", async () => {
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

  describe(`ask_user and check_request over ${transport}`, () => {
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

    it("an ask_user no one answers in time says so", async () => {
      const result = await client.callTool({ name: "ask_user", arguments: { question: "Anyone?", timeoutSeconds: 1 } });
      expect(result.structuredContent).toMatchObject({ status: "expired" });
      expect(textOf(result)).toMatch(/No one answered in Slack within 1 second/);
    });
  });

  describe(`a waiting call over ${transport}`, () => {
    it("sends progress every second (RELAY_MCP_PROGRESS=1), keeping a client with a 1.5 s timeout waiting until the answer", async () => {
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

    it("a call the client cancels cancels its request, and the Slack message says so; another call goes on", async () => {
      const other = approve({ tool_name: "Bash", input: DEPLOY });
      const otherPosted = await message();
      const abort = new AbortController();
      const waiting = client.callTool({ name: "approve", arguments: { tool_name: "Bash", input: DEPLOY } }, undefined, { signal: abort.signal });
      const posted = await message(1);
      abort.abort("the user pressed Esc");
      await expect(waiting).rejects.toThrow();
      expect(JSON.stringify(await relay.updated(posted))).toContain(options.cancelledLine);
      expect((await relay.service.findBySlackMessage({ channel: posted.channel, ts: posted.ts }))?.status).toBe("cancelled");
      await relay.click(otherPosted, Action.allow);
      expect(JSON.parse(textOf(await other))).toEqual({ behavior: "allow", updatedInput: DEPLOY });
    });
  });

  return { relay: () => relay, client: () => client, postsBefore: () => postsBefore };
}
