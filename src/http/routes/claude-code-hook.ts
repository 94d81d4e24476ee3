/**
 * POST /v1/hooks/claude-code (docs/architecture.md §3): a Claude Code `http` hook. Thin:
 * parses the hook URL's query and the hook input (a bad `?timeout=`,
 * `&channel=` or input is a 4xx before anything is created), hands the call
 * to HookCalls (src/requests/hooks/calls.ts), which holds it until a person
 * answers or the reply deadline, and replies 200 with the hook JSON.
 *
 * Keepalive: a held call may last minutes, and proxies cut connections idle
 * for a while (60 s is the default of common load balancers), which Claude
 * Code sees as a failed hook and the relay as the caller leaving (the request
 * is cancelled). So a call not answered within `keepaliveMs` gets its 200
 * (application/json) started then, and a space every `keepaliveMs` until the
 * hook JSON follows: JSON allows leading whitespace, and Claude Code parses
 * such a reply (test/integration/hooks/claude-code-keepalive.test.ts runs the
 * real one). A call answered or refused sooner keeps a plain reply with its
 * own status; once the 200 has started, a refusal can only be a deny.
 */
import { PassThrough } from "node:stream";
import type { FastifyReply, FastifyRequest } from "fastify";
import { denyOutput, RETRIES_UNAVAILABLE_HEADER, type HookEvent, type HookOutput } from "../../protocol/claude-code-hook.js";
import type { HookCalls } from "../../requests/hooks/calls.js";
import { parseHookInput } from "../../requests/hooks/input.js";
import { parseHookQuery } from "../../requests/hooks/query.js";
import { internalErrorMessage, RelayError } from "../../requests/errors.js";
import type { CreateLimiter } from "../rate-limit.js";
import { serveRoute } from "../api.js";
import type { AuthHook } from "../auth.js";
import { clientGone, jsonBody, rawQuery, type HttpApp } from "../transport.js";

/** Default of ClaudeCodeHookDeps.keepaliveMs (RELAY_HOOK_KEEPALIVE). */
export const DEFAULT_HOOK_KEEPALIVE_MS = 15_000;
/** What keeps a held reply alive: one space (leading whitespace is valid JSON). */
const KEEPALIVE = " ";

export interface ClaudeCodeHookDeps {
  hookCalls: HookCalls;
  authenticate: AuthHook;
  /** Claude Code's hook timeout (seconds) when the URL has no `?timeout=`. */
  hookTimeoutSeconds: number;
  /** Milliseconds between keepalive spaces of a held call; the first comes this long after the call arrived. */
  keepaliveMs?: number;
  /** Unix time in milliseconds. */
  now?: () => number;
  /** Largest hook body, in bytes (RELAY_MAX_BODY: a Write or Edit of a large file); the server's limit when absent. */
  bodyLimitBytes?: number;
  /** The create rate limit per token (../rate-limit.ts): a call over it is denied with its message; absent → none. */
  limitCreates?: CreateLimiter;
}

export function registerClaudeCodeHookRoutes(
  app: HttpApp,
  { hookCalls, authenticate, hookTimeoutSeconds, keepaliveMs = DEFAULT_HOOK_KEEPALIVE_MS, now = Date.now, bodyLimitBytes, limitCreates }: ClaudeCodeHookDeps,
): void {
  // Over the rate limit: Claude Code is told no with hook JSON, as for every other refusal of a well-formed call.
  const limited = limitCreates
    ? async (request: FastifyRequest, reply: FastifyReply) => {
        try {
          await limitCreates(request, reply);
        } catch (error) {
          if (!(error instanceof RelayError) || error.code !== "relay_rate_limited") throw error;
          const input = parseHookInput(jsonBody(request));
          await reply.code(200).send(denyOutput(input.hook_event_name, `${error.message} The tool call was denied.`));
        }
      }
    : undefined;
  serveRoute(
    app,
    "claudeCodeHook",
    { onRequest: authenticate, ...(limited ? { preHandler: limited } : {}), ...(bodyLimitBytes === undefined ? {} : { bodyLimit: bodyLimitBytes }) },
    async (request, reply) => {
      // When the call arrived, before its body was read: the reply deadline counts from there.
      const startedAt = now() - reply.elapsedTime;
      const { timeoutSeconds, channel, labels, requestedBy } = parseHookQuery(rawQuery(request), hookTimeoutSeconds);
      const input = parseHookInput(jsonBody(request));
      const answered = hookCalls.answer({
        agent: request.agent,
        input,
        timeoutSeconds,
        ...(channel ? { channel } : {}),
        ...(labels ? { labels } : {}),
        ...(requestedBy ? { requestedBy } : {}),
        startedAt,
        gone: clientGone(reply.raw),
        reference: request.id,
        ...(request.headers[RETRIES_UNAVAILABLE_HEADER] === "1" ? { retriesUnavailable: true } : {}),
      });
      return keptAlive(answered, { request, reply, event: input.hook_event_name, firstMs: Math.max(1, keepaliveMs - reply.elapsedTime), keepaliveMs });
    },
  );
}

interface Held {
  request: FastifyRequest;
  reply: FastifyReply;
  event: HookEvent;
  /** Milliseconds until the first keepalive. */
  firstMs: number;
  /** Milliseconds between keepalives. */
  keepaliveMs: number;
}

/**
 * The hook JSON as a plain reply when it comes within `keepaliveMs` (a
 * refusal then keeps its 4xx); otherwise the 200 starts, a space goes out
 * every `keepaliveMs`, and the hook JSON ends the body.
 */
async function keptAlive(answered: Promise<HookOutput>, { request, reply, event, firstMs, keepaliveMs }: Held): Promise<HookOutput | FastifyReply> {
  let timer: NodeJS.Timeout | undefined;
  const first = new Promise<"keepalive">((resolve) => (timer = setTimeout(() => resolve("keepalive"), firstMs)));
  const early = await Promise.race([answered, first]).finally(() => clearTimeout(timer));
  if (early !== "keepalive") return early;

  const body = new PassThrough();
  const write = (chunk: string) => {
    if (!body.destroyed && !body.writableEnded) body.write(chunk);
  };
  const tick = setInterval(() => write(KEEPALIVE), keepaliveMs);
  // The caller left: Fastify destroys the body; HookCalls sees the caller gone and answers soon after.
  body.once("close", () => clearInterval(tick));
  body.on("error", () => undefined);
  write(KEEPALIVE);
  void answered
    .catch((error: unknown) => {
      // The 200 is out: what would have been a refusal is a deny (fail closed).
      request.log.warn({ error }, "a held Claude Code hook call was refused after its reply had started: denied");
      return denyOutput(event, `${internalErrorMessage(request.id)} The tool call was denied.`);
    })
    .then((output) => {
      clearInterval(tick);
      if (!body.destroyed) body.end(JSON.stringify(output));
    });
  return reply.code(200).type("application/json; charset=utf-8").send(body);
}
