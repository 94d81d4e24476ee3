/**
 * `approval-relay hook` against the relay's real POST /v1/hooks/claude-code
 * (real handler and RequestService, memory store, fake Slack messenger), fed
 * the exact JSON Claude Code writes on a command hook's stdin.
 */
import { readFileSync } from "node:fs";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Decision } from "../../../src/protocol/decisions.js";
import { startApiRelay, type ApiRelay } from "../../helpers/api-relay.js";
import { ALICE } from "../../fixtures/people.js";
import { runCli, startCli } from "../../helpers/cli.js";
import { until } from "../../helpers/until.js";

const fixture = (name: string) => readFileSync(new URL(`../../fixtures/claude-code/${name}`, import.meta.url), "utf8");
const preToolUse = fixture("pre-tool-use.json");
const permissionRequest = fixture("permission-request.json");

let relay: ApiRelay;
let env: Record<string, string>;
beforeEach(async () => {
  relay = await startApiRelay();
  env = { RELAY_URL: relay.url, RELAY_TOKEN: relay.tokens[0]!.token, RELAY_RETRIES: "1" };
});
afterEach(async () => {
  await relay.close();
});

async function hookAnswered(stdin: string, decision: Decision) {
  const run = runCli(["hook", "--timeout", "60"], { env, stdin });
  await until(() => relay.stored.length === 1 && relay.service.waiting === 1, 10_000);
  await relay.service.answer(relay.stored[0]!.id, decision, ALICE);
  return run;
}

describe("approval-relay hook with the real relay", () => {
  it("when the person answers q to a PreToolUse step gate, Claude Code gets the deny that stops the turn; nobody could give it more time", async () => {
    const result = await hookAnswered(preToolUse, { reply: "q" });
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({
      continue: false,
      stopReason: "Execution stopped manually by the user.",
      hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: "Execution stopped manually by the user." },
    });
    expect(relay.stored[0]!.body).toMatchObject({ kind: "step_gate", toolName: "Bash", extendable: false });
  });

  it("when the person edits the input of a PermissionRequest, Claude Code gets allow with the edited input", async () => {
    const edited = { command: "npm run deploy -- --env staging" };
    const result = await hookAnswered(permissionRequest, { behavior: "allow", updatedInput: edited });
    expect(JSON.parse(result.stdout)).toEqual({
      hookSpecificOutput: { hookEventName: "PermissionRequest", decision: { behavior: "allow", updatedInput: edited } },
    });
  });

  it("when Claude Code kills the hook while it waits, the request is cancelled and Slack is told", async () => {
    const run = startCli(["hook", "--timeout", "60"], { env, stdin: preToolUse });
    await until(() => relay.stored.length === 1 && relay.service.waiting === 1, 10_000);
    run.child.kill("SIGTERM");
    await run.done;
    await until(() => relay.messenger.ended.length === 1);
    expect(relay.messenger.ended[0]!.status).toBe("cancelled");
  });

  it("when the relay refuses the hook input, the tool call is denied with the relay's field errors", async () => {
    const broken = JSON.stringify({ ...JSON.parse(preToolUse), tool_name: 42 });
    const result = await runCli(["hook"], { env, stdin: broken });
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({
      hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: expect.stringMatching(/tool_name/) },
    });
    expect(relay.stored).toHaveLength(0);
  });
});
