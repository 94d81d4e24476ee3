/**
 * POST /v1/hooks/claude-code (DESIGN §3): a Claude Code `http` hook. Thin:
 * parses the hook URL's query and the hook input (a bad `?timeout=`,
 * `&channel=` or input is a 4xx before anything is created), hands the call
 * to HookCalls (src/requests/hooks/calls.ts), which holds it until a person
 * answers or the reply deadline, and replies 200 with the hook JSON.
 */
import { HOOK_PATH } from "../../protocol/claude-code-hook.js";
import type { HookCalls } from "../../requests/hooks/calls.js";
import { parseHookInput } from "../../requests/hooks/input.js";
import { parseHookQuery } from "../../requests/hooks/query.js";
import type { AuthHook } from "../auth.js";
import { clientGone, jsonBody, rawQuery, type HttpApp } from "../transport.js";

export interface ClaudeCodeHookDeps {
  hookCalls: HookCalls;
  authenticate: AuthHook;
  /** Claude Code's hook timeout (seconds) when the URL has no `?timeout=`. */
  hookTimeoutSeconds: number;
  /** Unix time in milliseconds. */
  now?: () => number;
}

export function registerClaudeCodeHookRoutes(app: HttpApp, { hookCalls, authenticate, hookTimeoutSeconds, now = Date.now }: ClaudeCodeHookDeps): void {
  app.post(HOOK_PATH, { onRequest: authenticate }, async (request, reply) => {
    // When the call arrived, before its body was read: the reply deadline counts from there.
    const startedAt = now() - reply.elapsedTime;
    const { timeoutSeconds, channel } = parseHookQuery(rawQuery(request), hookTimeoutSeconds);
    const input = parseHookInput(jsonBody(request));
    return hookCalls.answer({
      agent: request.agent,
      input,
      timeoutSeconds,
      ...(channel ? { channel } : {}),
      startedAt,
      gone: clientGone(reply.raw),
      reference: request.id,
    });
  });
}
