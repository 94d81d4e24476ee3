/**
 * Query strings of the read routes (`GET /v1/audit`, `GET /v1/requests`):
 * each parameter known and given once, `limit` a whole number in its range.
 * Anything else is a 400 naming the parameter, never ignored and never a 5xx:
 * a misspelt `since` would otherwise return the whole log as if filtered.
 */
import { invalidRequest } from "../requests/errors.js";

const WHOLE = /^\d{1,7}$/;

/** The parameters of `query` (the raw text after "?"); throws a 400 naming an unknown or repeated one. */
export function queryParams(query: string, known: readonly string[]): Map<string, string> {
  const params = new Map<string, string>();
  for (const [name, value] of new URLSearchParams(query)) {
    if (!known.includes(name)) {
      throw invalidRequest([{ path: name.slice(0, 100) || "(query)", message: `is not a query parameter of this route (use ${known.join(", ")})` }]);
    }
    if (params.has(name)) throw invalidRequest([{ path: name, message: "give it once" }]);
    params.set(name, value);
  }
  return params;
}

/** `limit`: a whole number from 1 to `max`; `fallback` when absent. */
export function parseLimit(raw: string | undefined, { max, fallback }: { max: number; fallback: number }): number {
  if (raw === undefined) return fallback;
  const limit = WHOLE.test(raw) ? Number(raw) : Number.NaN;
  if (!(limit >= 1 && limit <= max)) throw invalidRequest([{ path: "limit", message: `must be a whole number from 1 to ${max}` }]);
  return limit;
}
