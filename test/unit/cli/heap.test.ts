/**
 * The V8 heap setting `approval-relay serve` applies (src/cli/heap.ts): set
 * unless the node command line already chose a value.
 */
import { describe, expect, it } from "vitest";
import { HEAP_GROWING_PERCENT, servingV8Flags } from "../../../src/cli/heap.js";

describe("servingV8Flags", () => {
  it("limits the old generation's growth when node was started without a setting of its own", () => {
    expect(servingV8Flags([])).toEqual([`--heap-growing-percent=${HEAP_GROWING_PERCENT}`]);
    expect(servingV8Flags(["--import", "./scripts/ensure-build.mjs"])).toEqual([`--heap-growing-percent=${HEAP_GROWING_PERCENT}`]);
  });

  it("keeps the value the operator gave node, in either spelling", () => {
    expect(servingV8Flags(["--heap-growing-percent=20"])).toEqual([]);
    expect(servingV8Flags(["--heap_growing_percent=80"])).toEqual([]);
  });

  it("is not fooled by another flag that merely starts the same way", () => {
    expect(servingV8Flags(["--heap-growing-percentage-report"])).toEqual([`--heap-growing-percent=${HEAP_GROWING_PERCENT}`]);
  });
});
