/**
 * One attempt to deliver a callback: POST the request's final JSON, signed
 * with the agent's token, to its callback URL, and say whether it landed.
 * Transport only: the worker (worker.ts) decides what happens next.
 *
 * Only a 2xx counts as delivered. Redirects are never followed (a 3xx is a
 * failure: following one would send the signed body to a host nobody
 * allowed). The attempt gives up after `timeoutMs`.
 */
import { CALLBACK_REQUEST_ID_HEADER, CALLBACK_SIGNATURE_HEADER, CALLBACK_TIMESTAMP_HEADER, signCallback } from "../protocol/callback-signature.js";

const CALLBACK_USER_AGENT = "slack-approval-relay-callbacks/1";

export type FetchLike = (url: string, init: RequestInit) => Promise<Response>;

export interface CallbackAttempt {
  url: string;
  requestId: string;
  /** JSON text of the request as GET /v1/requests/:id shows it; sent and signed as is. */
  body: string;
  /** Secret of the agent token that created the request. */
  token: string;
  /** Unix time in milliseconds of the attempt; its seconds go in X-Relay-Timestamp. */
  now: number;
}

export interface AttemptOptions {
  fetch: FetchLike;
  /** Milliseconds the attempt may take, response headers included. */
  timeoutMs: number;
  /** Aborts the attempt (the worker is stopping). */
  signal?: AbortSignal;
}

export type AttemptOutcome =
  | { delivered: true; status: number }
  /** `stopped`: `signal` aborted it; the outcome says nothing about the receiver. */
  | { delivered: false; reason: string; status?: number; stopped?: boolean };

export async function attemptCallback(attempt: CallbackAttempt, { fetch, timeoutMs, signal }: AttemptOptions): Promise<AttemptOutcome> {
  const timestamp = Math.floor(attempt.now / 1000);
  const headers = {
    "content-type": "application/json",
    "user-agent": CALLBACK_USER_AGENT,
    [CALLBACK_REQUEST_ID_HEADER]: attempt.requestId,
    [CALLBACK_TIMESTAMP_HEADER]: String(timestamp),
    [CALLBACK_SIGNATURE_HEADER]: signCallback({ token: attempt.token, timestamp, body: attempt.body }),
  };
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, timeoutMs);
  const stop = () => controller.abort();
  signal?.addEventListener("abort", stop, { once: true });
  if (signal?.aborted) controller.abort();
  try {
    const response = await fetch(attempt.url, {
      method: "POST",
      headers,
      body: attempt.body,
      redirect: "manual",
      signal: controller.signal,
    });
    await response.body?.cancel().catch(() => undefined);
    const { status } = response;
    if (status >= 200 && status < 300) return { delivered: true, status };
    if (status >= 300 && status < 400) return { delivered: false, status, reason: `redirect (HTTP ${status}) not followed` };
    return { delivered: false, status, reason: status === 0 ? "redirect not followed" : `HTTP ${status}` };
  } catch (error) {
    if (timedOut) return { delivered: false, reason: `no response within ${timeoutMs} ms` };
    if (signal?.aborted) return { delivered: false, reason: "stopped", stopped: true };
    return { delivered: false, reason: networkReason(error) };
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener("abort", stop);
  }
}

/** fetch's "fetch failed" hides the cause (ECONNREFUSED, ENOTFOUND, …) one level down. */
function networkReason(error: unknown): string {
  const cause = error instanceof Error ? (error.cause as { code?: unknown; message?: unknown } | undefined) : undefined;
  if (typeof cause?.code === "string") return cause.code;
  if (typeof cause?.message === "string") return cause.message;
  return error instanceof Error ? error.message : String(error);
}
