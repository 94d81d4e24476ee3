/**
 * MCP tool calls that create requests (approve, ask_user) over POST /mcp are
 * held to the agent token's limits like the agent API's creates (issue 19):
 * they count in the same create window (RELAY_CREATE_RATE_LIMIT) and against
 * the same pending cap (RELAY_MAX_PENDING_PER_TOKEN). Past either, ask_user
 * is a tool error and approve a deny, each naming the limit and when to try
 * again; nothing is created. Called by the official MCP SDK client.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterEach, describe, expect, it } from "vitest";
import { AGENT_TOKEN, agentCall, startFullRelay, type FullRelay } from "../../helpers/full-relay.js";
import { httpMcpClient, textOf } from "../../helpers/mcp.js";
import { sample } from "../../helpers/metrics.js";

let relay: FullRelay | undefined;
let client: Client | undefined;
afterEach(async () => {
  await client?.close();
  await relay?.close();
  relay = client = undefined;
});

async function start(env: Record<string, string>): Promise<{ relay: FullRelay; client: Client }> {
  relay = await startFullRelay({ env });
  client = await httpMcpClient(relay.url, AGENT_TOKEN.token);
  return { relay, client };
}

const askLater = (client: Client, question: string) => client.callTool({ name: "ask_user", arguments: { question, wait: false } });
const approve = (client: Client, command: string) => client.callTool({ name: "approve", arguments: { tool_name: "Bash", input: { command } } });
const denial = async (call: Promise<unknown>) => JSON.parse(textOf(await call)) as { behavior: string; message?: string };

async function pendingCount(relay: FullRelay): Promise<number> {
  const listed = await agentCall(relay.url, "/v1/requests?status=pending");
  return (listed.body as { requests: unknown[] }).requests.length;
}

describe("MCP tool calls and the create rate limit", () => {
  it("past RELAY_CREATE_RATE_LIMIT, ask_user is a tool error and approve a deny, each saying the limit and when to retry; the agent API shares the window", async () => {
    const { relay, client } = await start({ RELAY_CREATE_RATE_LIMIT: "2" });
    for (const n of [1, 2]) expect((await askLater(client, `Ship build ${n}?`)).isError).toBeFalsy();

    const asked = await askLater(client, "Ship build 3?");
    expect(asked.isError).toBe(true);
    expect(textOf(asked)).toMatch(/more than 2 requests in a minute, the most it may; nothing was created\. Try again in \d+ s\./);
    const approved = await denial(approve(client, "make deploy"));
    expect(approved.behavior).toBe("deny");
    expect(approved.message).toMatch(/more than 2 requests in a minute.*Try again in \d+ s\..*nothing was approved/);

    const http = await agentCall(relay.url, "/v1/requests", { body: { kind: "step_gate", toolName: "Bash", input: { command: "make 4" } } });
    expect(http.status).toBe(429);
    expect(await pendingCount(relay)).toBe(2);
    const metrics = await (await fetch(`${relay.url}/metrics`)).text();
    expect(sample(metrics, "relay_creates_limited_total", { token: AGENT_TOKEN.name, limit: "rate_limited" })).toBe(3);
  });
});

describe("MCP tool calls and the pending cap", () => {
  it("past RELAY_MAX_PENDING_PER_TOKEN, ask_user is a tool error and approve a deny, each saying the cap and when to retry", async () => {
    const { relay, client } = await start({ RELAY_MAX_PENDING_PER_TOKEN: "1" });
    expect((await askLater(client, "Ship it?")).isError).toBeFalsy();

    const asked = await askLater(client, "Ship it again?");
    expect(asked.isError).toBe(true);
    expect(textOf(asked)).toMatch(/already has 1 pending requests, the most it may have \(1\); nothing was created\..* Try again in \d+ s\./);
    const approved = await denial(approve(client, "make deploy"));
    expect(approved.behavior).toBe("deny");
    expect(approved.message).toMatch(/the most it may have \(1\).* Try again in \d+ s\..*nothing was approved/);
    expect(await pendingCount(relay)).toBe(1);
  });
});
