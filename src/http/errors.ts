/**
 * The one place that turns an error into an HTTP response, for Fastify's
 * error handler and for what Node's parser refuses before Fastify sees a
 * request. A RelayError is a refusal the client caused and gets its own
 * status; Fastify's own refusals (body too large, unknown media type, a
 * client that left mid-body) get the relay's codes; anything else is a bug in
 * the relay: 500 relay_internal_error, logged with the request id, which the
 * client also sees as a reference. A store outage (StoreUnavailableError)
 * is 503 relay_store_unavailable with Retry-After, and so is Slack's directory
 * (SlackUnavailableError, 503 relay_slack_unavailable); an instance shutting down
 * answers new work 503 relay_shutting_down with Retry-After. An agent token
 * at its pending cap (TooManyPendingError) gets 429 relay_too_many_pending
 * with Retry-After and the count; one over its create rate, 429
 * relay_rate_limited (./rate-limit.ts), and so does a console sign-in when
 * the store holds as many as it may (TooManySignInsError). No stack trace, token or internal message
 * ever reaches the client.
 */
import type { FastifyBaseLogger } from "fastify";
import type { ErrorReply } from "../protocol/request-view.js";
import {
  internalErrorMessage,
  RelayError,
  RateLimitedError,
  SHUTDOWN_RETRY_AFTER_SECONDS,
  SlackUnavailableError,
  StoreUnavailableError,
  TooManyPendingError,
  TooManySignInsError,
  type RelayErrorCode,
} from "../requests/errors.js";

/** The HTTP status of each of the domain's refusals: the only place a code meets a status. */
const STATUS_BY_CODE: Record<RelayErrorCode, number> = {
  relay_invalid_json: 400,
  relay_invalid_request: 400,
  relay_unauthorized: 401,
  relay_forbidden: 403,
  relay_not_found: 404,
  relay_method_not_allowed: 405,
  relay_body_too_large: 413,
  relay_unsupported_media_type: 415,
  relay_already_answered: 409,
  relay_already_ended: 409,
  relay_idempotency_mismatch: 409,
  relay_not_ready: 503,
  relay_store_unavailable: 503,
  relay_shutting_down: 503,
  relay_slack_unavailable: 503,
  relay_too_many_pending: 429,
  relay_rate_limited: 429,
};

/** The HTTP status a refusal with `code` is answered with. */
export function statusOf(code: RelayErrorCode): number {
  return STATUS_BY_CODE[code];
}

/** The error body of every refusal (src/protocol/request-view.ts). */
export type ErrorBody = ErrorReply;

export interface ErrorResponse {
  status: number;
  body: ErrorBody;
  headers: Record<string, string>;
}

export interface ErrorScene {
  /** The request's logger. */
  log: FastifyBaseLogger;
  /** The request id, quoted to the client as the reference of a 500. */
  requestId: string;
  /** Largest accepted body, in bytes, named in a 413. */
  bodyLimitBytes: number;
}

export function errorReply(error: unknown, { log, requestId, bodyLimitBytes }: ErrorScene): ErrorResponse {
  if (error instanceof StoreUnavailableError) {
    log.warn({ reason: error.reason }, "the store is unavailable: answered 503");
    return { ...relayErrorReply(error), headers: { "Retry-After": String(error.retryAfterSeconds) } };
  }
  if (error instanceof TooManyPendingError) {
    log.info({ pending: error.pending, limit: error.limit }, "the agent token holds as many pending requests as it may: answered 429");
    return { ...relayErrorReply(error), headers: { "Retry-After": String(error.retryAfterSeconds) } };
  }
  if (error instanceof RateLimitedError) {
    return { ...relayErrorReply(error), headers: { "Retry-After": String(error.retryAfterSeconds) } };
  }
  if (error instanceof TooManySignInsError) {
    log.warn({ kind: error.kind }, "the console holds as many sign-ins of this kind as it may: answered 429");
    return { ...relayErrorReply(error), headers: { "Retry-After": String(error.retryAfterSeconds) } };
  }
  if (error instanceof SlackUnavailableError) {
    log.warn({ reason: error.reason }, "Slack could not be asked about a new request: answered 503");
    return { ...relayErrorReply(error), headers: { "Retry-After": String(error.retryAfterSeconds) } };
  }
  const refusal = error instanceof RelayError ? error : fromFastify(error, log, bodyLimitBytes);
  if (refusal) return relayErrorReply(refusal);
  log.error({ error, stack: error instanceof Error ? error.stack : undefined }, "unexpected error while handling an HTTP request");
  return {
    status: 500,
    body: errorBody("relay_internal_error", internalErrorMessage(requestId), { requestId }),
    headers: {},
  };
}

