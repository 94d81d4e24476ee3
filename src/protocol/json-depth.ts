/**
 * How deeply a JSON value nests, measured without recursion. Tool inputs are
 * shallow; a body nested thousands deep (well within the 1 MB limit) would
 * overflow the stack of every recursive consumer (structuredClone,
 * JSON.stringify, the Slack renderer) and turn bad input into a 5xx. The
 * relay refuses request bodies and hook inputs that nest deeper than
 * MAX_DEPTH, and Slack shows deeper values compact.
 */

/** Deepest nesting accepted anywhere in a request body or hook input (objects and arrays, the body itself is 1). */
export const MAX_DEPTH = 64;

/**
 * The top-level field under which `root` nests deeper than `max` objects or
 * arrays (`root` itself counts as one), or undefined.
 */
export function fieldNestedDeeperThan(root: object, max: number): string | undefined {
  const stack: Array<{ value: object; depth: number; field: string }> = [];
  for (const [key, child] of Object.entries(root)) {
    if (typeof child === "object" && child !== null) stack.push({ value: child, depth: 2, field: key });
  }
  while (stack.length > 0) {
    const { value, depth, field } = stack.pop()!;
    if (depth > max) return field;
    for (const child of Array.isArray(value) ? value : Object.values(value)) {
      if (typeof child === "object" && child !== null) stack.push({ value: child, depth: depth + 1, field });
    }
  }
  return undefined;
}

/** true when `value` nests deeper than `max` objects or arrays (a plain value nests 0 deep). */
export function nestsDeeperThan(value: unknown, max: number): boolean {
  if (typeof value !== "object" || value === null) return max < 0;
  return max < 1 || fieldNestedDeeperThan(value, max) !== undefined;
}

/** The field problem of a body that nests deeper than MAX_DEPTH (path: the top-level field), or undefined. */
export function depthProblem(root: object): { path: string; message: string } | undefined {
  const field = fieldNestedDeeperThan(root, MAX_DEPTH);
  return field === undefined ? undefined : { path: field, message: `nests deeper than ${MAX_DEPTH} levels` };
}
