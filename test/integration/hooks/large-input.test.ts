/**
 * Large inputs can be approved (issue 20): a Claude Code Write of a 5 MB file
 * through POST /v1/hooks/claude-code, on the whole relay as `approval-relay
 * serve` runs it (RELAY_MAX_BODY at its default). The message shows the start
 * of the content and a View full input button, which opens the whole of it;
 * a signed Allow click answers the held hook call with allow.
 */
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Action } from "../../../src/slack/ids.js";
import { AGENT_TOKEN, startFullRelay, type FullRelay } from "../../helpers/full-relay.js";

const fixture = JSON.parse(readFileSync(new URL("../../fixtures/claude-code/permission-request.json", import.meta.url), "utf8")) as Record<string, unknown>;
const FIVE_MB = 5 * 1024 * 1024;

let relay: FullRelay;
beforeAll(async () => {
  relay = await startFullRelay();
});
afterAll(async () => {
  await relay.close();
});

function writeCall(content: string): Record<string, unknown> {
  return { ...fixture, tool_name: "Write", tool_input: { file_path: "/home/dev/web/dist/bundle.js", content }, permission_suggestions: [] };
}

describe("a Claude Code Write over 1 MB", () => {
  it("a 5 MB Write is posted with the start of its content and View full input, and a signed Allow click approves it", async () => {
    const content = `// generated bundle\n${"const x = 1;\n".repeat(FIVE_MB / 13)}`;
    const call = fetch(`${relay.url}/v1/hooks/claude-code?timeout=60`, {
      method: "POST",
      headers: { authorization: `Bearer ${AGENT_TOKEN.token}`, "content-type": "application/json" },
      body: JSON.stringify(writeCall(content)),
    });

    const message = await relay.message(0);
    const shown = JSON.stringify(message.blocks);
    expect(shown).toContain("/home/dev/web/dist/bundle.js");
    expect(shown).toContain("// generated bundle");
    expect(shown).toMatch(/more characters/);
    expect(shown).toContain(Action.viewInput);
    expect(shown.length).toBeLessThan(40_000);

    await relay.click(message, Action.viewInput);
    const modal = await relay.modal(0);
    expect(JSON.stringify(modal.view)).toContain("const x = 1;");

    await relay.click(message, Action.allow);
    const response = await call;
    expect(response.status).toBe(200);
    const output = JSON.parse((await response.text()).trim()) as { hookSpecificOutput: { decision: { behavior: string } } };
    expect(output.hookSpecificOutput.decision.behavior).toBe("allow");
    expect(relay.slack.problems).toEqual([]);
    expect(relay.errors()).toEqual([]);
  });
});