/** Fastify's (and Node's) errors for what the client sent, as the relay's refusals; undefined for anything else. */
function fromFastify(error: unknown, log: FastifyBaseLogger, bodyLimitBytes: number): RelayError | undefined {
  const { code, statusCode } = (error ?? {}) as { code?: unknown; statusCode?: unknown };
  switch (code) {
    case "FST_ERR_CTP_BODY_TOO_LARGE":
      return tooLarge(bodyLimitBytes);
    case "FST_ERR_CTP_INVALID_MEDIA_TYPE":
      return unsupportedMediaType();
    default:
      break;
  }
  // Fastify marks a client that left or lied about its body (aborted stream, short Content-Length) with a 4xx.
  if (typeof statusCode === "number" && statusCode >= 400 && statusCode < 500) {
    log.debug({ error }, "the client broke off its request");
    return new RelayError("relay_invalid_request", "The request body did not arrive whole.");
  }
  return undefined;
}

function relayErrorReply(error: RelayError): ErrorResponse {
  const reply: ErrorResponse = { status: statusOf(error.code), body: errorBody(error.code, error.message, error.details), headers: {} };
  switch (error.code) {
    case "relay_unauthorized":
      reply.headers["WWW-Authenticate"] = "Bearer";
      break;
    case "relay_method_not_allowed":
      reply.headers.Allow = allowOf(error.details);
      break;
    case "relay_body_too_large":
      reply.headers.Connection = "close";
      break;
    case "relay_shutting_down":
      reply.headers["Retry-After"] = String(SHUTDOWN_RETRY_AFTER_SECONDS);
      reply.headers.Connection = "close";
      break;
    default:
      break;
  }
  return reply;
}

/**
 * A request Node's HTTP parser refused before any route saw it (malformed
 * request line, headers too large, headers too slow): the status Node itself
 * would use, in the relay's error shape. The connection is closed after it.
 */
export function clientErrorReply(error: { code?: string }): { status: number; body: ErrorBody } {
  switch (error.code) {
    case "HPE_HEADER_OVERFLOW":
      return { status: 431, body: errorBody("relay_headers_too_large", "The request headers are too large.") };
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return { status: 408, body: errorBody("relay_request_timeout", "The request took too long to arrive.") };
    default:
      return { status: 400, body: errorBody("relay_bad_http", "The request is not valid HTTP/1.1.") };
  }
}

/** A 405 carries the allowed methods as `details.allow` and in the Allow header. */
export function methodNotAllowed(allow: readonly string[]): RelayError {
  return new RelayError("relay_method_not_allowed", `Use ${allow.join(", ")} on this path.`, { allow });
}

export function notFound(what: string): RelayError {
  return new RelayError("relay_not_found", `${what} was not found.`);
}

export function unsupportedMediaType(): RelayError {
  return new RelayError("relay_unsupported_media_type", "Send the body as JSON with 'Content-Type: application/json'.");
}

export function tooLarge(limit: number): RelayError {
  return new RelayError("relay_body_too_large", `The body is larger than ${limit} bytes.`, { limitBytes: limit });
}

function allowOf(details: unknown): string {
  const allow = (details as { allow?: unknown } | undefined)?.allow;
  return Array.isArray(allow) ? allow.join(", ") : "";
}

function errorBody(code: string, message: string, details?: unknown): ErrorBody {
  return details === undefined ? { error: { code, message } } : { error: { code, message, details } };
}
