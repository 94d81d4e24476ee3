/**
 * Turns a parsed JSON value into a CreateRequestBody (the zod schema is the
 * trust boundary) and settles the idempotency key, with 400s that name every
 * offending field ("questions.0.options", "kind", an unknown field's name).
 */
import { depthProblem } from "../protocol/json-depth.js";
import { CreateRequestBody, LIMITS } from "../protocol/request-body.js";
import { fieldProblems, invalidRequest } from "../requests/errors.js";

interface Issue {
  code: string;
  path: PropertyKey[];
  message: string;
  keys?: string[];
}

export function parseCreateBody(value: unknown): CreateRequestBody {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw invalidRequest([{ path: "(body)", message: "the body must be a JSON object" }]);
  }
  const deep = depthProblem(value);
  if (deep) throw invalidRequest([deep]);
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
  if (header.length === 0 || header.length > LIMITS.idempotencyKey) {
    throw invalidRequest([{ path: "Idempotency-Key", message: `must be 1 to ${LIMITS.idempotencyKey} characters` }]);
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
