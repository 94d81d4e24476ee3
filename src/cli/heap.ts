/**
 * How far V8 lets a serving relay's heap grow, set by `approval-relay serve`
 * (so `npm start`, the Docker image and the installed CLI all get it). After
 * a full collection V8 lets the old generation grow to as much as four times
 * what was live before it collects again. A relay holding 10,000 long-polls
 * has about 160 MB live; answering them at a few hundred clicks a second
 * filled the heap with garbage up to 600–700 MB of RSS before a collection
 * came (bench: scale). A fixed `--heap-growing-percent=30` kept that peak
 * near 350 MB, but on a small, busy heap it made full collections many times
 * as frequent as they need to be.
 *
 * So the growth follows the heap: after each full collection, what is live
 * decides the next limit, as about HEADROOM_BYTES beyond it (never less than
 * MIN_PERCENT more): a small heap keeps V8's own growth (cheap), a large one
 * grows by a bounded amount (30 % from 160 MB live, the 10,000-pending case). The flag cannot go in NODE_OPTIONS (node refuses
 * it); V8 reads it at every collection, so setting it while running works. A
 * value the operator gave node on the command line is kept, untouched.
 */

/** What a heap may grow by past what was live after a full collection, in bytes (at least MIN_PERCENT of it). */
export const HEADROOM_BYTES = 48 * 1024 * 1024;
/** The least growth, in percent of the live heap. */
export const MIN_PERCENT = 30;
/** From this growth up, V8's own choice (at most 300 %, four times) is left alone: the heap is small. */
const V8_OWN_FROM_PERCENT = 300;

/** What serve needs of V8 (node:v8 and perf_hooks; fakes in tests). */
export interface HeapControls {
  /** node:v8 setFlagsFromString. */
  setFlags: (flags: string) => void;
  /** Bytes in use in the V8 heap now (v8.getHeapStatistics().used_heap_size). */
  usedHeapBytes: () => number;
  /** Calls `listener` after each full (mark-compact) collection; returns a function that stops it. */
  onFullGc: (listener: () => void) => () => void;
}

/** true when the node command line sets the heap growth itself. */
export function growthGivenOnCommandLine(execArgv: readonly string[]): boolean {
  return execArgv.some((arg) => /^--heap[-_]growing[-_]percent(=|$)/.test(arg));
}

/** The --heap-growing-percent for `liveBytes` live after a full collection; 0 leaves V8 its own (a small heap). */
export function growingPercentFor(liveBytes: number): number {
  const percent = Math.ceil((HEADROOM_BYTES / Math.max(liveBytes, 1)) * 10) * 10;
  if (percent >= V8_OWN_FROM_PERCENT) return 0;
  return Math.max(MIN_PERCENT, percent);
}

/** Follows the live heap after every full collection and sets V8's growth to match; returns a function that stops. */
export function governHeap(controls: HeapControls): () => void {
  let current = 0;
  return controls.onFullGc(() => {
    const next = growingPercentFor(controls.usedHeapBytes());
    if (next === current) return;
    current = next;
    controls.setFlags(`--heap-growing-percent=${next}`);
  });
}
