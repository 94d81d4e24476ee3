/**
 * The one place that turns an error into an HTTP response. A RelayError is a
 * refusal the client caused and gets its own status; anything else is a bug
 * in the relay: 500 relay_internal_error, logged with a reference the client
 * also sees. No stack trace, token or internal message ever reaches the client.
 */
import { randomUUID } from "node:crypto";
import type { Logger } from "../logger.js";
import type { ErrorReply } from "../protocol/request-view.js";
import { RelayError } from "../requests/errors.js";
import { ClientGoneError } from "./body.js";
import type { Reply } from "./response.js";

/** The error body of every refusal (src/protocol/request-view.ts). */
export type ErrorBody = ErrorReply;

/** Where the error happened, for the log line of a 500. */
export interface ErrorScene {
  method: string;
  /** Path without the query string. */
  path: string;
}

export function errorReply(error: unknown, logger: Logger, scene: ErrorScene): Reply {
  if (error instanceof RelayError) return relayErrorReply(error);
  if (error instanceof ClientGoneError) {
    logger.debug({ method: scene.method, path: scene.path }, "client closed the connection mid-request");
    return { status: 400, body: errorBody("relay_invalid_request", error.message), close: true };
  }
  const requestId = randomUUID();
  logger.error({
    requestId,
    method: scene.method,
    path: scene.path,
    error,
    stack: error instanceof Error ? error.stack : undefined,
  }, "unexpected error while handling an HTTP request");
  return {
    status: 500,
    body: errorBody("relay_internal_error", `The relay failed to handle this request (reference ${requestId}).`, { requestId }),
  };
}

function relayErrorReply(error: RelayError): Reply {
  const reply: Reply = { status: error.status, body: errorBody(error.code, error.message, error.details) };
  switch (error.code) {
    case "relay_unauthorized":
      reply.headers = { "WWW-Authenticate": "Bearer" };
      break;
    case "relay_method_not_allowed":
      reply.headers = { Allow: allowOf(error.details) };
      break;
    case "relay_body_too_large":
      reply.close = true;
      break;
    default:
      break;
  }
  return reply;
}

/**
 * A request Node's HTTP parser refused before any route saw it (malformed
 * request line, headers too large, headers too slow): the status Node itself
 * would use, in the relay's error shape.
 */
export function clientErrorReply(error: { code?: string }): Reply {
  switch (error.code) {
    case "HPE_HEADER_OVERFLOW":
      return { status: 431, body: errorBody("relay_headers_too_large", "The request headers are too large."), close: true };
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return { status: 408, body: errorBody("relay_request_timeout", "The request took too long to arrive."), close: true };
    default:
      return { status: 400, body: errorBody("relay_bad_http", "The request is not valid HTTP/1.1."), close: true };
  }
}

/** A 405 carries the allowed methods as `details.allow`. */
export function methodNotAllowed(allow: string): RelayError {
  return new RelayError("relay_method_not_allowed", `Use ${allow} on this path.`, { allow: allow.split(", ") });
}

export function notFound(what: string): RelayError {
  return new RelayError("relay_not_found", `${what} was not found.`);
}

function allowOf(details: unknown): string {
  const allow = (details as { allow?: unknown } | undefined)?.allow;
  return Array.isArray(allow) ? allow.join(", ") : "";
}

function errorBody(code: string, message: string, details?: unknown): ErrorBody {
  return details === undefined ? { error: { code, message } } : { error: { code, message, details } };
}
