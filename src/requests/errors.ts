/**
 * One error class for everything the relay refuses: what went wrong, as a
 * string code (as bolt-js's `slack_bolt_*` codes), a message and details.
 * The domain says what; how a transport answers it is the transport's
 * business (src/http/errors.ts alone maps codes to HTTP statuses; a Slack
 * listener or a Claude Code hook answers in its own terms).
 */
import type { RequestView } from "../protocol/request-view.js";

export type RelayErrorCode =
  | "relay_invalid_json"
  | "relay_invalid_request"
  | "relay_unauthorized"
  | "relay_forbidden"
  | "relay_not_found"
  | "relay_method_not_allowed"
  | "relay_body_too_large"
  | "relay_unsupported_media_type"
  | "relay_already_answered"
  | "relay_already_ended"
  | "relay_idempotency_mismatch"
  | "relay_not_ready"
  | "relay_store_unavailable"
  | "relay_shutting_down"
  | "relay_slack_unavailable"
  | "relay_too_many_pending"
  | "relay_rate_limited";

export interface FieldProblem {
  /** Dotted path of the offending field, e.g. "questions.0.options". */
  path: string;
  message: string;
}

export class RelayError extends Error {
  constructor(
    readonly code: RelayErrorCode,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
    this.name = "RelayError";
  }
}

/** Seconds a client is told to wait (Retry-After) before trying again while the store is unavailable. */
export const STORE_RETRY_AFTER_SECONDS = 2;

/**
 * The store (Redis) did not answer in time or could not be reached; the
 * same call may succeed once it is back (and is safe to repeat). Stores throw it
 * for outages only (never for a bug or a refusal); HTTP answers it with 503
 * and Retry-After, a Claude Code hook with a deny, a Slack click with "not
 * recorded, try again". `reason` is for the log (it may name hosts): the
 * client sees only the fixed message.
 */
export class StoreUnavailableError extends RelayError {
  readonly retryAfterSeconds = STORE_RETRY_AFTER_SECONDS;
  /** What a long-poll knew of its request before the store went away (it was pending then), when it knew anything. */
  readonly lastKnown?: RequestView;
  constructor(
    readonly reason: string,
    options?: { cause?: unknown; lastKnown?: RequestView },
  ) {
    super("relay_store_unavailable", "The relay's storage is unavailable; try again shortly.");
    this.name = "StoreUnavailableError";
    if (options?.cause !== undefined) this.cause = options.cause;
    if (options?.lastKnown !== undefined) this.lastKnown = options.lastKnown;
  }
}

/** Seconds a client is told to wait (Retry-After) before trying again while Slack cannot be asked. */
export const SLACK_RETRY_AFTER_SECONDS = 5;

/**
 * Slack could not be asked something a new request needs checked (whose
 * email it names, who is in a user group), or the relay has no way to ask:
 * nothing was created, and the same call may succeed later. Answered 503
 * relay_slack_unavailable with Retry-After. `reason` is for the log only.
 */
export class SlackUnavailableError extends RelayError {
  readonly retryAfterSeconds = SLACK_RETRY_AFTER_SECONDS;
  constructor(
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super("relay_slack_unavailable", "Slack could not be asked who this request is for or who may answer it; nothing was created. Try again shortly.");
    this.name = "SlackUnavailableError";
    if (options?.cause !== undefined) this.cause = options.cause;
  }
}

/** Seconds a client is told to wait (Retry-After) before trying again while this instance shuts down. */
export const SHUTDOWN_RETRY_AFTER_SECONDS = 1;

/**
 * This instance is shutting down (SIGTERM) and takes no new work: nothing was
 * created or held. Answered 503 with Retry-After and `Connection: close`, so
 * the retry opens a new connection, which a load balancer sends to another
 * instance.
 */
export function shuttingDown(): RelayError {
  return new RelayError(
    "relay_shutting_down",
    "This relay instance is shutting down and takes no new work; nothing was changed. Try again: another instance will answer.",
  );
}

