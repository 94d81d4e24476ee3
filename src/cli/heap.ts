/**
 * The V8 heap setting a serving relay runs with, applied by `approval-relay
 * serve` (so `npm start`, the Docker image and the installed CLI all get it)
 * before the relay is loaded. V8 lets the old generation grow to as much as
 * four times what was live after the last full collection before it collects
 * again; a relay holding 10,000 long-polls has about 160 MB live, and
 * answering them at a few hundred clicks a second filled the heap with
 * garbage up to 600–700 MB before a collection came (bench: scale).
 * `--heap-growing-percent=30` lets it grow to 1.3 times the live size
 * instead: peak RSS stays well under 400 MB there (50 kept it just under),
 * for a few more full collections, which V8 does mostly off the main thread
 * (README, Performance: latency and throughput with and without it).
 * The flag cannot go in NODE_OPTIONS (node refuses it) and is read by V8 at
 * every collection, so setting it at start works; a value the operator gave
 * node on the command line is kept.
 */

/** Percent the old generation may grow past what was live after a full collection. */
export const HEAP_GROWING_PERCENT = 30;

/** The V8 flags serve sets: none that `execArgv` (the node command line) already sets. */
export function servingV8Flags(execArgv: readonly string[]): string[] {
  const given = execArgv.some((arg) => /^--heap[-_]growing[-_]percent(=|$)/.test(arg));
  return given ? [] : [`--heap-growing-percent=${HEAP_GROWING_PERCENT}`];
}
