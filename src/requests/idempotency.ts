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
import { createHash } from "node:crypto";
import type { CreateRequestBody } from "../protocol/request-body.js";

export function sameRequestBody(stored: CreateRequestBody, sent: CreateRequestBody): boolean {
  return canonical(withoutKey(stored)) === canonical(withoutKey(sent));
}

function withoutKey(body: CreateRequestBody): Record<string, unknown> {
  const { idempotencyKey: _key, ...rest } = body;
  return rest;
}

/**
 * What a tool-call request asks, as a key (CreateOptions.sameAs): a second
 * pending request from the same token and agent session, of the same kind,
 * for the same tool with the same input (compared canonically) joins the
 * first instead of being posted again (an agent repeating a tool call).
 * Undefined, so never joined, for a request that names no agent session
 * (two agents on one token may ask the same thing: only a session says it
 * is one agent repeating itself), for question kinds (nothing repeats there but
 * the question), and for a create with an idempotency key (it names its
 * request itself, unless it is a Claude Code hook call's, which joins) or a
 * callback URL (the callback would be lost).
 */
export function askKey(tokenName: string, body: CreateRequestBody, { idempotencyKey, joinOnKey = false }: AskKeyOptions = {}): string | undefined {
  if ((idempotencyKey !== undefined && !joinOnKey) || body.callbackUrl !== undefined) return undefined;
  if (body.kind !== "permission" && body.kind !== "step_gate") return undefined;
  const session = body.agent?.sessionId;
  if (session === undefined) return undefined;
  const asked = canonical([tokenName, session, body.kind, body.toolName, body.input]);
  return createHash("sha256").update(asked).digest("hex");
}

export interface AskKeyOptions {
  idempotencyKey?: string;
  /** The create joins what its key names whatever the body (a Claude Code hook call): it joins what asks the same too. */
  joinOnKey?: boolean;
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
