/**
 * "Allow for a while" from end to end on Redis: two whole relays as
 * `approval-relay serve` runs them (src/main.ts, REDIS_URL set, so the rule
 * store opens on the store's connection settings), one Slack stand-in. A
 * Claude Code hook call held on the first is allowed with a signed click on
 * "Allow for 15 min"; the session's next call, sent to the second, gets its
 * allow at once and only a thread reply is posted; the second lists the
 * rule, the first revokes it, and the session is asked again.
 */
import { beforeEach, describe, expect, it } from "vitest";
import { Action } from "../../../src/slack/ids.js";
import { hookFixture } from "../../fixtures/claude-code.js";
import { AGENT_TOKEN, type FullRelay } from "../../helpers/full-relay.js";
import { useFullRelaysOnRedis } from "../../helpers/redis-relays.js";

const agent = { authorization: `Bearer ${AGENT_TOKEN.token}`, "content-type": "application/json" };
const SESSION = "00eab317-352c-497b-8392-08d449b6ae9e";
const bash = (command: string) => ({ ...hookFixture("permission-request"), session_id: SESSION, tool_input: { command } });
const allowed = { hookSpecificOutput: { hookEventName: "PermissionRequest", decision: { behavior: "allow" } } };

const pair = useFullRelaysOnRedis(2);
let first: FullRelay;
let second: FullRelay;
beforeEach(() => {
  [first, second] = pair.relays as [FullRelay, FullRelay];
});

async function hook(relay: FullRelay, body: unknown): Promise<unknown> {
  const response = await fetch(`${relay.url}/v1/hooks/claude-code?timeout=30`, { method: "POST", headers: agent, body: JSON.stringify(body) });
  const reply: unknown = await response.json();
  expect([response.status, reply]).toMatchObject([200, {}]);
  return reply;
}

describe("a rule across two relays on Redis", () => {
  it("made by a click on one relay, allows the session's next hook call on the other at once, is listed there, and once revoked asks again", async () => {
    const held = hook(first, bash("npm test"));
    const message = await first.message(0);
    await first.click(message, Action.allowForAWhile);
    expect(await held).toStrictEqual(allowed);

    expect(await hook(second, bash("git status"))).toStrictEqual(allowed);
    await pair.slack.waitFor("chat.postMessage", (args) => args.thread_ts === message.ts);
    expect(pair.slack.callsTo("chat.postMessage").map((call) => call.args.thread_ts ?? "request")).toStrictEqual(["request", message.ts]);

    const listed = (await (await fetch(`${second.url}/v1/rules`, { headers: { authorization: agent.authorization } })).json()) as {
      rules: Array<{ id: string; uses: number; sessionId: string }>;
    };
    expect(listed.rules).toMatchObject([{ sessionId: SESSION, uses: 1 }]);
    const revoked = await fetch(`${first.url}/v1/rules/${listed.rules[0]!.id}`, { method: "DELETE", headers: { authorization: agent.authorization } });
    expect(revoked.status).toBe(200);

    const asked = await fetch(`${second.url}/v1/requests`, {
      method: "POST",
      headers: agent,
      body: JSON.stringify({ kind: "permission", toolName: "Bash", input: { command: "ls" }, agent: { sessionId: SESSION } }),
    });
    expect(((await asked.json()) as { status: string }).status).toBe("pending");
  });
});
