/**
 * `approval-relay mcp` spawned as MCP clients configured by command run it,
 * called by the official MCP SDK client over stdio (the tools' suite:
 * helpers/mcp-contract.ts), and what only this transport has: the client
 * going away, and a relay that refuses the process's token.
 */
import { describe, expect, it } from "vitest";
import { Action } from "../../../src/slack/ids.js";
import { AGENT_TOKEN } from "../../helpers/full-relay.js";
import { stdioMcpClient, textOf } from "../../helpers/mcp.js";
import { DEPLOY, mcpToolsContract } from "../../helpers/mcp-contract.js";

const contract = mcpToolsContract("stdio", {
  connect: async (relay) => (await stdioMcpClient({ RELAY_URL: relay.url, RELAY_TOKEN: AGENT_TOKEN.token, RELAY_MCP_PROGRESS: "1" })).client,
  cancelledLine: "🚫 Cancelled",
});

describe("approval-relay mcp and its client", () => {
  it("Slack shows the MCP client's name as who asks", async () => {
    const call = contract.client().callTool({ name: "approve", arguments: { tool_name: "Bash", input: DEPLOY } });
    const posted = await contract.relay().message(contract.postsBefore());
    expect(JSON.stringify(posted.blocks)).toContain("test-agent");
    await contract.relay().click(posted, Action.allow);
    await call;
  });

  it("when the client goes (stdin closes), the request of a call still waiting is cancelled", async () => {
    const relay = contract.relay();
    const { client: leaving } = await stdioMcpClient({ RELAY_URL: relay.url, RELAY_TOKEN: AGENT_TOKEN.token });
    void leaving.callTool({ name: "approve", arguments: { tool_name: "Bash", input: DEPLOY } }).catch(() => undefined);
    const posted = await relay.message(contract.postsBefore());
    await leaving.close();
    expect(JSON.stringify(await relay.updated(posted))).toContain("🚫 Cancelled");
  });

  it("with a token the relay does not know, approve denies saying the relay refused, never allows", async () => {
    const relay = contract.relay();
    const { client: stranger } = await stdioMcpClient({ RELAY_URL: relay.url, RELAY_TOKEN: "not-a-token-of-this-relay", RELAY_RETRIES: "0" });
    try {
      const result = JSON.parse(textOf(await stranger.callTool({ name: "approve", arguments: { tool_name: "Bash", input: DEPLOY } }))) as unknown;
      expect(result).toMatchObject({ behavior: "deny", message: expect.stringMatching(/refused the request \(.*token/i) });
      expect(relay.slack.requestPosts().length - contract.postsBefore()).toBe(0);
    } finally {
      await stranger.close();
    }
  });
});
