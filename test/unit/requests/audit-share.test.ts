/**
 * Each agent token's share of RELAY_AUDIT_MAX_EVENTS (src/requests/audit.ts
 * tokenShareOf): the cap shared out evenly, the shares adding up to at most
 * the cap, and never less than one event.
 */
import { describe, expect, it } from "vitest";
import { tokenShareOf } from "../../../src/requests/audit.js";

describe("an agent token's share of the audit log's cap", () => {
  it.each([
    [100, 2, 50],
    [100, 3, 33],
    [50_000, 10, 5_000],
    [50_000, 1, 50_000],
    // Local mode: RELAY_TOKENS unset, the relay makes its one token.
    [50_000, 0, 50_000],
    [100, 500, 1],
  ])("a cap of %i and %i agent tokens → %i each", (cap, tokens, share) => {
    expect(tokenShareOf(cap, tokens)).toBe(share);
    if (tokens > 0 && tokens <= cap) expect(share * tokens).toBeLessThanOrEqual(cap);
  });
});
