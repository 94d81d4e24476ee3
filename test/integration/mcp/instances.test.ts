/**
 * POST /mcp behind a load balancer: two relays as `approval-relay serve` runs
 * them, on one real Redis and one Slack stand-in, and the official MCP SDK
 * client whose tools/call POSTs go to instance A and every other POST to B
 * (stateless Streamable HTTP lets any instance take any POST). A cancel that
 * reaches B cancels the call A holds; only the token that made the call can.
 * A repeated tool_use_id joins the first call's request under the same agent
 * token only: another token's is a request of its own, which neither sees.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { AGENT_TOKEN, type FullRelay, type PostedMessage } from "../../helpers/full-relay.js";
import { balancedMcpClient, httpMcpClient, postMcp, textOf, type RoutedPost } from "../../helpers/mcp.js";
import { useFullRelaysOnRedis } from "../../helpers/redis-relays.js";
import { until } from "../../helpers/until.js";
import { DEPLOY } from "../../helpers/mcp-contract.js";
import { Action } from "../../../src/slack/ids.js";

const OTHER_TOKEN = { name: "other-agent", token: "tok_other_agent_0123456789abcdef" };
const CANCELLED_LINE = "🚫 Cancelled: the MCP client cancelled the call";

const pair = useFullRelaysOnRedis(2, { RELAY_TOKENS: `${AGENT_TOKEN.name}:${AGENT_TOKEN.token},${OTHER_TOKEN.name}:${OTHER_TOKEN.token}` });
let a: FullRelay;
let b: FullRelay;
let client: Client;
let posts: RoutedPost[];

beforeEach(async () => {
  [a, b] = pair.relays as [FullRelay, FullRelay];
  ({ client, posts } = await balancedMcpClient((messages) => (messages.some((m) => m.method === "tools/call") ? a.url : b.url), AGENT_TOKEN.token));
});
afterEach(async () => {
  await client.close();
});

/** The tools/call POST of the call in flight: where it went, its session and JSON-RPC id. */
function callPost(): { url: string; session: string | null; id: string | number } {
  const post = posts.find((p) => p.messages.some((m) => m.method === "tools/call"))!;
  return { url: post.url, session: post.session, id: post.messages[0]!.id! };
}

/** A notifications/cancelled for JSON-RPC `id`, POSTed to `url` under `token` and session `session`. */
async function postCancel(url: string, token: string, session: string | null, id: string | number): Promise<number> {
  const response = await postMcp(url, token, session, { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: id, reason: "test" } });
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

/** The id of the request whose message `posted` is, once the relay has recorded where it posted it. */
async function requestIdOf(posted: PostedMessage): Promise<string> {
  let id: string | undefined;
  await until(
    async () => (id = (await a.service.findBySlackMessage({ channel: posted.channel, ts: posted.ts }))?.id) !== undefined,
    5000,
    "the message recorded",
  );
  return id!;
}

describe("a repeated tool_use_id (Redis, two instances)", () => {
  const approve = (on: Client, toolUseId: string) => on.callTool({ name: "approve", arguments: { tool_name: "Bash", input: DEPLOY, tool_use_id: toolUseId } });

  it("under the same agent token joins the first call's request, on any instance: one Slack message, both calls answered", async () => {
    const again = await httpMcpClient(b.url, AGENT_TOKEN.token);
    try {
      const first = approve(client, "toolu_shared");
      const posted = await a.message(0);
      const second = approve(again, "toolu_shared");
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(pair.slack.requestPosts()).toHaveLength(1);
      await b.click(posted, Action.allow);
      for (const call of [first, second]) expect(JSON.parse(textOf(await call))).toEqual({ behavior: "allow", updatedInput: DEPLOY });
    } finally {
      await again.close();
    }
  });

  it("under another agent token is a new request, answered on its own, and neither token can read the other's", async () => {
    const other = await httpMcpClient(b.url, OTHER_TOKEN.token);
    try {
      const mine = approve(client, "toolu_shared");
      const minePosted = await a.message(0);
      const theirs = approve(other, "toolu_shared");
      const theirsPosted = await a.message(1);
      const ids = await Promise.all([minePosted, theirsPosted].map((m) => requestIdOf(m)));
      expect(ids[0]).not.toBe(ids[1]);
      const peek = await other.callTool({ name: "check_request", arguments: { request_id: ids[0] } });
      expect(peek.isError).toBe(true);
      expect(textOf(peek)).toMatch(/not found/i);
      await a.click(theirsPosted, Action.deny);
      expect(JSON.parse(textOf(await theirs))).toMatchObject({ behavior: "deny" });
      expect((await a.service.get(ids[0]!))?.status).toBe("pending");
      await a.click(minePosted, Action.allow);
      expect(JSON.parse(textOf(await mine))).toEqual({ behavior: "allow", updatedInput: DEPLOY });
    } finally {
      await other.close();
    }
  });
});
