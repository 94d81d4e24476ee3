/**
 * A local stand-in for the Anthropic Messages API, so the real Claude Agent SDK
 * (and the Claude Code it starts) runs in tests without any network. Each test
 * scripts the model's turns; the server records every request so the test can
 * assert what Claude Code sent back (tool_result texts, deny messages, answers).
 *
 * It is also the HTTP(S) proxy of the Claude Code it serves (see agent-sdk.ts):
 * any attempt to reach another host ends up here as a CONNECT, is refused at
 * once and listed in `problems`, so a test notices traffic it did not expect.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { z } from "zod";

export type FakeBlock = { type: "text"; text: string } | { type: "tool_use"; id: string; name: string; input: Record<string, unknown> };

/** One scripted model reply, or a function of the request it answers. */
export type FakeTurn = { content: FakeBlock[] } | ((request: MessagesRequest) => { content: FakeBlock[] });

const ContentBlock = z.looseObject({ type: z.string() });
const Message = z.looseObject({
  role: z.string(),
  content: z.union([z.string(), z.array(ContentBlock)]),
});
const MessagesRequest = z.looseObject({
  model: z.string(),
  stream: z.boolean().optional(),
  messages: z.array(Message),
  tools: z.array(z.looseObject({ name: z.string().optional() })).optional(),
});
export type MessagesRequest = z.infer<typeof MessagesRequest>;

const ToolResultBlock = z.object({
  type: z.literal("tool_result"),
  tool_use_id: z.string(),
  is_error: z.boolean().optional(),
  content: z.union([z.string(), z.array(z.looseObject({ type: z.string(), text: z.string().optional() }))]).optional(),
});
export interface ToolResult {
  toolUseId: string;
  isError: boolean;
  /** The text blocks of the result joined with "\n" (what the model reads). */
  text: string;
}

export interface FakeAnthropic {
  /** Base URL for ANTHROPIC_BASE_URL, e.g. "http://127.0.0.1:40123". */
  url: string;
  /**
   * Main-loop requests, in arrival order: one per model turn. They are told
   * apart from side queries by offering tools, so a session run with no tools
   * at all would have its turns counted as side queries.
   */
  turns: MessagesRequest[];
  /** Requests without tools (titles, summaries and other side queries), answered with plain text. */
  sideRequests: MessagesRequest[];
  /** Everything unexpected: unknown paths, unscripted turns, attempts to reach other hosts. */
  problems: string[];
  close(): Promise<void>;
}

export interface FakeAnthropicOptions {
  turns: FakeTurn[];
}

export function text(value: string): FakeBlock {
  return { type: "text", text: value };
}

export function toolUse(id: string, name: string, input: Record<string, unknown>): FakeBlock {
  return { type: "tool_use", id, name, input };
}

/** Every tool_result the request carries (the newest user message holds the latest ones). */
export function toolResults(request: MessagesRequest): ToolResult[] {
  return request.messages.flatMap((message) =>
    typeof message.content === "string"
      ? []
      : message.content.flatMap((block) => {
          const parsed = ToolResultBlock.safeParse(block);
          if (!parsed.success) return [];
          const { content } = parsed.data;
          const joined = typeof content === "string" ? content : (content ?? []).map((part) => part.text ?? "").join("\n");
          return [{ toolUseId: parsed.data.tool_use_id, isError: parsed.data.is_error === true, text: joined }];
        }),
  );
}

/** A turn that tells the model's side of the story: it repeats the tool_result it received. */
export function echoToolResult(): FakeTurn {
  return (request) => {
    const last = toolResults(request).at(-1);
    return { content: [text(last ? `tool_result: ${last.text}` : "no tool_result")] };
  };
}

export async function startFakeAnthropic({ turns }: FakeAnthropicOptions): Promise<FakeAnthropic> {
  const state = { turns: [] as MessagesRequest[], sideRequests: [] as MessagesRequest[], problems: [] as string[] };
  let messageIds = 0;

  /** The scripted reply to a main-loop request; side queries just get "ok". */
  const reply = (request: MessagesRequest): FakeBlock[] => {
    if ((request.tools ?? []).length === 0) {
      state.sideRequests.push(request);
      return [text("ok")];
    }
    const script = turns[state.turns.length];
    state.turns.push(request);
    if (script === undefined) {
      state.problems.push(`unscripted turn ${state.turns.length}`);
      return [text("(no scripted turn left)")];
    }
    return typeof script === "function" ? script(request).content : script.content;
  };

  const answer = (request: MessagesRequest, res: ServerResponse) => {
    const message = assistantMessage(`msg_fake_${++messageIds}`, request.model, reply(request));
    if (request.stream === true) writeStream(res, message);
    else sendJson(res, 200, message);
  };

  const server = createServer((req, res) => {
    readBody(req)
      .then((raw) => route(req, raw, res))
      .catch((error: unknown) => {
        state.problems.push(`${req.method} ${req.url}: ${String(error)}`);
        sendJson(res, 400, { type: "error", error: { type: "invalid_request_error", message: String(error) } });
      });
  });

  const route = (req: IncomingMessage, raw: string, res: ServerResponse) => {
    const path = new URL(req.url ?? "/", "http://fake").pathname;
    if (req.method === "POST" && path === "/v1/messages") return answer(MessagesRequest.parse(JSON.parse(raw)), res);
    if (req.method === "POST" && path === "/v1/messages/count_tokens") return sendJson(res, 200, { input_tokens: 100 });
    if (path === "/api/hello") return sendJson(res, 200, {});
    state.problems.push(`unknown path: ${req.method} ${req.url}`);
    sendJson(res, 404, { type: "error", error: { type: "not_found_error", message: `fake-anthropic: no ${path}` } });
  };

  server.on("connect", (req, socket) => {
    state.problems.push(`tried to reach ${req.url ?? "?"}`);
    socket.on("error", () => undefined);
    socket.end("HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n");
  });

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    ...state,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function assistantMessage(id: string, model: string, content: FakeBlock[]) {
  const stopReason = content.some((block) => block.type === "tool_use") ? "tool_use" : "end_turn";
  return {
    id,
    type: "message",
    role: "assistant",
    model,
    content,
    stop_reason: stopReason,
    stop_sequence: null,
    usage: { input_tokens: 10, output_tokens: 10, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
  };
}

/** The Messages API streaming format: one SSE event per step, tool input as one input_json_delta. */
function writeStream(res: ServerResponse, message: ReturnType<typeof assistantMessage>) {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  const event = (type: string, data: Record<string, unknown>) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
  event("message_start", { message: { ...message, content: [], stop_reason: null } });
  message.content.forEach((block, index) => {
    if (block.type === "text") {
      event("content_block_start", { index, content_block: { type: "text", text: "" } });
      event("content_block_delta", { index, delta: { type: "text_delta", text: block.text } });
    } else {
      event("content_block_start", { index, content_block: { ...block, input: {} } });
      event("content_block_delta", { index, delta: { type: "input_json_delta", partial_json: JSON.stringify(block.input) } });
    }
    event("content_block_stop", { index });
  });
  event("message_delta", { delta: { stop_reason: message.stop_reason, stop_sequence: null }, usage: { output_tokens: 10 } });
  event("message_stop", {});
  res.end();
}

function sendJson(res: ServerResponse, status: number, body: unknown) {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}