/**
 * An agent token made more creates in the last minute than
 * RELAY_CREATE_RATE_LIMIT allows on this instance (POST /v1/requests, hook
 * calls and MCP tool calls that create count alike): nothing was created.
 * Answered 429 with Retry-After; a hook call and an MCP `approve` deny with
 * the message, which says when to try again.
 */
export class RateLimitedError extends RelayError {
  constructor(
    readonly limitPerMinute: number,
    readonly retryAfterSeconds: number,
  ) {
    super(
      "relay_rate_limited",
      `This agent token made more than ${limitPerMinute} requests in a minute, the most it may; nothing was created. Try again in ${retryAfterSeconds} s.`,
      { limitPerMinute, retryAfterSeconds },
    );
    this.name = "RateLimitedError";
  }
}

/** Seconds a browser is told (Retry-After) to wait before signing in again while the console's sign-ins are full. */
export const SIGN_INS_RETRY_AFTER_SECONDS = 60;

/**
 * The store already holds as many live console sign-ins of one kind as it
 * may (src/requests/sign-ins.ts MAX_SIGN_INS_PER_KIND, on the memory store
 * and on Redis alike): a new sign-in link, session or Sign in with Slack
 * was refused and nothing was kept. Answered 429 relay_rate_limited with
 * Retry-After; the kind is for the log.
 */
export class TooManySignInsError extends RelayError {
  readonly retryAfterSeconds = SIGN_INS_RETRY_AFTER_SECONDS;
  constructor(readonly kind: string) {
    super("relay_rate_limited", `The console holds as many sign-ins as it may; nothing was kept. Try again in ${SIGN_INS_RETRY_AFTER_SECONDS} s.`, {
      retryAfterSeconds: SIGN_INS_RETRY_AFTER_SECONDS,
    });
    this.name = "TooManySignInsError";
  }
}

/** Longest Retry-After (seconds) a token at its pending cap is told: a pending request may be answered any time. */
export const MAX_PENDING_RETRY_AFTER_SECONDS = 60;

/**
 * An agent token already holds as many pending requests as it may
 * (RELAY_MAX_PENDING_PER_TOKEN, or its route's lower `maxPending`): nothing
 * was created. Answered 429 with Retry-After (when the token's earliest
 * pending request runs out, at most a minute) and the count in `details`;
 * a Claude Code hook denies with the message. Stores throw it, atomically
 * with the create they refuse.
 */
export class TooManyPendingError extends RelayError {
  readonly retryAfterSeconds: number;
  constructor(
    readonly pending: number,
    readonly limit: number,
    /** Unix ms the token's earliest pending request runs out. */
    earliestEnd: number,
    now: number,
  ) {
    super(
      "relay_too_many_pending",
      `This agent token already has ${pending} pending requests, the most it may have (${limit}); nothing was created. Wait for some to be answered, or cancel them, and try again.`,
      { pending, limit },
    );
    this.name = "TooManyPendingError";
    this.retryAfterSeconds = Math.min(MAX_PENDING_RETRY_AFTER_SECONDS, Math.max(1, Math.ceil((earliestEnd - now) / 1000)));
  }
}

/** Turns zod issues into the `details` list of a 400. */
export function fieldProblems(issues: ReadonlyArray<{ path: ReadonlyArray<PropertyKey>; message: string }>, prefix = ""): FieldProblem[] {
  return issues.map((issue) => {
    const path = issue.path.map(String).join(".");
    return { path: [prefix, path].filter(Boolean).join(".") || "(body)", message: issue.message };
  });
}

export function invalidRequest(problems: FieldProblem[]): RelayError {
  const summary = problems.map((p) => `${p.path}: ${p.message}`).join("; ");
  return new RelayError("relay_invalid_request", `Invalid request: ${summary}`, problems);
}

/** What a client is told about a failure inside the relay: nothing internal, a reference to find it in the log. */
export function internalErrorMessage(reference: string): string {
  return `The relay failed to handle this request (reference ${reference}).`;
}
