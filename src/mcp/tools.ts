/**
 * The relay's MCP server: three tools, written once for both transports
 * (POST /mcp inside the relay, `approval-relay mcp` over stdio).
 *
 * - `approve`: Claude Code's permission-prompt tool (`--permission-prompt-tool
 *   mcp__<server>__approve`). Its text is a PermissionResult JSON, the
 *   relay's permission decision unchanged; AskUserQuestion is asked as an
 *   `ask_user_question` request and comes back as an allow carrying
 *   `updatedInput.answers`. Fail closed: every failure is a deny that says
 *   why. A repeated `tool_use_id` joins the request the first call made
 *   under the same agent token.
 * - `ask_user`: any agent asking a person; one question, free text or
 *   options (one or several). `wait: false` returns the request id at once.
 * - `check_request`: the state of a request after at most 50 s, for clients
 *   that cannot hold a call open.
 */
import { createHash } from "node:crypto";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import type { CallToolResult, RequestId, ServerNotification, ServerRequest } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { ASK_USER_QUESTION, askUserQuestionResultOf, deny, permissionResultOf, type PermissionResult } from "../protocol/permission-result.js";
import { LIMITS, MAX_TIMEOUT_SECONDS, type AgentInfo } from "../protocol/request-body.js";
import type { RequestView } from "../protocol/request-view.js";
import { endedReason } from "../protocol/texts.js";
import type { McpRelay, McpRequestBody } from "./relay.js";
import { describeState, RequestState } from "./state.js";
import { CALL_CANCELLED, CancelledBeforeAsking, CONNECTION_CLOSED, holdCall, notCancelledYet, type Hold, type Holders } from "./waiting.js";

/** Longest check_request holds, in milliseconds: under the 60 s most MCP clients allow a call. */
export const CHECK_WAIT_MS = 50_000;

export const APPROVE_INPUT = z.object({
  tool_name: z.string().min(1).max(LIMITS.toolName).describe("The tool that asks for permission."),
  input: z.record(z.string(), z.unknown()).describe("The tool call's input."),
  tool_use_id: z.string().min(1).max(LIMITS.toolUseId).optional().describe("The tool call's id: a repeated call with the same id joins the same request."),
});

export const ASK_USER_INPUT = z.object({
  question: z.string().min(1).max(5000).describe("The question, as the person should read it."),
  options: z.array(z.string().min(1).max(1000)).min(1).max(100).optional().describe("Answers to choose from; absent → a free-text answer."),
  multiSelect: z.boolean().optional().describe("With options: the person may choose several."),
  context: z.string().max(LIMITS.context).optional().describe("What the person should know to answer (Slack mrkdwn)."),
  timeoutSeconds: z.number().int().min(1).max(MAX_TIMEOUT_SECONDS).optional().describe("How long the person has to answer; default: the relay's."),
  wait: z.boolean().optional().describe("false: return the request id at once and get the answer with check_request. Default true."),
});

export const CHECK_REQUEST_INPUT = z.object({
  request_id: z.string().min(1).max(200).describe("The id ask_user returned."),
});

/** The question's id in the interactive_questions request ask_user makes. */
const QUESTION_ID = "answer";

export interface McpToolsOptions {
  relay: McpRelay;
  /** Calls waiting on each request (shared by every server of one process). */
  holders: Holders;
  /** Milliseconds between progress notifications (RELAY_MCP_PROGRESS). */
  progressMs: number;
  /** Who asks, shown in Slack; the name defaults to the MCP client's own. */
  agent?: AgentInfo;
  /** The client, when the transport knows it and the server cannot (stateless HTTP: from the session id). */
  clientInfo?: ClientInfo | undefined;
  /** A signal that aborts when the transport sees the call cancelled or its connection closed (POST /mcp). */
  callSignal?: (requestId: RequestId) => AbortSignal | undefined;
}

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** The MCP client's name and version, from initialize's `clientInfo`. */
export interface ClientInfo {
  name: string;
  version?: string | undefined;
}

/** How Slack names the client that asked: "Cursor 1.2.3", or "MCP client" when it never said. */
export function clientLabel(client: ClientInfo | undefined): string {
  if (!client?.name) return "MCP client";
  return (client.version ? `${client.name} ${client.version}` : client.name).slice(0, LIMITS.agentField);
}

export function createMcpServer(options: McpToolsOptions): McpServer {
  const server = new McpServer({ name: "slack-approval-relay", version: "1" }, { capabilities: { tools: {} } });
  const agent = (): AgentInfo => ({ name: clientLabel(server.server.getClientVersion() ?? options.clientInfo), ...options.agent });

  server.registerTool(
    "approve",
    {
      title: "Ask a person in Slack to approve a tool call",
      description:
        "Claude Code's permission prompt tool (--permission-prompt-tool). Returns a PermissionResult as JSON text: " +
        '{"behavior":"allow","updatedInput":{…}} or {"behavior":"deny","message":"…"}.',
      inputSchema: APPROVE_INPUT,
    },
    async (args, extra) => {
      const result = await approve(options, args, agent(), extra).catch((error: unknown) => deny(failureText(options, error)));
      return { content: [{ type: "text", text: JSON.stringify(result) }] };
    },
  );

  server.registerTool(
    "ask_user",
    {
      title: "Ask a person in Slack",
      description:
        "Asks a person in Slack and waits for the answer: free text, or one of `options` (several with multiSelect). " +
        "With wait: false, returns the request id at once; check_request then gets the answer.",
      inputSchema: ASK_USER_INPUT,
      outputSchema: RequestState,
    },
    async (args, extra) => {
      const body: McpRequestBody = {
        kind: "interactive_questions",
        agent: agent(),
        questions: [{ id: QUESTION_ID, question: args.question, type: questionType(args), ...(args.options ? { options: args.options } : {}) }],
        ...(args.context === undefined ? {} : { context: args.context }),
        ...(args.timeoutSeconds === undefined ? {} : { timeoutSeconds: args.timeoutSeconds }),
      };
      return stateResult(options, extra, async (hold) => {
        notCancelledYet(hold);
        const created = await options.relay.create(body);
        if (args.wait === false || created.status !== "pending") return created;
        return holdCall(options.relay, options.holders, created.id, hold, () => options.relay.untilEnded(created.id, hold.signal));
      });
    },
  );

  server.registerTool(
    "check_request",
    {
      title: "Check a request",
      description: "The state of a request ask_user made, once it has an answer or after at most 50 seconds: call it again while it is pending.",
      inputSchema: CHECK_REQUEST_INPUT,
      outputSchema: RequestState,
    },
    async (args, extra) => stateResult(options, extra, (hold) => options.relay.check(args.request_id, CHECK_WAIT_MS, hold.signal)),
  );
  return server;
}

