/**
 * Callback signatures: what the relay sends verifies with the exported helper
 * and with a receiver's own HMAC; any change to the body, the timestamp, the
 * token or the header, and any stale timestamp, fails.
 */
import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { signCallback, verifyCallbackSignature } from "../../../src/protocol/callback-signature.js";

const TOKEN = "tok_ci_0123456789abcdef0123";
const NOW_MS = 1_800_000_123_456;
const TIMESTAMP = "1800000123";
const BODY = '{"id":"req-1","kind":"step_gate","status":"answered","decision":{"reply":"y"},"note":"é🚀"}';

const signed = () => signCallback({ token: TOKEN, timestamp: TIMESTAMP, body: BODY });
const verify = (overrides: Partial<Parameters<typeof verifyCallbackSignature>[0]> = {}) =>
  verifyCallbackSignature({ token: TOKEN, timestamp: TIMESTAMP, body: BODY, signature: signed(), now: NOW_MS, ...overrides });

describe("callback signature", () => {
  it("is v1= and the hex HMAC-SHA256 of 'v1:<timestamp>:<body>' keyed with the agent token, as a receiver computes it", () => {
    const independent = createHmac("sha256", TOKEN).update(`v1:${TIMESTAMP}:${BODY}`, "utf8").digest("hex");
    expect(signed()).toBe(`v1=${independent}`);
  });

  it("verifies with the helper, from a string or from the raw bytes, and with a numeric timestamp", () => {
    expect(verify()).toBe(true);
    expect(verify({ body: Buffer.from(BODY, "utf8") })).toBe(true);
    expect(verify({ body: new TextEncoder().encode(BODY) })).toBe(true);
    expect(verify({ timestamp: Number(TIMESTAMP) })).toBe(true);
  });

  it("fails when one character of the body changes", () => {
    expect(verify({ body: BODY.replace('"y"', '"n"') })).toBe(false);
    expect(verify({ body: `${BODY} ` })).toBe(false);
  });

  it("fails when the timestamp is changed, even within the tolerance", () => {
    expect(verify({ timestamp: String(Number(TIMESTAMP) + 1) })).toBe(false);
  });

  it("fails with another token", () => {
    expect(verify({ token: "tok_laptop_fedcba9876543210" })).toBe(false);
    expect(verify({ token: "" })).toBe(false);
  });

  it("fails when the signature is altered, truncated, of another version, or missing", () => {
    const good = signed();
    const flipped = good.slice(0, -1) + (good.endsWith("0") ? "1" : "0");
    for (const signature of [flipped, good.slice(0, -2), good.replace("v1=", "v0="), good.slice(3), "", "v1=zz", null, undefined]) {
      expect(verify({ signature }), String(signature)).toBe(false);
    }
  });

  it("accepts a timestamp up to the tolerance away and refuses one further, in the past or the future", () => {
    const at = (offsetSeconds: number) => verify({ now: Number(TIMESTAMP) * 1000 + offsetSeconds * 1000 });
    expect(at(300)).toBe(true);
    expect(at(-300)).toBe(true);
    expect(at(301)).toBe(false);
    expect(at(-301)).toBe(false);
    expect(verify({ now: Number(TIMESTAMP) * 1000 + 3_600_000, toleranceSeconds: 3600 })).toBe(true);
  });

  it("refuses a timestamp that is not whole Unix seconds", () => {
    for (const timestamp of ["", "1800000123.5", "-1800000123", "1e9", " 1800000123", null, undefined]) {
      const signature = signCallback({ token: TOKEN, timestamp: String(timestamp), body: BODY });
      expect(verify({ timestamp, signature }), String(timestamp)).toBe(false);
    }
  });
});
