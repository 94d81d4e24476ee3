/**
 * POST /mcp behind a load balancer: two relays as `approval-relay serve` runs
 * them, on one real Redis and one Slack stand-in, and the official MCP SDK
 * client whose tools/call POSTs go to instance A and every other POST to B
 * (stateless Streamable HTTP lets any instance take any POST). A cancel that
 * reaches B cancels the call A holds; only the token that made the call can.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { AGENT_TOKEN, startFullRelay, type FullRelay } from "../../helpers/full-relay.js";
import { balancedMcpClient, type RoutedPost } from "../../helpers/mcp.js";
import { connectTestRedis, deleteKeysUnder, REDIS_TEST_URL, uniquePrefix } from "../../helpers/redis.js";
import { startSlackWebApi, type SlackWebApiStandIn } from "../../helpers/slack-web-api.js";
import { DEPLOY } from "../../helpers/mcp-contract.js";
import { Action } from "../../../src/slack/ids.js";

const OTHER_TOKEN = { name: "other-agent", token: "tok_other_agent_0123456789abcdef" };
const CANCELLED_LINE = "🚫 Cancelled: the MCP client cancelled the call";

let prefix: string;
let slack: SlackWebApiStandIn;
let a: FullRelay;
let b: FullRelay;
let client: Client;
let posts: RoutedPost[];

beforeEach(async () => {
  prefix = uniquePrefix();
  slack = await startSlackWebApi();
  const env = {
    REDIS_URL: REDIS_TEST_URL,
    REDIS_PREFIX: prefix,
    RELAY_TOKENS: `${AGENT_TOKEN.name}:${AGENT_TOKEN.token},${OTHER_TOKEN.name}:${OTHER_TOKEN.token}`,
  };
  a = await startFullRelay({ slack, env });
  b = await startFullRelay({ slack, env });
  ({ client, posts } = await balancedMcpClient((messages) => (messages.some((m) => m.method === "tools/call") ? a.url : b.url), AGENT_TOKEN.token));
}, 30_000);
afterEach(async () => {
  await client.close();
  await a.close();
  await b.close();
  await slack.close();
  const admin = connectTestRedis();
  await deleteKeysUnder(admin, prefix);
  await admin.quit();
});

/** The tools/call POST of the call in flight: where it went, its session and JSON-RPC id. */
function callPost(): { url: string; session: string | null; id: string | number } {
  const post = posts.find((p) => p.messages.some((m) => m.method === "tools/call"))!;
  return { url: post.url, session: post.session, id: post.messages[0]!.id! };
}

/** A notifications/cancelled for JSON-RPC `id`, POSTed to `url` under `token` and session `session`. */
async function postCancel(url: string, token: string, session: string | null, id: string | number): Promise<number> {
  const response = await fetch(`${url}/mcp`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${token}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2025-06-18",
      ...(session ? { "mcp-session-id": session } : {}),
    },
    body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: id, reason: "test" } }),
  });
  await response.text();
  return response.status;
}

describe("cancelling an MCP call across relay instances (Redis)", () => {
  it("a call held on instance A is cancelled by the client's notifications/cancelled sent to instance B, and its Slack message says so", async () => {
    const abort = new AbortController();
    const waiting = client.callTool({ name: "approve", arguments: { tool_name: "Bash", input: DEPLOY } }, undefined, { signal: abort.signal });
    const posted = await a.message(0);
    expect(callPost().url).toBe(a.url);
    abort.abort("the user pressed Esc");
    await expect(waiting).rejects.toThrow();
    expect(JSON.stringify(await a.updated(posted))).toContain(CANCELLED_LINE);
    expect((await b.service.findBySlackMessage({ channel: posted.channel, ts: posted.ts }))?.status).toBe("cancelled");
    const cancels = posts.filter((p) => p.messages.some((m) => m.method === "notifications/cancelled"));
    expect(cancels.map((p) => p.url)).toEqual([b.url]);
  });

  it("a cancel under another agent token, naming the same session and call id, cancels nothing", async () => {
    const waiting = client.callTool({ name: "approve", arguments: { tool_name: "Bash", input: DEPLOY } });
    const posted = await a.message(0);
    const { session, id } = callPost();
    expect(await postCancel(b.url, OTHER_TOKEN.token, session, id)).toBe(202);
    expect(await postCancel(a.url, OTHER_TOKEN.token, session, id)).toBe(202);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect((await a.service.findBySlackMessage({ channel: posted.channel, ts: posted.ts }))?.status).toBe("pending");
    await a.click(posted, Action.allow);
    expect((await waiting).content).toEqual([{ type: "text", text: JSON.stringify({ behavior: "allow", updatedInput: DEPLOY }) }]);
  });
});
