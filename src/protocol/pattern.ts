/**
 * Regular expressions written by agents (InteractiveQuestion `pattern`) run
 * against text typed by people. A hostile or careless pattern must never
 * stall the relay, so every match runs in a VM context with a time limit,
 * and all matches made for one request body or one submission share one
 * budget (PATTERN_BUDGET_MS): twenty slow patterns cost at most the budget,
 * not twenty time limits. Each pattern is compiled once and kept in a small
 * cache, so a stored request never recompiles what was checked at create.
 */
import vm from "node:vm";

/** How long one pattern match may run before it counts as a failure (ms). */
export const PATTERN_TIMEOUT_MS = 50;
/** How long all the matches for one body or one submission may run together (ms). */
export const PATTERN_BUDGET_MS = 100;
/** Compiled patterns kept; past this the oldest is dropped (patterns are at most 1,000 characters). */
const CACHE_SIZE = 1000;

const context = vm.createContext({ re: /./u, s: "" });
const script = new vm.Script("re.test(s)");
const compiled = new Map<string, RegExp | null>();

/** The anchored RegExp for `pattern`, or null when it is not a valid regular expression. */
function compile(pattern: string): RegExp | null {
  const cached = compiled.get(pattern);
  if (cached !== undefined) return cached;
  let re: RegExp | null;
  try {
    new RegExp(pattern, "u");
    re = new RegExp(`^(?:${pattern})$`, "u");
  } catch {
    re = null;
  }
  if (compiled.size >= CACHE_SIZE) compiled.delete(compiled.keys().next().value as string);
  compiled.set(pattern, re);
  return re;
}

export function isValidPattern(pattern: string): boolean {
  return compile(pattern) !== null;
}

/** "over_budget": the shared budget was spent before this match could run. */
export type PatternResult = "match" | "no_match" | "timeout" | "over_budget";

/** The whole value must match, as with HTML's `pattern` attribute. */
export function matchPattern(pattern: string, value: string, timeoutMs: number = PATTERN_TIMEOUT_MS): PatternResult {
  const re = compile(pattern);
  if (re === null) return "no_match";
  context.re = re;
  context.s = value;
  try {
    return script.runInContext(context, { timeout: Math.max(1, Math.ceil(timeoutMs)) }) === true ? "match" : "no_match";
  } catch {
    return "timeout";
  } finally {
    context.s = "";
  }
}

/**
 * The time all pattern matches of one body or one submission may take
 * together; each match gets what is left, capped at PATTERN_TIMEOUT_MS.
 */
export class PatternBudget {
  private spent = 0;

  constructor(private readonly totalMs: number = PATTERN_BUDGET_MS) {}

  match(pattern: string, value: string): PatternResult {
    const left = this.totalMs - this.spent;
    if (left < 1) return "over_budget";
    const started = performance.now();
    try {
      return matchPattern(pattern, value, Math.min(PATTERN_TIMEOUT_MS, left));
    } finally {
      this.spent += performance.now() - started;
    }
  }
}
