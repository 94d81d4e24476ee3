/**
 * Whether a create that names an existing request's idempotency key repeats
 * that request, or asks for another under a key already used. Bodies are
 * compared canonically: object keys in any order, and the key itself left out
 * (it may come in the body or in the Idempotency-Key header). The stored body
 * is the parsed one the first create sent, and both went through the same
 * schema, so a retry compares equal whatever its key order or whitespace on
 * the wire. Both bodies are at hand, so they are compared directly rather
 * than through a stored hash of one.
 */
import type { CreateRequestBody } from "../protocol/request-body.js";

export function sameRequestBody(stored: CreateRequestBody, sent: CreateRequestBody): boolean {
  return canonical(withoutKey(stored)) === canonical(withoutKey(sent));
}

function withoutKey(body: CreateRequestBody): Record<string, unknown> {
  const { idempotencyKey: _key, ...rest } = body;
  return rest;
}

/** JSON with every object's keys sorted; undefined members left out, as JSON does. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((item) => (item === undefined ? "null" : canonical(item))).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const object = value as Record<string, unknown>;
    const members = Object.keys(object)
      .filter((key) => object[key] !== undefined)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonical(object[key])}`);
    return `{${members.join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}
