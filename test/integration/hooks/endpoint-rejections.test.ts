/**
 * Every way POST /v1/hooks/claude-code refuses a call: a clear 4xx, at once
 * (never a held connection), and nothing created or posted.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startApiRelay, type CallInit, type ApiRelay } from "../../helpers/api-relay.js";
import { hookFixture } from "../../fixtures/claude-code.js";

let relay: ApiRelay;
beforeEach(async () => {
  relay = await startApiRelay({ http: { bodyLimitBytes: 4096 } });
});
afterEach(async () => {
  await relay.close();
});

/** Calls the hook URL and checks that the refusal was quick and changed nothing. */
async function refused(query: string, init: CallInit) {
  const started = Date.now();
  const response = await relay.call(`/v1/hooks/claude-code${query}`, init);
  expect(Date.now() - started).toBeLessThan(1000);
  await relay.service.idle();
  expect(relay.stored).toEqual([]);
  expect(relay.messenger.posts).toEqual([]);
  return response;
}

const pathsOf = (body: { error: { details?: Array<{ path: string }> } }) => (body.error.details ?? []).map((d) => d.path);

describe("POST /v1/hooks/claude-code refuses", () => {
  it("a call without a token: 401", async () => {
    const { status, headers, body } = await refused("", { json: hookFixture("pre-tool-use"), as: null });
    expect(status).toBe(401);
    expect(headers.get("www-authenticate")).toBe("Bearer");
    expect(body.error.code).toBe("relay_unauthorized");
  });

  it("a call with an unknown token: 401", async () => {
    const { status } = await refused("", { json: hookFixture("pre-tool-use"), as: null, headers: { authorization: "Bearer tok_not_a_configured_token" } });
    expect(status).toBe(401);
  });

  it("a body that is not JSON: 400", async () => {
    const { status, body } = await refused("", { body: '{"hook_event_name": "PreToolUse",' });
    expect(status).toBe(400);
    expect(body.error.code).toBe("relay_invalid_json");
  });

  it("a body sent as another content type: 415", async () => {
    const { status } = await refused("", { body: JSON.stringify(hookFixture("pre-tool-use")), headers: { "content-type": "text/plain" } });
    expect(status).toBe(415);
  });

  it("a body over the size limit: 413", async () => {
    const big = { ...hookFixture("pre-tool-use"), tool_input: { command: "x".repeat(5000) } };
    const { status, body } = await refused("", { json: big });
    expect(status).toBe(413);
    expect(body.error.code).toBe("relay_body_too_large");
  });

  it("a body that is not Claude Code's shape: 400 with the field paths", async () => {
    const { tool_name: _, ...input } = hookFixture("pre-tool-use");
    const { status, body } = await refused("", { json: { ...input, tool_input: "rm -rf /", session_id: 12 } });
    expect(status).toBe(400);
    expect(body.error.code).toBe("relay_invalid_request");
    expect(pathsOf(body).sort()).toEqual(["session_id", "tool_input", "tool_name"]);
  });

  it("a JSON array or string: 400 naming the body", async () => {
    for (const json of [[hookFixture("pre-tool-use")], "PreToolUse"]) {
      const { status, body } = await refused("", { json });
      expect(status).toBe(400);
      expect(pathsOf(body)).toEqual(["(body)"]);
    }
  });

  it("the input of another hook event: 400 naming hook_event_name", async () => {
    const postToolUse = { ...hookFixture("pre-tool-use"), hook_event_name: "PostToolUse", tool_response: { stdout: "ok" } };
    const { status, body } = await refused("", { json: postToolUse });
    expect(status).toBe(400);
    expect(pathsOf(body)).toEqual(["hook_event_name"]);
    expect(body.error.message).toMatch(/PostToolUse/);
  });

  it("a timeout that is not a number of seconds Claude Code could wait: 400 naming timeout", async () => {
    for (const query of ["?timeout=abc", "?timeout=0", "?timeout=2", "?timeout=86401", "?timeout=30.5", "?timeout=30&timeout=60"]) {
      const { status, body } = await refused(query, { json: hookFixture("pre-tool-use") });
      expect([query, status, pathsOf(body)]).toEqual([query, 400, ["timeout"]]);
    }
  });

  it("a channel that is not a Slack id: 400 naming channel", async () => {
    const { status, body } = await refused("?channel=%23deploys", { json: hookFixture("permission-request") });
    expect(status).toBe(400);
    expect(pathsOf(body)).toEqual(["channel"]);
  });

  it("an unknown query parameter, such as a misspelt timeout: 400 naming it", async () => {
    const { status, body } = await refused("?timout=30", { json: hookFixture("pre-tool-use") });
    expect(status).toBe(400);
    expect(pathsOf(body)).toEqual(["timout"]);
  });

  it("another method: 405 with Allow: POST", async () => {
    const { status, headers } = await refused("", { method: "GET" });
    expect(status).toBe(405);
    expect(headers.get("allow")).toBe("POST");
  });
});
