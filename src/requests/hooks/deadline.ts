/**
 * When the relay must answer a Claude Code hook. Claude Code gives an http
 * hook `timeout` seconds (S) and, when they pass, lets the tool run unless the
 * hook says `"onFailure": "block"`. So the relay never lets S pass: it answers
 * with a deny a few seconds before, and the Slack request expires at that same
 * moment, so Slack shows "Expired" exactly when the agent is told no one
 * answered.
 *
 *   margin(S)  = max(2, min(5, S × 0.1))      seconds
 *   reply(S)   = floor(S − margin(S))         whole seconds, ≥ 1 for S ≥ 3
 *
 * e.g. S = 3 → 1 s, 10 → 8 s, 30 → 27 s, 600 (Claude Code's default) → 595 s,
 * 86400 → 86395 s. The margin covers the network both ways and the clock
 * starting a little before the relay reads the body. The accepted hook
 * timeouts are wire contract (src/protocol/claude-code-hook.ts).
 */

/** Whatever happens, the reply leaves at least this long before Claude Code's timeout (ms). */
export const HARD_MARGIN_MS = 1_000;

/** Seconds, counted from the hook call, within which the relay replies (and the request expires). */
export function replyDeadlineSeconds(hookTimeoutSeconds: number): number {
  const margin = Math.max(2, Math.min(5, hookTimeoutSeconds * 0.1));
  return Math.max(1, Math.floor(hookTimeoutSeconds - margin));
}

/**
 * Until when (Unix ms) the relay may hold a hook call that arrived at
 * `startedAt`: the request's own expiry, and never later than 1 s before
 * Claude Code's timeout (a retry that joins an older request, or a slow body,
 * cannot push the reply past it).
 */
export function holdUntil(startedAt: number, hookTimeoutSeconds: number, requestExpiresAt: number): number {
  return Math.min(requestExpiresAt, startedAt + hookTimeoutSeconds * 1000 - HARD_MARGIN_MS);
}