async function approve(options: McpToolsOptions, args: z.infer<typeof APPROVE_INPUT>, agent: AgentInfo, extra: Extra): Promise<PermissionResult> {
  const { relay } = options;
  const asking = args.tool_name === ASK_USER_QUESTION;
  const body: McpRequestBody = asking
    ? ({ kind: "ask_user_question", agent, questions: args.input.questions } as McpRequestBody)
    : { kind: "permission", agent, toolName: args.tool_name, input: args.input, ...(args.tool_use_id ? { toolUseId: args.tool_use_id } : {}) };
  const hold = holdOf(options, extra);
  notCancelledYet(hold);
  const created = await relay.create(body, args.tool_use_id === undefined ? undefined : approveKey(args.tool_use_id));
  const view =
    created.status === "pending"
      ? await holdCall(relay, options.holders, created.id, hold, () => relay.untilEnded(created.id, hold.signal))
      : (created as RequestView);
  return asking ? askUserQuestionResultOf(view, args.input) : permissionResultOf(view);
}

/** The structured state of the request `run` returns, or an error result saying why there is none. */
async function stateResult(
  options: McpToolsOptions,
  extra: Extra,
  run: (hold: Hold) => Promise<RequestView | { id: string; status: string; expiresAt: string }>,
): Promise<CallToolResult> {
  try {
    const state = RequestState.parse(stateOf((await run(holdOf(options, extra))) as RequestView));
    return { content: [{ type: "text", text: describeState(state) }], structuredContent: state };
  } catch (error) {
    return { content: [{ type: "text", text: failureText(options, error) }], isError: true };
  }
}

/** What the caller is told when a tool fails: why, or that its call was cancelled before anyone was asked. */
function failureText(options: McpToolsOptions, error: unknown): string {
  return error instanceof CancelledBeforeAsking ? error.message : options.relay.failureReason(error);
}

function stateOf(view: RequestView) {
  return { requestId: view.id, kind: view.kind, status: view.status, expiresAt: view.expiresAt, ...answerOf(view) };
}

/** The answer to ask_user's question, who gave it, or why none came. */
function answerOf(view: RequestView): Partial<RequestState> {
  const answers = (view.decision as { answers?: Record<string, unknown> } | undefined)?.answers;
  const answer = answers?.[QUESTION_ID];
  const answeredBy = view.answeredBy ? (view.answeredBy.name ?? view.answeredBy.id) : undefined;
  return {
    ...(view.kind === "interactive_questions" && answer !== undefined ? { answer: answer as RequestState["answer"] } : {}),
    ...(view.kind !== "interactive_questions" && view.decision !== undefined ? { decision: view.decision } : {}),
    ...(answeredBy ? { answeredBy } : {}),
    ...(view.status !== "pending" && view.status !== "answered" ? { reason: endedReason(view) } : {}),
  };
}

function questionType(args: z.infer<typeof ASK_USER_INPUT>): "text" | "choice" | "multiChoice" {
  if (!args.options) return "text";
  return args.multiSelect ? "multiChoice" : "choice";
}

function holdOf(options: McpToolsOptions, extra: Extra): Hold {
  const transportSignal = options.callSignal?.(extra.requestId);
  const signal = transportSignal ? AbortSignal.any([extra.signal, transportSignal]) : extra.signal;
  const token = extra._meta?.progressToken;
  let ticks = 0;
  return {
    signal,
    progressMs: options.progressMs,
    progress:
      token === undefined
        ? undefined
        : (seconds) =>
            extra.sendNotification({
              method: "notifications/progress",
              params: { progressToken: token, progress: (ticks += 1), message: `Waiting for an answer in Slack (${seconds} s so far)` },
            }),
    cancelReason: () => (signal.reason === CONNECTION_CLOSED ? CONNECTION_CLOSED : CALL_CANCELLED),
  };
}

/**
 * The idempotency key of an approve call's request: its tool_use_id (hashed
 * when it does not fit a key). The relay scopes every idempotency key by the
 * agent token that sends it, so the request is keyed by token + tool_use_id:
 * another token's call with the same tool_use_id gets a request of its own.
 */
function approveKey(toolUseId: string): string {
  const key = `mcp:approve:${toolUseId}`;
  return key.length <= LIMITS.idempotencyKey ? key : `mcp:approve:${createHash("sha256").update(toolUseId).digest("hex")}`;
}
