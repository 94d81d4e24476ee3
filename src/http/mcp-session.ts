/**
 * The Mcp-Session-Id POST /mcp hands out at initialize, and what it carries.
 * The server is stateless: each POST gets a fresh MCP server, which never saw
 * the initialize that named the client, and any instance may take any POST.
 * So the id carries the client's name and version from initialize's
 * `clientInfo` (base64url JSON after a random part), and every later POST,
 * on whatever instance, reads them back from the header the client returns:
 * Slack then says which client asked ("Cursor 1.2.3"), not "MCP client".
 * The client could claim any name in clientInfo all the same, so nothing is
 * lost by trusting the header: it is shown as agent text (escaped, cut),
 * never as who asked (the agent token's name is that).
 */
import { randomUUID } from "node:crypto";
import { z } from "zod";
import type { ClientInfo } from "../mcp/tools.js";

/** Longest name and version kept (characters): Slack shows both within the agent field's 200. */
const NAME_MAX = 150;
const VERSION_MAX = 40;

const Carried = z.object({ name: z.string().min(1).max(NAME_MAX), version: z.string().max(VERSION_MAX).optional() });

/** A new session id carrying `clientInfo` (initialize's `params.clientInfo`, as the client sent it) when it names the client. */
export function newSessionId(clientInfo: unknown): string {
  const { name, version } = (clientInfo ?? {}) as { name?: unknown; version?: unknown };
  if (typeof name !== "string" || name.trim() === "") return randomUUID();
  const carried = { name: name.slice(0, NAME_MAX), ...(typeof version === "string" && version !== "" ? { version: version.slice(0, VERSION_MAX) } : {}) };
  return `${randomUUID()}.${Buffer.from(JSON.stringify(carried)).toString("base64url")}`;
}

/** The client a session id names, or undefined (no id, an id of another form, or one that does not parse). */
export function clientInfoOf(sessionId: string | undefined): ClientInfo | undefined {
  const dot = sessionId?.indexOf(".") ?? -1;
  if (sessionId === undefined || dot < 0) return undefined;
  try {
    const parsed = Carried.safeParse(JSON.parse(Buffer.from(sessionId.slice(dot + 1), "base64url").toString("utf8")));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}
