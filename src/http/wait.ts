/**
 * The `?wait=S` query parameter of the long-poll routes: S seconds, an integer
 * or a decimal between 0 and the configured maximum. Anything else is a 400
 * naming the "wait" field, never a silent default.
 */
import { invalidRequest } from "../requests/errors.js";

const SECONDS = /^\d{1,6}(?:\.\d{1,6})?$/;

/**
 * The wait the query asks for, in milliseconds, or undefined when it asks for
 * none. `query` is the raw text after "?" (may be empty).
 */
export function parseWait(query: string, maxSeconds: number): number | undefined {
  if (query === "" || !query.includes("wait")) return undefined;
  const values = new URLSearchParams(query).getAll("wait");
  if (values.length === 0) return undefined;
  const raw = values[0]!;
  if (values.length > 1) throw badWait("give wait once");
  if (!SECONDS.test(raw)) throw badWait(`must be a number of seconds between 0 and ${maxSeconds}`);
  const seconds = Number(raw);
  if (seconds > maxSeconds) throw badWait(`must be at most ${maxSeconds} seconds`);
  return Math.round(seconds * 1000);
}

function badWait(message: string) {
  return invalidRequest([{ path: "wait", message }]);
}
