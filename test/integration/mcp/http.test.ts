/**
 * The relay's MCP server at POST /mcp, called by the official MCP SDK client
 * over Streamable HTTP (the tools' suite: helpers/mcp-contract.ts), and what
 * only this transport has: the token and Origin checks, the session id.
 */
import { describe, expect, it } from "vitest";
import { AGENT_TOKEN } from "../../helpers/full-relay.js";
import { httpMcpClient } from "../../helpers/mcp.js";
import { mcpToolsContract } from "../../helpers/mcp-contract.js";

const contract = mcpToolsContract("Streamable HTTP", {
  relayEnv: { RELAY_MCP_PROGRESS: "1", RELAY_MCP_ORIGINS: "https://inspector.example.com" },
  connect: (relay) => httpMcpClient(relay.url, AGENT_TOKEN.token),
  cancelledLine: "🚫 Cancelled: the MCP client cancelled the call",
});

describe("POST /mcp refusals", () => {
  const initialize = {
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "curl", version: "1" } },
  };
  const post = (headers: Record<string, string>) =>
    fetch(`${contract.relay().url}/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
      body: JSON.stringify(initialize),
    });

  it("an unknown token is 401", async () => {
    const response = await post({ authorization: "Bearer not-a-token-of-this-relay" });
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({ error: { code: "relay_unauthorized" } });
  });

  it("a foreign Origin is 403, even with a good token", async () => {
    const response = await post({ authorization: `Bearer ${AGENT_TOKEN.token}`, origin: "https://evil.example" });
    expect(response.status).toBe(403);
    expect(await response.json()).toMatchObject({ error: { code: "relay_forbidden", message: expect.stringContaining("RELAY_MCP_ORIGINS") } });
  });

  it("an Origin listed in RELAY_MCP_ORIGINS is served, and initialize hands out a session id", async () => {
    const response = await post({ authorization: `Bearer ${AGENT_TOKEN.token}`, origin: "https://inspector.example.com" });
    expect(response.status).toBe(200);
    expect(response.headers.get("mcp-session-id")).toMatch(/^[\w-]{36}$/);
    expect(await response.text()).toContain('"serverInfo"');
  });
});
