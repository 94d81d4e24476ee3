/**
 * POST /v1/hooks/claude-code (DESIGN §3): a Claude Code `http` hook. Takes
 * the hook input, opens (or joins) the request it stands for, holds the
 * connection until a person answers in Slack and replies 200 with the hook
 * JSON. Transport only: src/requests/hooks maps input and outcome, the RequestService
 * does the work.
 *
 * - Input that is not a PreToolUse / PermissionRequest hook, or a bad
 *   `?timeout=` / `&channel=`, is a 4xx before anything is created.
 * - No answer before the reply deadline (a few seconds before the hook's own
 *   timeout, see src/requests/hooks/deadline.ts) → a deny saying so: Claude Code would
 *   otherwise let the tool run when its timeout passes.
 * - Once the request exists, every outcome is a 200 with hook JSON, a deny
 *   unless a person allowed (an internal error too, logged with a reference):
 *   Claude Code ignores a non-2xx reply and, without `onFailure: "block"`,
 *   runs the tool.
 * - Claude Code closing the connection (the user pressed Esc, the session
 *   ended) cancels the request, so the Slack message says so; unless another
 *   call for the same tool call still holds it on this instance.
 */
import type { Logger } from "../../logger.js";
import { RelayError } from "../../requests/errors.js";
import type { RequestRecord } from "../../requests/model.js";
import { HOOK_PATH } from "../../protocol/claude-code-hook.js";
import type { CreateRequestBody } from "../../protocol/request-body.js";
import type { RequestService } from "../../requests/service.js";
import { holdUntil, replyDeadlineSeconds } from "../../requests/hooks/deadline.js";
import { parseHookInput, type ClaudeCodeHookInput } from "../../requests/hooks/input.js";
import { parseHookQuery } from "../../requests/hooks/query.js";
import { denyOutput, hookOutput } from "../../requests/hooks/reply.js";
import { hookRequestBody, hookRequestKey, keyForAttempt } from "../../requests/hooks/request.js";
import { readJson } from "../body.js";
import { errorReply, type ErrorBody } from "../errors.js";
import { parseCreateSchema } from "../parse.js";
import { clientGone, type Reply } from "../response.js";
import type { RouteTable } from "../route.js";

/** Requests tried per hook call before giving up on idempotency (each ended one is asked again under the next key). */
const MAX_KEY_ATTEMPTS = 20;
export const DISCONNECT_REASON = "Claude Code closed the connection";
export const SHUTDOWN_REASON = "The relay shut down before anyone answered";

export interface ClaudeCodeHookDeps {
  service: RequestService;
  /** Largest accepted body, in bytes. */
  bodyLimitBytes: number;
  /** Claude Code's hook timeout (seconds) when the URL has no `?timeout=`. */
  hookTimeoutSeconds: number;
  logger: Logger;
  /** Unix time in milliseconds. */
  now?: () => number;
}

export function registerClaudeCodeHookRoutes(router: RouteTable, deps: ClaudeCodeHookDeps): void {
  const { service, bodyLimitBytes, hookTimeoutSeconds, logger } = deps;
  const now = deps.now ?? Date.now;
  /** Hook calls held on this instance, per request id. */
  const holders = new Map<string, number>();

  router.add("POST", HOOK_PATH, {
    auth: true,
    async handle({ req, res, query, agent }): Promise<Reply | undefined> {
      const startedAt = now();
      const { timeoutSeconds, channel } = parseHookQuery(query, hookTimeoutSeconds);
      const input = parseHookInput(await readJson(req, bodyLimitBytes));
      // parseHookInput already checked the object and its depth; only the schema step is left.
      const body = parseCreateSchema(hookRequestBody(input, { timeoutSeconds: replyDeadlineSeconds(timeoutSeconds), ...(channel ? { channel } : {}) }));
      const gone = clientGone(res);
      const event = input.hook_event_name;
      let record: RequestRecord | undefined;
      try {
        const opened = await open(agent, input, body);
        record = opened.status === "pending" ? await hold(opened, holdUntil(startedAt, timeoutSeconds, opened.expiresAt), gone) : opened;
      } catch (error) {
        if (error instanceof RelayError) throw error;
        const failure = errorReply(error, logger, { method: "POST", path: HOOK_PATH });
        const message = (failure.body as ErrorBody).error.message;
        return { status: 200, body: denyOutput(event, `${message} The tool call was denied.`) };
      }
      if (gone.aborted) return undefined;
      if (record?.status === "pending" && service.isClosed) {
        await service.cancel(record.id, "relay", SHUTDOWN_REASON).catch(() => undefined);
        return { status: 200, body: denyOutput(event, `${SHUTDOWN_REASON}, so the tool call was denied.`) };
      }
      if (!record) return { status: 200, body: denyOutput(event, "The approval request was lost by the relay, so the tool call was denied.") };
      return { status: 200, body: hookOutput(event, record) };
    },
  });

  /**
   * The request this hook call stands for: a pending one under its key (a
   * retry joins it), an answered one when the key proves it is this call's
   * answer, else a new one under the next key.
   */
  async function open(agent: string, input: ClaudeCodeHookInput, body: CreateRequestBody): Promise<RequestRecord> {
    const { key, answerBelongsToCall } = hookRequestKey(input);
    for (let attempt = 1; attempt <= MAX_KEY_ATTEMPTS; attempt += 1) {
      const { record } = await service.create({ tokenName: agent, body, idempotencyKey: keyForAttempt(key, attempt) });
      if (record.status === "pending" || (record.status === "answered" && answerBelongsToCall)) return record;
    }
    return (await service.create({ tokenName: agent, body })).record;
  }

  /** Waits for the request to end until `until`; cancels it when the last caller holding it leaves. */
  async function hold(record: RequestRecord, until: number, gone: AbortSignal): Promise<RequestRecord | undefined> {
    const { id } = record;
    holders.set(id, (holders.get(id) ?? 0) + 1);
    let last = false;
    let ended: RequestRecord | undefined;
    try {
      ended = await service.wait(id, Math.max(0, until - now()), gone);
    } finally {
      const left = (holders.get(id) ?? 1) - 1;
      if (left > 0) holders.set(id, left);
      else holders.delete(id);
      last = left === 0;
    }
    if (gone.aborted && last && ended?.status === "pending") {
      const result = await service.cancel(id, "claude-code", DISCONNECT_REASON);
      logger.info({ id, outcome: result.outcome }, "claude code hook call left before the answer");
    }
    return ended;
  }
}
