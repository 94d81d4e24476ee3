/**
 * MCP clients for tests: the official SDK's Client, over Streamable HTTP to a
 * relay's POST /mcp, or over stdio to a spawned `approval-relay mcp`; and
 * readers for what the relay's tools return.
 */
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { fullCli } from "./full-cli.js";
import { blockAction } from "./slack.js";
import type { FullRelay, PostedMessage } from "./full-relay.js";
import { Action } from "../../src/slack/ids.js";

const root = fileURLToPath(new URL("../..", import.meta.url));

/** A connected SDK client on `url`/mcp with `token` as Bearer, naming itself `clientInfo` at initialize. */
export async function httpMcpClient(url: string, token: string, clientInfo = { name: "test-agent", version: "1.0.0" }): Promise<Client> {
  const client = new Client(clientInfo);
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
  return client;
}

/** One POST an SDK client made through `balancedMcpClient`: its JSON-RPC messages, its session id, and the relay it went to. */
export interface RoutedPost {
  messages: Array<{ method?: string; id?: string | number }>;
  session: string | null;
  url: string;
  /** The relay's response body, whole (read from a copy; the client reads its own): what the relay answered even to a call the client gave up. */
  answer: Promise<string>;
}

export interface BalancerOptions {
  clientInfo?: { name: string; version: string };
  /** Awaited before a POST goes on to its relay (e.g. to hold a tools/call until its cancel has reached a relay). */
  before?: (messages: RoutedPost["messages"]) => Promise<void>;
}

/**
 * A connected SDK client behind a stand-in load balancer: each POST goes to
 * the relay `route` picks from its JSON-RPC messages (e.g. tools/call to one
 * instance and everything else to another), as stateless Streamable HTTP
 * allows; `posts` records where each went.
 */
export async function balancedMcpClient(
  route: (messages: RoutedPost["messages"]) => string,
  token: string,
  { clientInfo = { name: "test-agent", version: "1.0.0" }, before }: BalancerOptions = {},
): Promise<{ client: Client; posts: RoutedPost[] }> {
  const posts: RoutedPost[] = [];
  const balancer = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const parsed: unknown = typeof init?.body === "string" ? JSON.parse(init.body) : [];
    const messages = (Array.isArray(parsed) ? parsed : [parsed]) as RoutedPost["messages"];
    const base = init?.method === "POST" ? route(messages) : route([]);
    const url = `${base}${new URL(input instanceof Request ? input.url : input).pathname}`;
    if (init?.method !== "POST") return fetch(url, init);
    let answered: (text: string) => void = () => undefined;
    posts.push({ messages, session: new Headers(init.headers).get("mcp-session-id"), url: base, answer: new Promise((resolve) => (answered = resolve)) });
    await before?.(messages);
    const response = await fetch(url, init);
    response
      .clone()
      .text()
      .then(answered, () => answered(""));
    return response;
  };
  const client = new Client(clientInfo);
  const headers = { authorization: `Bearer ${token}` };
  await client.connect(new StreamableHTTPClientTransport(new URL("http://balancer.invalid/mcp"), { requestInit: { headers }, fetch: balancer }));
  return { client, posts };
}

/** One JSON-RPC `message` POSTed to `url`/mcp as an MCP client would, under `token` and session `session`, without the SDK (a forged or hand-made call). */
export function postMcp(url: string, token: string, session: string | null, message: unknown, signal?: AbortSignal): Promise<Response> {
  return fetch(`${url}/mcp`, {
    method: "POST",
    ...(signal ? { signal } : {}),
    headers: {
      authorization: `Bearer ${token}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2025-06-18",
      ...(session ? { "mcp-session-id": session } : {}),
    },
    body: JSON.stringify(message),
  });
}

/** The tool result a relay's answer (SSE or JSON, as RoutedPost.answer holds it) carries for JSON-RPC `id`. */
export function resultIn(answer: string, id: string | number): CallToolResult {
  const messages = answer
    .split("\n")
    .flatMap((line) => (line.startsWith("data:") ? [line.slice(5)] : line.startsWith("{") ? [line] : []))
    .map((data) => JSON.parse(data) as { id?: unknown; result?: CallToolResult });
  const found = messages.find((message) => message.id === id);
  if (!found?.result) throw new Error(`no result for ${JSON.stringify(id)} in ${JSON.stringify(answer)}`);
  return found.result;
}

/** A connected SDK client on a spawned `approval-relay mcp` (the whole CLI, fullCli: it loads the MCP SDK lazily) with `env`. */
export async function stdioMcpClient(env: Record<string, string>): Promise<{ client: Client; stderr: () => string }> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [...fullCli(), "mcp"],
    cwd: root,
    env: { PATH: process.env.PATH ?? "", ...env },
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
  const client = new Client({ name: "test-agent", version: "1.0.0" });
  await client.connect(transport);
  return { client, stderr: () => stderr };
}

/** The text of a tool result's only content item. */
export function textOf(result: unknown): string {
  const content = (result as CallToolResult).content;
  if (content.length !== 1 || content[0]!.type !== "text") throw new Error(`expected one text item, got ${JSON.stringify(content)}`);
  return content[0]!.text;
}

/** Clicks the one-tap option button labelled `label` on a posted message. */
export async function clickOption(relay: FullRelay, message: PostedMessage, label: string): Promise<void> {
  const button = findButton(message.blocks, label);
  if (!button) throw new Error(`no option "${label}" on message ${message.ts}`);
  await relay.post(blockAction({ actionId: Action.option, value: button, channel: message.channel, ts: message.ts }));
}

function findButton(node: unknown, label: string): string | undefined {
  if (Array.isArray(node)) return node.map((item) => findButton(item, label)).find((value) => value !== undefined);
  if (typeof node !== "object" || node === null) return undefined;
  const element = node as { action_id?: unknown; value?: unknown; text?: { text?: unknown } };
  if (element.action_id === Action.option && element.text?.text === label && typeof element.value === "string") return element.value;
  return findButton(Object.values(node), label);
}
