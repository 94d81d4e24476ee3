/**
 * Regular expressions written by agents (InteractiveQuestion `pattern`) run
 * against text typed by people. They run on RE2JS, a port of RE2 (RE2
 * syntax, https://github.com/google/re2/wiki/Syntax), which matches in time
 * linear in the input: no pattern can backtrack, so no time limit is needed
 * and a valid answer is never refused because the machine is busy.
 *
 * What RE2 cannot run (backreferences, lookaround) and patterns whose
 * compiled program is larger than PATTERN_MAX_PROGRAM_SIZE are refused when
 * the request is created, with the reason. The size cap bounds the cost of a
 * match: the first match of a pattern at the cap (`.{0,499}`) costs about
 * 50 ms on one core, ordinary patterns well under 1 ms.
 *
 * Patterns are compiled for each check, not cached: compiling is cheap, and
 * a compiled RE2JS keeps a DFA cache of up to 8 MB that a long-lived cache
 * of agent-chosen patterns would multiply.
 */
import { RE2JS } from "re2js";

/** Largest compiled program a pattern may have (RE2 instructions; `x{1000}` has 1,002). */
export const PATTERN_MAX_PROGRAM_SIZE = 1000;

/** A compiled pattern, or why the pattern cannot be used. */
type Compiled = { ok: true; re: RE2JS } | { ok: false; reason: string };

function compile(pattern: string): Compiled {
  let re: RE2JS;
  try {
    re = RE2JS.compile(pattern);
  } catch (error) {
    return { ok: false, reason: explain(error instanceof Error ? error.message : String(error)) };
  }
  const size = re.programSize();
  if (size > PATTERN_MAX_PROGRAM_SIZE) {
    return {
      ok: false,
      reason: `pattern is too large to check quickly (${size} RE2 instructions, at most ${PATTERN_MAX_PROGRAM_SIZE}): use smaller repeat counts`,
    };
  }
  return { ok: true, re };
}

/** RE2's syntax error as one line for the agent, naming what RE2 does not support. */
function explain(message: string): string {
  const detail = message.replace(/^error parsing regexp: /, "");
  if (/`\(\?[=!]/.test(detail) || /`\(\?<[=!]/.test(detail)) {
    return `pattern uses lookaround ((?=, (?!, (?<=, (?<!), which RE2 syntax does not support: ${detail}`;
  }
  if (/escape sequence: `\\([1-9]|k)/.test(detail)) {
    return `pattern uses a backreference (\\1, \\k<name>), which RE2 syntax does not support: ${detail}`;
  }
  return `pattern is not a valid RE2 regular expression: ${detail}`;
}

/** Why `pattern` cannot be used, or undefined when it can. */
export function patternProblem(pattern: string): string | undefined {
  const compiled = compile(pattern);
  return compiled.ok ? undefined : compiled.reason;
}

export function isValidPattern(pattern: string): boolean {
  return patternProblem(pattern) === undefined;
}

/**
 * Whether the whole value matches, as with HTML's `pattern` attribute; false
 * for a pattern that cannot be used (those are refused at create).
 */
export function matchPattern(pattern: string, value: string): boolean {
  const compiled = compile(pattern);
  return compiled.ok && compiled.re.testExact(value);
}
