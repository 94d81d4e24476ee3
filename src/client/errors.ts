/**
 * The errors the client library throws, with string codes like the relay's
 * own (`relay_unauthorized`), and the plain-English reasons agents are given
 * when a request ends without an answer.
 */
import type { EndedStatus, RequestView } from "../protocol/request-view.js";
import { endedReason, haltedOnTimeoutText } from "../protocol/texts.js";

export { endedReason };

/**
 * The relay refused a call (a 4xx: code and status from its error reply), or
 * could not be reached or understood after the allowed retries
 * (`relay_unreachable`, `relay_bad_reply`; no status).
 */
export class RelayClientError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly status?: number,
    readonly details?: unknown,
    /** The relay's Retry-After, in milliseconds, on a refusal that may pass later (relay_too_many_pending, relay_rate_limited). */
    readonly retryAfterMs?: number,
  ) {
    super(message);
    this.name = "RelayClientError";
  }
}

/** A request ended without an answer: it expired, was cancelled, or Slack refused it. */
export class RequestEndedError extends Error {
  readonly status: Exclude<EndedStatus, "answered">;
  constructor(readonly view: RequestView & { status: Exclude<EndedStatus, "answered"> }) {
    super(endedReason(view));
    this.name = "RequestEndedError";
    this.status = view.status;
  }
}

/** The error a call throws when its signal aborts (name "AbortError", as fetch's). */
export function abortError(signal: AbortSignal): DOMException {
  const error = new DOMException("The operation was aborted.", "AbortError");
  if (signal.reason !== undefined) Object.defineProperty(error, "cause", { value: signal.reason });
  return error;
}

export function isAbortError(error: unknown): boolean {
  return error instanceof Error && error.name === "AbortError";
}

/** Why a step gate that expired under its route's `onTimeout: halt` stopped the agent. */
export function haltedReason(view: Pick<RequestView, "createdAt" | "expiresAt">): string {
  return haltedOnTimeoutText((Date.parse(view.expiresAt) - Date.parse(view.createdAt)) / 1000);
}

/** Why a call to the relay failed, for a deny message. */
export function failureReason(error: unknown): string {
  if (error instanceof RequestEndedError) return error.message;
  if (isAbortError(error)) return "The agent stopped waiting, so the request was cancelled.";
  if (error instanceof RelayClientError) {
    if (error.code === "relay_unreachable" || error.code === "relay_bad_reply") {
      return `The approval relay could not be reached (${error.message}), so nothing was approved.`;
    }
    return `The approval relay refused the request (${error.message}), so nothing was approved.`;
  }
  return `Asking for approval failed (${error instanceof Error ? error.message : String(error)}), so nothing was approved.`;
}
