/**
 * Regular expressions written by agents (InteractiveQuestion `pattern`) run
 * against text typed by people. A hostile or careless pattern must never
 * stall the relay, so every match runs in a VM context with a time limit.
 */
import vm from "node:vm";

/** How long one pattern match may run before it counts as a failure (ms). */
export const PATTERN_TIMEOUT_MS = 50;

const context = vm.createContext({ re: /./u, s: "" });
const script = new vm.Script("re.test(s)");

export function isValidPattern(pattern: string): boolean {
  try {
    new RegExp(pattern, "u");
    return true;
  } catch {
    return false;
  }
}

export type PatternResult = "match" | "no_match" | "timeout";

/** The whole value must match, as with HTML's `pattern` attribute. */
export function matchPattern(pattern: string, value: string): PatternResult {
  context.re = new RegExp(`^(?:${pattern})$`, "u");
  context.s = value;
  try {
    return script.runInContext(context, { timeout: PATTERN_TIMEOUT_MS }) === true ? "match" : "no_match";
  } catch {
    return "timeout";
  }
}
