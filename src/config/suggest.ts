/**
 * "Did you mean …?" for a config file's unknown keys (issue 20): the known
 * key closest to a typo, by Levenshtein distance (fastest-levenshtein) over
 * the keys as written in any case, so `METRICS_TOKN` finds METRICS_TOKEN and
 * `metrics_token` does too. And the keys a schema knows at a key path, read
 * from the zod schema itself, so a suggestion never drifts from what the
 * file accepts.
 */
import { distance } from "fastest-levenshtein";
import type { z } from "zod";

/** The known key closest to `typed`, when it is close enough to be what was meant; undefined when none is. */
export function closestKey(typed: string, known: readonly string[]): string | undefined {
  const wanted = typed.toLowerCase();
  let best: { key: string; cost: number } | undefined;
  for (const key of known) {
    const candidate = key.toLowerCase();
    // A key cut short or run on ("timeout" for timeoutSeconds) is what was meant, however many letters are missing.
    const cost = wanted.length >= 3 && (candidate.startsWith(wanted) || wanted.startsWith(candidate)) ? 0.5 : distance(wanted, candidate);
    if (best === undefined || cost < best.cost) best = { key, cost };
  }
  // Up to a third of the letters wrong (at least one): beyond that a suggestion is a guess.
  return best && best.cost <= Math.max(1, Math.floor(wanted.length / 3)) ? best.key : undefined;
}

/** The keys an object schema at `path` below `schema` takes (through optional, array, union and pipe); [] when there is none. */
export function knownKeysAt(schema: z.core.$ZodType, path: readonly PropertyKey[]): string[] {
  const found = new Set<string>();
  const visit = (node: z.core.$ZodType, rest: readonly PropertyKey[]): void => {
    const def = node._zod.def as unknown as Record<string, unknown> & { type: string };
    switch (def.type) {
      case "optional":
      case "nullable":
      case "default":
        return visit(def.innerType as z.core.$ZodType, rest);
      case "pipe":
        return visit(def.in as z.core.$ZodType, rest);
      case "union":
        return (def.options as z.core.$ZodType[]).forEach((option) => visit(option, rest));
      case "array":
        if (rest.length > 0 && typeof rest[0] === "number") visit(def.element as z.core.$ZodType, rest.slice(1));
        return;
      case "object": {
        const shape = def.shape as Record<string, z.core.$ZodType>;
        if (rest.length === 0) Object.keys(shape).forEach((key) => found.add(key));
        else if (typeof rest[0] === "string" && Object.hasOwn(shape, rest[0])) visit(shape[rest[0]]!, rest.slice(1));
        return;
      }
      default:
        return;
    }
  };
  visit(schema, path);
  return [...found];
}
