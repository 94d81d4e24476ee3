import { describe, expect, it } from "vitest";
import { parseHookInput } from "../../../../src/requests/hooks/input.js";
import { hookRequestBody, hookRequestKey, keyForAttempt } from "../../../../src/requests/hooks/request.js";
import { parseCreateBody } from "../../../../src/http/parse.js";
import { hookFixture } from "../../../fixtures/claude-code.js";

const preToolUse = (over: Record<string, unknown> = {}) => parseHookInput({ ...hookFixture("pre-tool-use"), ...over });
const permissionRequest = (over: Record<string, unknown> = {}) => parseHookInput({ ...hookFixture("permission-request"), ...over });

describe("hookRequestBody", () => {
  it("a PermissionRequest becomes a permission request with the suggestions, the session and the reply deadline as timeout, given no more time", () => {
    const fixture = hookFixture("permission-request");
    const body = hookRequestBody(permissionRequest(), { timeoutSeconds: 595 });
    expect(body).toEqual({
      kind: "permission",
      toolName: "Bash",
      input: fixture.tool_input,
      suggestions: fixture.permission_suggestions,
      agent: { name: "Claude Code", sessionId: "00eab317-352c-497b-8392-08d449b6ae9e", cwd: "/home/dev/web" },
      timeoutSeconds: 595,
      extendable: false,
    });
    expect(parseCreateBody(body)).toEqual(body);
  });

  it("a PreToolUse becomes a step gate with the tool use id and the channel from the URL", () => {
    const body = hookRequestBody(preToolUse(), { timeoutSeconds: 27, channel: "C0DEPLOYS99" });
    expect(body).toEqual({
      kind: "step_gate",
      toolName: "Bash",
      input: { command: "npm run deploy -- --env production", description: "Deploy the web app to production" },
      toolUseId: "toolu_01D7FLrfh4GYq7yT1ULFeyMV",
      agent: { name: "Claude Code", sessionId: "00eab317-352c-497b-8392-08d449b6ae9e", cwd: "/home/dev/web" },
      timeoutSeconds: 27,
      extendable: false,
      channel: "C0DEPLOYS99",
    });
    expect(parseCreateBody(body)).toEqual(body);
  });

  it("leaves out what the hook input does not have", () => {
    const { cwd: _c, permission_suggestions: _p, ...bare } = hookFixture("permission-request");
    const body = hookRequestBody(parseHookInput(bare), { timeoutSeconds: 8 });
    expect(body).toEqual({
      kind: "permission",
      toolName: "Bash",
      input: bare.tool_input,
      agent: { name: "Claude Code", sessionId: bare.session_id },
      timeoutSeconds: 8,
      extendable: false,
    });
  });
});

describe("hookRequestKey", () => {
  it("names the tool call by event, session and tool use id, and trusts an answer found under it", () => {
    expect(hookRequestKey(preToolUse())).toEqual({
      key: "claude-code:PreToolUse:00eab317-352c-497b-8392-08d449b6ae9e:toolu_01D7FLrfh4GYq7yT1ULFeyMV",
      answerBelongsToCall: true,
    });
  });

  it("gives the same tool call in another session or as another event another key", () => {
    const key = hookRequestKey(preToolUse()).key;
    expect(hookRequestKey(preToolUse({ session_id: "11111111-2222-3333-4444-555555555555" })).key).not.toBe(key);
    expect(hookRequestKey(permissionRequest({ tool_use_id: "toolu_01D7FLrfh4GYq7yT1ULFeyMV" })).key).not.toBe(key);
  });

  it("hashes ids with characters a key should not carry", () => {
    const { key } = hookRequestKey(preToolUse({ session_id: "a b{c}", tool_use_id: "x:y" }));
    expect(key).toMatch(/^claude-code:PreToolUse:[0-9a-f]{64}$/);
  });

  it("without a tool use id, keys the call by its content and does not trust an answer found under it", () => {
    const first = hookRequestKey(permissionRequest());
    expect(first).toEqual({ key: expect.stringMatching(/^claude-code:PermissionRequest:input:[0-9a-f]{64}$/), answerBelongsToCall: false });
    expect(hookRequestKey(permissionRequest()).key).toBe(first.key);
    expect(hookRequestKey(permissionRequest({ tool_input: { command: "ls" } })).key).not.toBe(first.key);
    expect(hookRequestKey(permissionRequest({ prompt_id: "another-prompt" })).key).not.toBe(first.key);
    expect(hookRequestKey(permissionRequest({ agent_id: "subagent-1" })).key).not.toBe(first.key);
  });

  it("numbers the keys of later requests for the same call", () => {
    expect([1, 2, 3].map((n) => keyForAttempt("k", n))).toEqual(["k", "k#2", "k#3"]);
  });
});
