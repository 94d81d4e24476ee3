/**
 * One HTTP exchange with the relay, sorted into what the caller can do with
 * it: a reply to use; a failure worth retrying (the relay is down or
 * restarting, a 408/429/5xx, a reply that is not what the API promises); or a
 * refusal no retry can fix (any other 4xx, and a 429 that says the agent
 * token is at its pending cap or over its create rate: retrying at once only
 * adds to it), thrown at once as a RelayClientError with the relay's
 * Retry-After.
 */
import { ErrorReply } from "../protocol/request-view.js";
import { abortError, RelayClientError } from "./errors.js";
import type { FetchLike } from "./types.js";

export interface Failure {
  ok: false;
  code: "relay_unreachable" | "relay_bad_reply";
  reason: string;
  /** The relay's Retry-After, in milliseconds. */
  retryAfterMs?: number;
}
export type Attempt<T> = { ok: true; value: T } | Failure;

export interface Exchange {
  method: "GET" | "POST" | "DELETE";
  /** Base URL of the relay, no trailing slash. */
  base: string;
  /** Path and query, starting with "/". */
  path: string;
  token: string;
  body?: unknown;
  headers?: Record<string, string>;
  /** The attempt counts as failed (and is retried) after this many milliseconds. */
  timeoutMs: number;
  /** Aborting rejects with an AbortError. */
  signal?: AbortSignal;
}

/** Parses a 2xx JSON reply; undefined when it is not the expected shape. */
export type ReplyParser<T> = (json: unknown, status: number) => T | undefined;

const RETRYABLE = new Set([408, 425, 429]);
/** The relay's 429s that a retry at once cannot fix: the caller is told (code, details, Retry-After). */
const LIMITS = new Set(["relay_too_many_pending", "relay_rate_limited"]);

export async function exchange<T>(fetch: FetchLike, request: Exchange, parse: ReplyParser<T>): Promise<Attempt<T>> {
  if (request.signal?.aborted) throw abortError(request.signal);
  const timeout = AbortSignal.timeout(request.timeoutMs);
  const signal = request.signal ? AbortSignal.any([request.signal, timeout]) : timeout;
  const headers: Record<string, string> = { authorization: `Bearer ${request.token}`, accept: "application/json", ...request.headers };
  if (request.body !== undefined) headers["content-type"] = "application/json";
  let status: number;
  let text: string;
  let retryAfter: string | null;
  try {
    const response = await fetch(`${request.base}${request.path}`, {
      method: request.method,
      headers,
      body: request.body === undefined ? null : JSON.stringify(request.body),
      signal,
    });
    status = response.status;
    retryAfter = response.headers.get("retry-after");
    text = await response.text();
  } catch (error) {
    if (request.signal?.aborted) throw abortError(request.signal);
    if (timeout.aborted) return unreachable(`no reply within ${Math.round(request.timeoutMs / 1000)} seconds`);
    return unreachable(networkReason(error));
  }
  const json = parseJson(text);
  if (status >= 200 && status < 300) {
    const value = json === undefined ? undefined : parse(json.value, status);
    if (value !== undefined) return { ok: true, value };
    return { ok: false, code: "relay_bad_reply", reason: `the relay's ${status} reply is not the JSON the API promises` };
  }
  const limit = status === 429 ? ErrorReply.safeParse(json?.value).data?.error : undefined;
  if (limit && LIMITS.has(limit.code)) throw refusal(status, json?.value, parseRetryAfter(retryAfter));
  if (status >= 500 || RETRYABLE.has(status)) {
    const failure = unreachable(`HTTP ${status}${errorSummary(json?.value)}`);
    const retryAfterMs = parseRetryAfter(retryAfter);
    return retryAfterMs === undefined ? failure : { ...failure, retryAfterMs };
  }
  throw refusal(status, json?.value);
}

/** A ReplyParser from a zod schema. */
export function parseWith<T>(schema: { safeParse(value: unknown): { success: true; data: T } | { success: false } }): ReplyParser<T> {
  return (json) => {
    const result = schema.safeParse(json);
    return result.success ? result.data : undefined;
  };
}

function unreachable(reason: string): Failure {
  return { ok: false, code: "relay_unreachable", reason };
}

function parseJson(text: string): { value: unknown } | undefined {
  try {
    return { value: JSON.parse(text) as unknown };
  } catch {
    return undefined;
  }
}

function refusal(status: number, json: unknown, retryAfterMs?: number): RelayClientError {
  const reply = ErrorReply.safeParse(json);
  if (reply.success) {
    const { code, message, details } = reply.data.error;
    return new RelayClientError(code, `${message} (HTTP ${status})`, status, details, retryAfterMs);
  }
  return new RelayClientError(`relay_http_${status}`, `the relay answered HTTP ${status}`, status);
}

function errorSummary(json: unknown): string {
  const reply = ErrorReply.safeParse(json);
  return reply.success ? `: ${reply.data.error.message}` : "";
}

function networkReason(error: unknown): string {
  const cause = error instanceof Error ? (error.cause as { code?: unknown; message?: unknown } | undefined) : undefined;
  if (cause && typeof cause.message === "string" && cause.message !== "") return cause.message;
  if (cause && typeof cause.code === "string") return cause.code;
  return error instanceof Error ? error.message : String(error);
}

function parseRetryAfter(value: string | null): number | undefined {
  if (value === null || !/^\d{1,5}$/.test(value.trim())) return undefined;
  return Number(value.trim()) * 1000;
}
