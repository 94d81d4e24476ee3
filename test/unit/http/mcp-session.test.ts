/**
 * The session id POST /mcp hands out at initialize carries the client's name
 * and version to later POSTs (src/http/mcp-session.ts); anything else a
 * client sends back names no client.
 */
import { describe, expect, it } from "vitest";
import { clientInfoOf, newSessionId } from "../../../src/http/mcp-session.js";

describe("the MCP session id", () => {
  it("carries initialize's clientInfo name and version, read back as they were sent", () => {
    const id = newSessionId({ name: "Cursor", version: "1.2.3", title: "ignored" });
    expect(id).toMatch(/^[\w-]{36}\.[\w-]+$/);
    expect(clientInfoOf(id)).toEqual({ name: "Cursor", version: "1.2.3" });
  });

  it("cuts a long name and version to what Slack's agent field shows", () => {
    const carried = clientInfoOf(newSessionId({ name: "n".repeat(5000), version: "v".repeat(500) }));
    expect(carried).toEqual({ name: "n".repeat(150), version: "v".repeat(40) });
  });

  it("without a client name is a bare random id, which names no client", () => {
    for (const clientInfo of [undefined, {}, { name: "" }, { name: 7 }]) {
      const id = newSessionId(clientInfo);
      expect(id).toMatch(/^[\w-]{36}$/);
      expect(clientInfoOf(id)).toBeUndefined();
    }
  });

  it("an id that is not base64url JSON of a name, or names too long a client, names no client", () => {
    const encoded = (value: unknown) => `x.${Buffer.from(JSON.stringify(value)).toString("base64url")}`;
    for (const id of [undefined, "", "x.", "x.%%%", "x.bm90IGpzb24", encoded({ version: "1" }), encoded({ name: "n".repeat(151) }), encoded("Cursor")]) {
      expect(clientInfoOf(id)).toBeUndefined();
    }
  });
});
