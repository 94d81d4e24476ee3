import { describe, expect, it } from "vitest";
import { silentLogger } from "../../../src/logger.js";
import type { AuditEntry } from "../../../src/requests/audit.js";
import { CreateLimits, LIMITED_AUDIT_INTERVAL_MS, type CreateLimit } from "../../../src/requests/limits.js";
import { NO_METRICS } from "../../../src/requests/metrics.js";

function limits() {
  const clock = { t: 1_800_000_000_000 };
  const audited: AuditEntry[] = [];
  const counted: Array<[string, CreateLimit]> = [];
  const recorder = new CreateLimits({
    audit: { record: (entry) => audited.push(entry) },
    metrics: { ...NO_METRICS, limited: (token, limit) => counted.push([token, limit]) },
    logger: silentLogger,
    now: () => clock.t,
  });
  return { clock, audited, counted, recorder };
}

describe("a create refused by a limit", () => {
  it("is counted every time, and audited once a minute per token and limit, saying how many more came in between", () => {
    const { clock, audited, counted, recorder } = limits();
    for (let i = 0; i < 5; i += 1) recorder.refused("looping", "too_many_pending", `r${i}`, "200 pending, at most 200");
    recorder.refused("looping", "rate_limited", "req-1", "more than 600 creates a minute");
    recorder.refused("other", "too_many_pending", "r9", "3 pending, at most 3");
    clock.t += LIMITED_AUDIT_INTERVAL_MS;
    recorder.refused("looping", "too_many_pending", "r5", "200 pending, at most 200");
    expect(counted).toHaveLength(8);
    expect(audited.map(({ type, token, requestId, reason }) => ({ type, token, requestId, reason }))).toStrictEqual([
      { type: "limited", token: "looping", requestId: "r0", reason: "too_many_pending: 200 pending, at most 200" },
      { type: "limited", token: "looping", requestId: "req-1", reason: "rate_limited: more than 600 creates a minute" },
      { type: "limited", token: "other", requestId: "r9", reason: "too_many_pending: 3 pending, at most 3" },
      { type: "limited", token: "looping", requestId: "r5", reason: "too_many_pending: 200 pending, at most 200 (and 4 more refused in the minute before)" },
    ]);
  });
});
