/**
 * The fixed texts agents read for a step gate's n and q (docs/architecture.md §2).
 */
import { describe, expect, it } from "vitest";
import { STEP_GATE_REJECTED, STEP_GATE_STOPPED } from "../../../src/protocol/decisions.js";

describe("step gate texts", () => {
  it("are the fixed English texts agents expect", () => {
    expect(STEP_GATE_REJECTED).toBe("Action rejected by the user in step-by-step mode.");
    expect(STEP_GATE_STOPPED).toBe("Execution stopped manually by the user.");
  });
});
