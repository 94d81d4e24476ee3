import { describe, expect } from "vitest";
import { error, TOKEN } from "../../helpers/relay-stand-in.js";
import { CONCURRENT_CLI_TIMEOUT_MS, cliTest as it, runCli } from "../../helpers/cli.js";

/** Hook input as Claude Code writes it on a command hook's stdin. */
const preToolUse = {
  session_id: "abc123",
  transcript_path: "/home/dev/.claude/projects/app/abc123.jsonl",
  cwd: "/home/dev/app",
  permission_mode: "default",
  hook_event_name: "PreToolUse",
  tool_name: "Bash",
  tool_input: { command: "npm run deploy", description: "Deploy" },
  tool_use_id: "toolu_01ABC",
};
const permissionRequest = {
  session_id: "abc123",
  transcript_path: "/home/dev/.claude/projects/app/abc123.jsonl",
  cwd: "/home/dev/app",
  permission_mode: "default",
  hook_event_name: "PermissionRequest",
  tool_name: "Bash",
  tool_input: { command: "rm -rf dist" },
  permission_suggestions: [{ type: "addRules", rules: [{ toolName: "Bash", ruleContent: "rm -rf dist" }], behavior: "allow", destination: "localSettings" }],
};

function hook(env: Record<string, string>, input: unknown, args: string[] = []) {
  return runCli(["hook", ...args], { env, stdin: typeof input === "string" ? input : JSON.stringify(input) });
}

function printed(stdout: string): unknown {
  return JSON.parse(stdout);
}

const preToolUseDeny = (reason: RegExp) => ({
  hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: expect.stringMatching(reason) },
});

