/**
 * The in-memory audit log against the shared audit log contract, plus what
 * only it has: ids from its own clock that never go back.
 */
import { describe, expect, it } from "vitest";
import { createMemoryAuditLog } from "../../../src/store/memory-audit.js";
import { entry, runAuditLogContract } from "../../helpers/audit-contract.js";

runAuditLogContract("memory", async (options) => createMemoryAuditLog(options));

describe("memory audit log specifics", () => {
  it("takes the time in each id from its clock, and keeps ids increasing when the clock goes back", async () => {
    const clock = { t: 1_800_000_000_000 };
    const log = createMemoryAuditLog({ maxEvents: 10, now: () => clock.t });
    await log.append(entry());
    await log.append(entry());
    clock.t -= 5_000;
    await log.append(entry());
    clock.t += 10_000;
    await log.append(entry());
    expect((await log.read({ limit: 10 })).map((e) => e.id)).toStrictEqual(["1800000000000-0", "1800000000000-1", "1800000000000-2", "1800000005000-0"]);
  });

  it("refuses a cap that is not a positive integer", () => {
    expect(() => createMemoryAuditLog({ maxEvents: 0 })).toThrow(/maxEvents/);
    expect(() => createMemoryAuditLog({ maxEvents: 1.5 })).toThrow(/maxEvents/);
  });
});
