/**
 * How `approval-relay serve` steers V8's heap growth (src/cli/heap.ts): a
 * small heap keeps V8's own growth, a large one grows by about
 * HEADROOM_BYTES and never less than MIN_PERCENT, decided after each full
 * collection; a setting on node's command line is the operator's.
 */
import { describe, expect, it } from "vitest";
import { governHeap, growingPercentFor, growthGivenOnCommandLine, HEADROOM_BYTES, MIN_PERCENT, type HeapControls } from "../../../src/cli/heap.js";

const MB = 1024 * 1024;

function fakeHeap(usedBytes: number) {
  const flags: string[] = [];
  let listener: (() => void) | undefined;
  let stopped = false;
  const heap = { used: usedBytes };
  const controls: HeapControls = {
    setFlags: (flag) => flags.push(flag),
    usedHeapBytes: () => heap.used,
    onFullGc: (next) => {
      listener = next;
      return () => {
        stopped = true;
      };
    },
  };
  const fullGc = (liveBytes: number) => {
    heap.used = liveBytes;
    listener?.();
  };
  return { controls, flags, fullGc, stopped: () => stopped };
}

describe("growingPercentFor", () => {
  it("leaves a small heap to V8's own growth", () => {
    expect(growingPercentFor(16 * MB)).toBe(0);
    expect(growingPercentFor(HEADROOM_BYTES / 3)).toBe(0);
  });

  it("lets a mid-sized heap grow by about the headroom, rounded up to tens of percent", () => {
    expect(growingPercentFor(HEADROOM_BYTES)).toBe(100);
    expect(growingPercentFor(64 * MB)).toBe(80);
    expect(growingPercentFor(100 * MB)).toBe(50);
  });

  it("never lets a large heap grow by less than MIN_PERCENT", () => {
    expect(growingPercentFor(160 * MB)).toBe(MIN_PERCENT);
    expect(growingPercentFor(1024 * MB)).toBe(MIN_PERCENT);
  });
});

describe("governHeap", () => {
  it("sets the growth after a full collection finds the heap large, and hands it back to V8 once it is small again", () => {
    const heap = fakeHeap(0);
    governHeap(heap.controls);
    heap.fullGc(10 * MB);
    expect(heap.flags).toEqual([]);
    heap.fullGc(100 * MB);
    heap.fullGc(99 * MB);
    expect(heap.flags).toEqual(["--heap-growing-percent=50"]);
    heap.fullGc(10 * MB);
    expect(heap.flags).toEqual(["--heap-growing-percent=50", "--heap-growing-percent=0"]);
  });

  it("stops following the heap when asked", () => {
    const heap = fakeHeap(0);
    const stop = governHeap(heap.controls);
    stop();
    expect(heap.stopped()).toBe(true);
  });
});

describe("growthGivenOnCommandLine", () => {
  it("sees the operator's own setting, in either spelling", () => {
    expect(growthGivenOnCommandLine(["--heap-growing-percent=20"])).toBe(true);
    expect(growthGivenOnCommandLine(["--heap_growing_percent=80"])).toBe(true);
  });

  it("is not fooled by other flags", () => {
    expect(growthGivenOnCommandLine([])).toBe(false);
    expect(growthGivenOnCommandLine(["--import", "./scripts/ensure-build.mjs", "--heap-growing-percentage-report"])).toBe(false);
  });
});
