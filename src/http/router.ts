/**
 * A tiny method + path matcher, so adding a route is one `router.add(…)` line.
 * Paths are literal segments or `:name` parameters; no wildcards, no regexes.
 * An unknown path is "not_found"; a known path with another method is
 * "method_not_allowed" with the value of the `Allow` header. HEAD is served by
 * the GET handler (Node leaves the body out).
 */

export type Params = Readonly<Record<string, string>>;

export type Match<H> =
  | { kind: "found"; handler: H; params: Params }
  | { kind: "method_not_allowed"; allow: string }
  | { kind: "not_found" };

interface Pattern<H> {
  /** Literal segments, or `undefined` where a parameter goes. */
  segments: Array<string | undefined>;
  names: string[];
  byMethod: Map<string, H>;
}

const NO_PARAMS: Params = Object.freeze({});

export class Router<H> {
  /** Paths with no parameters, looked up in one step. */
  private readonly literal = new Map<string, Map<string, H>>();
  private readonly patterns: Array<Pattern<H>> = [];

  add(method: string, path: string, handler: H): this {
    const byMethod = path.includes("/:") ? this.pattern(path).byMethod : this.literalPath(path);
    const upper = method.toUpperCase();
    if (byMethod.has(upper)) throw new Error(`route ${upper} ${path} is already registered`);
    byMethod.set(upper, handler);
    return this;
  }

  match(method: string, path: string): Match<H> {
    const literal = this.literal.get(path);
    if (literal) return pick(literal, method, NO_PARAMS);
    const parts = path.split("/");
    for (const pattern of this.patterns) {
      const params = matchSegments(pattern, parts);
      if (params) return pick(pattern.byMethod, method, params);
    }
    return { kind: "not_found" };
  }

  private literalPath(path: string): Map<string, H> {
    let byMethod = this.literal.get(path);
    if (!byMethod) this.literal.set(path, (byMethod = new Map()));
    return byMethod;
  }

  private pattern(path: string): Pattern<H> {
    const segments: Array<string | undefined> = [];
    const names: string[] = [];
    for (const part of path.split("/")) {
      if (part.startsWith(":")) names.push(part.slice(1));
      segments.push(part.startsWith(":") ? undefined : part);
    }
    const shape = (list: Array<string | undefined>) => list.map((s) => s ?? ":").join("/");
    const existing = this.patterns.find((p) => shape(p.segments) === shape(segments));
    if (existing) {
      if (existing.names.join() !== names.join()) throw new Error(`route ${path} names its parameters differently`);
      return existing;
    }
    const created: Pattern<H> = { segments, names, byMethod: new Map() };
    this.patterns.push(created);
    return created;
  }
}

function pick<H>(byMethod: Map<string, H>, method: string, params: Params): Match<H> {
  const handler = byMethod.get(method) ?? (method === "HEAD" ? byMethod.get("GET") : undefined);
  if (handler !== undefined) return { kind: "found", handler, params };
  const allow = [...byMethod.keys()];
  if (byMethod.has("GET") && !byMethod.has("HEAD")) allow.push("HEAD");
  return { kind: "method_not_allowed", allow: allow.join(", ") };
}

/** Parameters of `parts` against `pattern`, or undefined when they do not match. Empty or undecodable values never match. */
function matchSegments<H>(pattern: Pattern<H>, parts: string[]): Params | undefined {
  if (parts.length !== pattern.segments.length) return undefined;
  let params: Record<string, string> | undefined;
  let name = 0;
  for (let i = 0; i < parts.length; i += 1) {
    const segment = pattern.segments[i];
    const part = parts[i]!;
    if (segment !== undefined) {
      if (segment !== part) return undefined;
      continue;
    }
    const value = decode(part);
    if (!value) return undefined;
    (params ??= {})[pattern.names[name++]!] = value;
  }
  return params ?? NO_PARAMS;
}

function decode(part: string): string | undefined {
  if (!part.includes("%")) return part;
  try {
    return decodeURIComponent(part);
  } catch {
    return undefined;
  }
}