describe.concurrent("approval-relay hook", { timeout: CONCURRENT_CLI_TIMEOUT_MS }, () => {
  it("when the relay answers a PreToolUse hook, its JSON is printed and the hook input reached it unchanged with the timeout", async ({
    relay,
    env,
    expect,
  }) => {
    const reply = { hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "allow" } };
    relay.hook = () => ({ status: 200, json: reply });
    const result = await hook(env, preToolUse, ["--timeout", "120"]);
    expect(result.code).toBe(0);
    expect(printed(result.stdout)).toEqual(reply);
    const [call] = relay.callsTo("POST", "/v1/hooks/claude-code");
    expect(call!.query.get("timeout")).toBe("120");
    expect(call!.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(JSON.parse(call!.text)).toEqual(preToolUse);
  });

  it("when the relay answers q, the stop fields reach Claude Code too", async ({ relay, env, expect }) => {
    const reply = {
      continue: false,
      stopReason: "Execution stopped manually by the user.",
      hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: "Execution stopped manually by the user." },
    };
    relay.hook = () => ({ status: 200, json: reply });
    expect(printed((await hook(env, preToolUse)).stdout)).toEqual(reply);
  });

  it("when the relay answers a PermissionRequest hook, its decision is printed", async ({ relay, env, expect }) => {
    const reply = { hookSpecificOutput: { hookEventName: "PermissionRequest", decision: { behavior: "allow", updatedInput: permissionRequest.tool_input } } };
    relay.hook = () => ({ status: 200, json: reply });
    const result = await hook(env, permissionRequest);
    expect(result.code).toBe(0);
    expect(printed(result.stdout)).toEqual(reply);
    expect(relay.calls[0]!.query.get("timeout")).toBe("600");
  });

  it("when the relay cannot be reached, a PreToolUse call is denied with the reason and the hook exits 0", async ({ relay, env, expect }) => {
    await relay.stop();
    const result = await hook(env, preToolUse);
    expect(result.code).toBe(0);
    expect(printed(result.stdout)).toEqual(preToolUseDeny(/could not be reached.*ECONNREFUSED/));
  });

  it("when the relay cannot be reached, a PermissionRequest is denied in that event's shape", async ({ relay, env, expect }) => {
    await relay.stop();
    const result = await hook(env, permissionRequest);
    expect(result.code).toBe(0);
    expect(printed(result.stdout)).toEqual({
      hookSpecificOutput: { hookEventName: "PermissionRequest", decision: { behavior: "deny", message: expect.stringMatching(/could not be reached/) } },
    });
  });

  it("when the relay keeps failing with 500, the call is denied after the retries", async ({ relay, env, expect }) => {
    relay.hook = () => error(500, "relay_internal", "bug");
    const result = await hook(env, preToolUse);
    expect(printed(result.stdout)).toEqual(preToolUseDeny(/HTTP 500/));
    expect(relay.callsTo("POST", "/v1/hooks/claude-code")).toHaveLength(2);
  });

  it("when the relay recovers from a 503 on the retry, its answer is printed", async ({ relay, env, expect }) => {
    const replies = [
      error(503, "relay_not_ready", "starting"),
      { status: 200, json: { hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "allow" } } },
    ];
    relay.hook = () => replies.shift()!;
    const result = await hook(env, preToolUse);
    expect(printed(result.stdout)).toMatchObject({ hookSpecificOutput: { permissionDecision: "allow" } });
  });

  it("when the relay refuses the hook body (400), the call is denied with the relay's message and not retried", async ({ relay, env, expect }) => {
    relay.hook = () => error(400, "relay_invalid_request", "Invalid request: tool_name: Required");
    const result = await hook(env, preToolUse);
    expect(printed(result.stdout)).toEqual(preToolUseDeny(/tool_name: Required/));
    expect(relay.calls).toHaveLength(1);
  });

  it("when the token is refused (401), the call is denied", async ({ relay: _relay, env, expect }) => {
    const result = await hook({ ...env, RELAY_TOKEN: "wrong-token-000000000" }, preToolUse);
    expect(printed(result.stdout)).toEqual(preToolUseDeny(/refused.*401/));
  });

  for (const [what, reply] of [
    ["a body that is not JSON", { status: 200, text: "<html>proxy error</html>" }],
    ["JSON that is not a decision", { status: 200, json: { ok: true } }],
    ["a decision for another event", { status: 200, json: { hookSpecificOutput: { hookEventName: "PermissionRequest", decision: { behavior: "allow" } } } }],
  ] as const) {
    it(`when the relay answers ${what}, the call is denied`, async ({ relay, env, expect }) => {
      relay.hook = () => reply;
      const result = await hook(env, preToolUse);
      expect(result.code).toBe(0);
      expect(printed(result.stdout)).toEqual(preToolUseDeny(/could not be reached|not the JSON/));
    });
  }

  it("when the relay does not answer before the hook's timeout, the hook denies by itself before Claude Code gives up", async ({ relay, env, expect }) => {
    let askedAt = 0;
    relay.hook = () => {
      askedAt = Date.now();
      return new Promise(() => undefined);
    };
    const result = await hook(env, preToolUse, ["--timeout", "3"]);
    expect(Date.now() - askedAt).toBeLessThan(3000);
    expect(printed(result.stdout)).toEqual(preToolUseDeny(/no reply within 2 seconds/));
  });

  it("when --timeout is under the 3 seconds the relay needs, the call is denied without asking", async ({ relay, env, expect }) => {
    const result = await hook(env, preToolUse, ["--timeout", "2"]);
    expect(result.code).toBe(0);
    expect(printed(result.stdout)).toEqual(preToolUseDeny(/from 3 to 86400/));
    expect(relay.calls).toHaveLength(0);
  });

  it("when RELAY_URL is not set, the call is denied and says so", async ({ relay: _relay, env: _env, expect }) => {
    const result = await hook({ RELAY_TOKEN: TOKEN }, preToolUse);
    expect(result.code).toBe(0);
    expect(printed(result.stdout)).toEqual(preToolUseDeny(/RELAY_URL is not set/));
  });

  it("when given bad arguments, the call is denied and the usage goes to stderr", async ({ relay, env, expect }) => {
    const result = await hook(env, preToolUse, ["--wait", "5"]);
    expect(result.code).toBe(0);
    expect(printed(result.stdout)).toEqual(preToolUseDeny(/bad arguments/));
    expect(result.stderr).toMatch(/Usage: approval-relay/);
    expect(relay.calls).toHaveLength(0);
  });

  it("when stdin is not JSON, it exits 2 (Claude Code's blocking error) with the reason on stderr", async ({ relay, env, expect }) => {
    const result = await hook(env, "PreToolUse please");
    expect(result.code).toBe(2);
    expect(result.stdout).toBe("");
    expect(result.stderr).toMatch(/not JSON; blocked to be safe/);
    expect(relay.calls).toHaveLength(0);
  });

  it("when the hook event is not one the relay answers, it exits 2 with the reason on stderr", async ({ relay, env, expect }) => {
    const result = await hook(env, { ...preToolUse, hook_event_name: "PostToolUse" });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/"PostToolUse"/);
    expect(relay.calls).toHaveLength(0);
  });
});
