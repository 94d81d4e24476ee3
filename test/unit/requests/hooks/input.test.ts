import { describe, expect, it } from "vitest";
import { parseHookInput } from "../../../../src/requests/hooks/input.js";
import { MAX_DEPTH } from "../../../../src/protocol/json-depth.js";
import { RelayError } from "../../../../src/requests/errors.js";
import { hookFixture } from "../../../fixtures/claude-code.js";

/** The field paths of the 400 the input gets. */
function problems(value: unknown): Array<{ path: string; message: string }> {
  try {
    parseHookInput(value);
  } catch (error) {
    if (error instanceof RelayError && error.code === "relay_invalid_request") return error.details as Array<{ path: string; message: string }>;
    throw error;
  }
  throw new Error("accepted");
}
const paths = (value: unknown) => problems(value).map((p) => p.path);

describe("parseHookInput", () => {
  it("accepts Claude Code's PreToolUse input and keeps the fields the relay uses", () => {
    const input = parseHookInput(hookFixture("pre-tool-use"));
    expect(input).toMatchObject({
      hook_event_name: "PreToolUse",
      session_id: "00eab317-352c-497b-8392-08d449b6ae9e",
      cwd: "/home/dev/web",
      tool_name: "Bash",
      tool_input: { command: "npm run deploy -- --env production", description: "Deploy the web app to production" },
      tool_use_id: "toolu_01D7FLrfh4GYq7yT1ULFeyMV",
    });
  });

  it("accepts Claude Code's PermissionRequest input, which has no tool_use_id, with its permission suggestions", () => {
    const fixture = hookFixture("permission-request");
    const input = parseHookInput(fixture);
    expect(input.hook_event_name).toBe("PermissionRequest");
    expect(input.tool_use_id).toBeUndefined();
    expect(input.hook_event_name === "PermissionRequest" && input.permission_suggestions).toEqual(fixture.permission_suggestions);
  });

  it("lets fields it does not use pass, including ones Claude Code may add later", () => {
    const input = parseHookInput({ ...hookFixture("pre-tool-use"), mcp_server: { name: "github" }, some_future_field: [1, 2] });
    expect(input.tool_name).toBe("Bash");
  });

  it("accepts a PermissionRequest that carries a tool_use_id and one without suggestions", () => {
    const { permission_suggestions: _, ...plain } = hookFixture("permission-request");
    expect(parseHookInput({ ...plain, tool_use_id: "toolu_01X" }).tool_use_id).toBe("toolu_01X");
  });

  it("refuses another hook event by its hook_event_name alone, even though its other fields are missing", () => {
    const stop = { session_id: "s", transcript_path: "/t.jsonl", cwd: "/w", hook_event_name: "Stop", stop_hook_active: false };
    expect(problems(stop)).toEqual([
      { path: "hook_event_name", message: expect.stringMatching(/"Stop" is not answered here.*PreToolUse and PermissionRequest/) },
    ]);
    expect(paths({ ...hookFixture("pre-tool-use"), hook_event_name: "PostToolUse" })).toEqual(["hook_event_name"]);
  });

  it("says hook_event_name is required when it is missing or not a string", () => {
    const { hook_event_name: _, ...rest } = hookFixture("pre-tool-use");
    expect(problems(rest)).toEqual([{ path: "hook_event_name", message: expect.stringMatching(/is required/) }]);
    expect(paths({ ...rest, hook_event_name: 7 })).toEqual(["hook_event_name"]);
  });

  it("names every missing or mistyped field it uses", () => {
    const { session_id: _s, tool_name: _t, ...rest } = hookFixture("pre-tool-use");
    expect(paths(rest).sort()).toEqual(["session_id", "tool_name"]);
    expect(paths({ ...hookFixture("pre-tool-use"), tool_input: "ls -la" })).toEqual(["tool_input"]);
    expect(paths({ ...hookFixture("pre-tool-use"), tool_input: ["ls"] })).toEqual(["tool_input"]);
    expect(paths({ ...hookFixture("pre-tool-use"), tool_use_id: 42, cwd: null })).toEqual(["cwd", "tool_use_id"]);
    expect(paths({ ...hookFixture("pre-tool-use"), session_id: "" })).toEqual(["session_id"]);
  });

  it("names the suggestion that is not a permission update", () => {
    const fixture = hookFixture("permission-request");
    expect(paths({ ...fixture, permission_suggestions: "addRules" })).toEqual(["permission_suggestions"]);
    expect(paths({ ...fixture, permission_suggestions: [{ type: "addRules" }, { rules: [] }, "x"] })).toEqual([
      "permission_suggestions.1.type",
      "permission_suggestions.2",
    ]);
  });

  it("refuses values longer than the request they become allows", () => {
    expect(paths({ ...hookFixture("pre-tool-use"), session_id: "s".repeat(201) })).toEqual(["session_id"]);
    expect(paths({ ...hookFixture("pre-tool-use"), tool_name: "T".repeat(501) })).toEqual(["tool_name"]);
  });

  it("refuses a body that is not an object", () => {
    for (const value of [null, [], "PreToolUse", 3]) expect(paths(value)).toEqual(["(body)"]);
  });

  it("refuses a tool input nested deeper than the relay accepts, naming tool_input", () => {
    let deep: unknown = {};
    for (let i = 0; i < MAX_DEPTH; i += 1) deep = { a: deep };
    expect(paths({ ...hookFixture("pre-tool-use"), tool_input: { deep } })).toEqual(["tool_input"]);
  });
});
