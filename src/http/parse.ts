/**
 * Turns a parsed JSON value into a CreateRequestBody (the zod schema is the
 * trust boundary) and settles the idempotency key, with 400s that name every
 * offending field ("questions.0.options", "kind", an unknown field's name).
 */
import { fieldProblems, invalidRequest } from "../requests/errors.js";
import { CreateRequestBody } from "../requests/schemas.js";

interface Issue {
  code: string;
  path: PropertyKey[];
  message: string;
  keys?: string[];
}

/** Longest idempotency key, as the body's `idempotencyKey` field allows. */
const MAX_KEY_LENGTH = 255;
/**
 * Deepest nesting accepted anywhere in the body. Tool inputs are shallow; a
 * body nested thousands deep would overflow the stack of every recursive
 * consumer (structuredClone, JSON.stringify, the Slack renderer) and turn bad
 * input into a 5xx.
 */
export const MAX_DEPTH = 64;

export function parseCreateBody(value: unknown): CreateRequestBody {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw invalidRequest([{ path: "(body)", message: "the body must be a JSON object" }]);
  }
  const deep = fieldNestedDeeperThan(value, MAX_DEPTH);
  if (deep !== undefined) throw invalidRequest([{ path: deep, message: `nests deeper than ${MAX_DEPTH} levels` }]);
  return parseCreateSchema(value);
}

/**
 * The schema step alone, for a value already known to be an object within
 * MAX_DEPTH (the Claude Code hook route builds it from a checked hook input).
 */
export function parseCreateSchema(value: object): CreateRequestBody {
  const result = CreateRequestBody.safeParse(value);
  if (result.success) return result.data;
  throw invalidRequest(fieldProblems(result.error.issues.flatMap(readable)));
}

/**
 * The key from the body or the `Idempotency-Key` header; both may be given
 * only if they agree.
 */
export function pickIdempotencyKey(body: CreateRequestBody, header: string | undefined): string | undefined {
  if (header === undefined) return body.idempotencyKey;
  if (header.length === 0 || header.length > MAX_KEY_LENGTH) {
    throw invalidRequest([{ path: "Idempotency-Key", message: `must be 1 to ${MAX_KEY_LENGTH} characters` }]);
  }
  if (body.idempotencyKey !== undefined && body.idempotencyKey !== header) {
    throw invalidRequest([{ path: "idempotencyKey", message: "differs from the Idempotency-Key header; send one key" }]);
  }
  return header;
}

/** One issue per unknown field, named by its path; "required" for a missing one. */
function readable(issue: Issue): Issue[] {
  if (issue.code === "unrecognized_keys" && issue.keys) {
    return issue.keys.map((key) => ({ code: issue.code, path: [...issue.path, key], message: "is not a known field" }));
  }
  if (issue.code === "invalid_type" && issue.message.endsWith("received undefined")) {
    return [{ ...issue, message: `is required (${issue.message.replace(/^Invalid input: |, received undefined$/g, "")})` }];
  }
  return [issue];
}

/**
 * The top-level field under which `root` nests deeper than `max` objects or
 * arrays, or undefined. Iterative, so the check itself cannot overflow.
 */
export function fieldNestedDeeperThan(root: object, max: number): string | undefined {
  const values: object[] = [];
  const depths: number[] = [];
  const fields: string[] = [];
  for (const [key, child] of Object.entries(root)) {
    if (typeof child === "object" && child !== null) {
      values.push(child);
      depths.push(2);
      fields.push(key);
    }
  }
  while (values.length > 0) {
    const value = values.pop()!;
    const depth = depths.pop()!;
    const field = fields.pop()!;
    if (depth > max) return field;
    for (const child of Array.isArray(value) ? value : Object.values(value)) {
      if (typeof child === "object" && child !== null) {
        values.push(child);
        depths.push(depth + 1);
        fields.push(field);
      }
    }
  }
  return undefined;
}
