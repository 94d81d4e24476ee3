/**
 * How the relay signs the callbacks it POSTs to a request's `callbackUrl`, and
 * how a receiver checks them. The key is the secret of the agent token that
 * created the request, so only that agent (and the relay) can make or check a
 * signature:
 *
 *   X-Relay-Timestamp: <Unix seconds when this attempt was sent>
 *   X-Relay-Signature: v1=<hex HMAC-SHA256(token, "v1:" + timestamp + ":" + body)>
 *
 * Each attempt is signed afresh, so a retry hours later still carries a recent
 * timestamp. Only node:crypto here: the client library re-exports this module.
 */
import { createHmac, timingSafeEqual } from "node:crypto";

export const CALLBACK_TIMESTAMP_HEADER = "x-relay-timestamp";
export const CALLBACK_SIGNATURE_HEADER = "x-relay-signature";
export const CALLBACK_REQUEST_ID_HEADER = "x-relay-request-id";
/** How far (seconds) a callback's timestamp may be from the receiver's clock by default. */
export const DEFAULT_CALLBACK_TOLERANCE_SECONDS = 300;

export interface SignCallbackInput {
  /** Secret of the agent token that created the request. */
  token: string;
  /** Unix seconds, as sent in X-Relay-Timestamp. */
  timestamp: number | string;
  /** The exact body sent. */
  body: string | Uint8Array;
}

/** The X-Relay-Signature value for one callback attempt: `v1=<hex>`. */
export function signCallback({ token, timestamp, body }: SignCallbackInput): string {
  return `v1=${hmac(token, String(timestamp), body).toString("hex")}`;
}

export interface VerifyCallbackInput {
  /** Secret of the agent token that created the request. */
  token: string;
  /** X-Relay-Timestamp as received (Unix seconds). */
  timestamp: string | number | null | undefined;
  /** The raw body exactly as received: verify first, parse the JSON after. */
  body: string | Uint8Array;
  /** X-Relay-Signature as received. */
  signature: string | null | undefined;
  /** The receiver's clock, Unix time in milliseconds. Default: Date.now(). */
  now?: number;
  /** Largest accepted distance between `timestamp` and `now`, in seconds. */
  toleranceSeconds?: number;
}

/**
 * true when `signature` is the relay's signature of `body` at `timestamp` with
 * `token`, and `timestamp` is within `toleranceSeconds` of `now` (replays of an
 * old callback are refused). Compares in constant time; never throws.
 */
export function verifyCallbackSignature({
  token,
  timestamp,
  body,
  signature,
  now = Date.now(),
  toleranceSeconds = DEFAULT_CALLBACK_TOLERANCE_SECONDS,
}: VerifyCallbackInput): boolean {
  if (typeof token !== "string" || token.length === 0 || typeof signature !== "string") return false;
  if (typeof body !== "string" && !(body instanceof Uint8Array)) return false;
  const seconds = typeof timestamp === "number" ? String(timestamp) : timestamp;
  if (typeof seconds !== "string" || !/^\d{1,15}$/.test(seconds)) return false;
  if (!(Math.abs(now / 1000 - Number(seconds)) <= toleranceSeconds)) return false;
  const given = /^v1=([0-9a-fA-F]{64})$/.exec(signature.trim())?.[1];
  if (given === undefined) return false;
  return timingSafeEqual(Buffer.from(given, "hex"), hmac(token, seconds, body));
}

function hmac(token: string, timestamp: string, body: string | Uint8Array): Buffer {
  return createHmac("sha256", token).update(`v1:${timestamp}:`).update(body).digest();
}
