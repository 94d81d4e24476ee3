/**
 * A notifications/cancelled that reaches a relay before its tools/call
 * (another instance behind a load balancer, a slower connection): the cancel
 * is remembered for a while under its key (token, session, JSON-RPC id), and
 * the call, when it comes, asks nobody: approve answers a deny, ask_user an
 * error result, each saying the call was cancelled; nothing goes to Slack.
 * The official MCP SDK client makes the calls; a stand-in balancer holds the
 * call's POST until the relay has answered its cancel's. One relay on the
 * memory store, and two on one Redis (the cancel to B, the call to A).
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterEach, describe, expect, it } from "vitest";
import { AGENT_TOKEN, startFullRelay, type FullRelay } from "../../helpers/full-relay.js";
import { balancedMcpClient, postMcp, resultIn, textOf, type RoutedPost } from "../../helpers/mcp.js";
import { DEPLOY } from "../../helpers/mcp-contract.js";
import { useFullRelaysOnRedis } from "../../helpers/redis-relays.js";
import { until } from "../../helpers/until.js";
import { Action } from "../../../src/slack/ids.js";

const OTHER_TOKEN = { name: "other-agent", token: "tok_other_agent_0123456789abcdef" };
const CANCELLED_FIRST = "The MCP client cancelled the call before the relay asked anyone, so nobody was asked.";

const isCall = (post: RoutedPost) => post.messages.some((m) => m.method === "tools/call");
const isCancel = (post: RoutedPost) => post.messages.some((m) => m.method === "notifications/cancelled");

/**
 * An SDK client whose first tools/call POST waits until the relay has answered
 * a notifications/cancelled POST: `cancelFirst` makes a call, cancels it while
 * its POST is held, and returns what the relay answered the call.
 */
async function cancellingClient(route: (messages: RoutedPost["messages"]) => string, token = AGENT_TOKEN.token) {
  let held = false;
  const { client, posts } = await balancedMcpClient(route, token, {
    before: async (messages) => {
      if (held || !messages.some((m) => m.method === "tools/call")) return;
      held = true;
      await until(() => posts.some(isCancel), 5000, "the cancel's POST");
      await posts.find(isCancel)!.answer;
    },
  });
  const cancelFirst = async (name: string, args: Record<string, unknown>) => {
    const abort = new AbortController();
    const call = client.callTool({ name, arguments: args }, undefined, { signal: abort.signal });
    await until(() => posts.some(isCall), 5000, "the call's POST");
    abort.abort("the user pressed Esc");
    await expect(call).rejects.toThrow();
    const post = posts.find(isCall)!;
    return { post, result: resultIn(await post.answer, post.messages[0]!.id!) };
  };
  return { client, posts, cancelFirst };
}

describe("a cancel before its call, one relay (memory store)", () => {
  let relay: FullRelay;
  let client: Client | undefined;
  afterEach(async () => {
    await client?.close();
    expect(relay.errors()).toEqual([]);
    await relay.close();
  });

  it("approve answers a deny saying the call was cancelled, creates no request and posts nothing; the next call is asked as usual", async () => {
    relay = await startFullRelay();
    const cancelling = await cancellingClient(() => relay.url);
    client = cancelling.client;
    const { result } = await cancelling.cancelFirst("approve", { tool_name: "Bash", input: DEPLOY });
    expect(JSON.parse(textOf(result))).toEqual({ behavior: "deny", message: CANCELLED_FIRST });
    expect(await relay.service.listPending(10)).toEqual([]);
    expect(relay.slack.requestPosts()).toEqual([]);

    const next = client.callTool({ name: "approve", arguments: { tool_name: "Bash", input: DEPLOY } });
    const posted = await relay.message(0);
    await relay.click(posted, Action.allow);
    expect(JSON.parse(textOf(await next))).toEqual({ behavior: "allow", updatedInput: DEPLOY });
  });

  it("without a session id a cancel is not remembered (ids repeat from one such client to the next): the call after it is asked", async () => {
    relay = await startFullRelay();
    const cancel = await postMcp(relay.url, AGENT_TOKEN.token, null, { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 3 } });
    expect(cancel.status).toBe(202);
    const leave = new AbortController();
    const call = { name: "approve", arguments: { tool_name: "Bash", input: DEPLOY } };
    const asked = postMcp(relay.url, AGENT_TOKEN.token, null, { jsonrpc: "2.0", id: 3, method: "tools/call", params: call }, leave.signal);
    await relay.message(0);
    leave.abort();
    await asked.then((response) => response.text()).catch(() => undefined);
  });
});

describe("a cancel before its call, two relays on Redis", () => {
  const pair = useFullRelaysOnRedis(2, { RELAY_TOKENS: `${AGENT_TOKEN.name}:${AGENT_TOKEN.token},${OTHER_TOKEN.name}:${OTHER_TOKEN.token}` });
  let client: Client | undefined;
  afterEach(async () => {
    await client?.close();
  });
  const toAOrB = (a: FullRelay, b: FullRelay) => (messages: RoutedPost["messages"]) => (messages.some((m) => m.method === "tools/call") ? a.url : b.url);

  it("ask_user whose cancel reached B first is answered on A as cancelled, with an error result, and nothing is posted", async () => {
    const [a, b] = pair.relays as [FullRelay, FullRelay];
    const cancelling = await cancellingClient(toAOrB(a, b));
    client = cancelling.client;
    const { post, result } = await cancelling.cancelFirst("ask_user", { question: "Deploy now?" });
    expect(post.url).toBe(a.url);
    expect(cancelling.posts.filter(isCancel).map((p) => p.url)).toEqual([b.url]);
    expect(result).toMatchObject({ isError: true, content: [{ type: "text", text: CANCELLED_FIRST }] });
    expect(await a.service.listPending(10)).toEqual([]);
    expect(pair.slack.requestPosts()).toEqual([]);
  });

  it("the remembered cancel stops only its own call: another id of the same client, and the same session and id under another token, are asked", async () => {
    const [a, b] = pair.relays as [FullRelay, FullRelay];
    const cancelling = await cancellingClient(toAOrB(a, b));
    client = cancelling.client;
    const { post, result } = await cancelling.cancelFirst("approve", { tool_name: "Bash", input: DEPLOY });
    expect(JSON.parse(textOf(result))).toEqual({ behavior: "deny", message: CANCELLED_FIRST });

    const next = client.callTool({ name: "approve", arguments: { tool_name: "Bash", input: DEPLOY } });
    const posted = await a.message(0);
    await b.click(posted, Action.allow);
    expect(JSON.parse(textOf(await next))).toEqual({ behavior: "allow", updatedInput: DEPLOY });

    const leave = new AbortController();
    const call = { name: "approve", arguments: { tool_name: "Bash", input: DEPLOY } };
    const theirs = postMcp(
      a.url,
      OTHER_TOKEN.token,
      post.session,
      { jsonrpc: "2.0", id: post.messages[0]!.id, method: "tools/call", params: call },
      leave.signal,
    );
    const theirsPosted = await a.message(1);
    const owner = async () => (await a.service.findBySlackMessage({ channel: theirsPosted.channel, ts: theirsPosted.ts }))?.tokenName;
    await until(async () => (await owner()) !== undefined, 5000, "the message recorded");
    expect(await owner()).toBe(OTHER_TOKEN.name);
    leave.abort();
    await theirs.then((response) => response.text()).catch(() => undefined);
  });
});
