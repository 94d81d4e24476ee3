/**
 * The relay's MCP server at POST /mcp, called by the official MCP SDK client
 * over Streamable HTTP (the tools' suite: helpers/mcp-contract.ts), and what
 * only this transport has: the token and Origin checks, the session id, and
 * the client's name carried from initialize to later POSTs by that id.
 */
import { describe, expect, it } from "vitest";
import { AGENT_TOKEN } from "../../helpers/full-relay.js";
import { httpMcpClient, textOf } from "../../helpers/mcp.js";
import { DEPLOY } from "../../helpers/mcp-contract.js";
import { Action } from "../../../src/slack/ids.js";
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
    expect(response.headers.get("mcp-session-id")).toMatch(/^[\w-]{36}\.[\w-]+$/);
    expect(await response.text()).toContain('"serverInfo"');
  });
});

describe("the MCP client's name over stateless HTTP", () => {
  it("Slack's message names the client and version from initialize's clientInfo, escaped as agent text", async () => {
    const relay = contract.relay();
    const client = await httpMcpClient(relay.url, AGENT_TOKEN.token, { name: "Cursor <!channel>", version: "1.2.3" });
    try {
      const call = client.callTool({ name: "approve", arguments: { tool_name: "Bash", input: DEPLOY } });
      const posted = await relay.message(contract.postsBefore());
      const shown = JSON.stringify(posted.blocks);
      expect(shown).toContain("Agent *Cursor &lt;!channel&gt; 1.2.3*");
      expect(shown).not.toContain("<!channel>");
      await relay.click(posted, Action.allow);
      expect(JSON.parse(textOf(await call))).toEqual({ behavior: "allow", updatedInput: DEPLOY });
    } finally {
      await client.close();
    }
  });

  it("a client whose session id carries no name (or a forged, unreadable one) shows as MCP client", async () => {
    const relay = contract.relay();
    const call = (session: string) =>
      fetch(`${relay.url}/mcp`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${AGENT_TOKEN.token}`,
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "mcp-protocol-version": "2025-06-18",
          "mcp-session-id": session,
        },
        body: JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "approve", arguments: { tool_name: "Bash", input: DEPLOY } } }),
      });
    const before = contract.postsBefore();
    const replies = [call("no-name-here"), call("0c8d.not-base64-json!")];
    for (const [i] of replies.entries()) {
      const posted = await relay.message(before + i);
      expect(JSON.stringify(posted.blocks)).toContain("Agent *MCP client*");
      await relay.click(posted, Action.allow);
    }
    for (const reply of replies) expect(await (await reply).text()).toContain("allow");
  });
});
