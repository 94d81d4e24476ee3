/**
 * AuditTrail: recording logs the event and appends it, never throws (a failed
 * append is a warn line), cuts an overlong reason; reading pages with a
 * `next` cursor; idle() waits for appends in flight. Runs on the real memory
 * audit log; a log that fails is a stand-in for Redis being away.
 */
import { describe, expect, it } from "vitest";
import { createLogger } from "../../../src/logger.js";
import type { AuditEntry, AuditLog } from "../../../src/requests/audit.js";
import { AuditTrail, toAuditView } from "../../../src/requests/audit-trail.js";
import { StoreUnavailableError } from "../../../src/requests/errors.js";
import { createMemoryAuditLog } from "../../../src/store/memory-audit.js";
import { ALICE } from "../../fixtures/people.js";

const T0 = 1_800_000_000_000;

function trail(log: AuditLog = createMemoryAuditLog({ maxEvents: 100, now: () => T0 })) {
  const lines: Array<Record<string, unknown>> = [];
  const logger = createLogger({ level: "debug", write: (line) => lines.push(JSON.parse(line) as Record<string, unknown>) });
  return { trail: new AuditTrail({ log, logger, now: () => T0 + 5 }), log, lines };
}

const unavailable: AuditLog = {
  append: () => Promise.reject(new StoreUnavailableError("Redis did not answer audit append within 2000 ms")),
  read: () => Promise.reject(new StoreUnavailableError("down")),
  drops: () => Promise.reject(new StoreUnavailableError("down")),
  close: async () => {},
};

describe("recording", () => {
  it("hands every event to the export too, with its time, when the log refuses or fails to append it", async () => {
    const exported: AuditEntry[] = [];
    const audit = new AuditTrail({ log: unavailable, export: { write: (entry) => exported.push(entry), close: async () => {} }, now: () => T0 + 5 });
    await audit.record({ type: "answered", requestId: "req-1", person: { id: "U0ALICE" }, status: "answered" });
    await audit.record({ type: "posted", requestId: "req-2", at: T0 });
    expect(exported).toStrictEqual([
      { type: "answered", requestId: "req-1", person: { id: "U0ALICE" }, status: "answered", at: T0 + 5 },
      { type: "posted", requestId: "req-2", at: T0 },
    ]);
  });

  it("appends the event, timed by the trail's clock when it gives no time, and writes one log line naming it", async () => {
    const { trail: audit, log, lines } = trail();
    await audit.record({ type: "answered", requestId: "req-1", token: "ci-bot", person: ALICE, status: "answered" });
    expect(await log.read({ limit: 10 })).toStrictEqual([
      { id: `${T0}-0`, at: T0 + 5, type: "answered", requestId: "req-1", token: "ci-bot", person: ALICE, status: "answered" },
    ]);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      level: "info",
      msg: "audit: answered",
      event: "answered",
      requestId: "req-1",
      tokenName: "ci-bot",
      person: { id: ALICE.id },
    });
    expect(lines[0]).not.toHaveProperty("token");
  });

  it("keeps the time the caller gives", async () => {
    const { trail: audit, log } = trail();
    await audit.record({ type: "created", requestId: "req-1", at: T0 - 1000 });
    expect((await log.read({ limit: 1 }))[0]!.at).toBe(T0 - 1000);
  });

  it("cuts a reason longer than the log keeps to 2000 characters, ending in an ellipsis, and still appends it", async () => {
    const { trail: audit, log } = trail();
    await audit.record({ type: "refused", requestId: "req-1", reason: "x".repeat(5000) });
    const [event] = await log.read({ limit: 1 });
    expect(event!.reason).toHaveLength(2000);
    expect(event!.reason!.endsWith("x…")).toBe(true);
  });

  it("when the append fails, resolves all the same and logs a warning after the event's own line", async () => {
    const { trail: audit, lines } = trail(unavailable);
    await expect(audit.record({ type: "expired", requestId: "req-9", status: "expired" })).resolves.toBeUndefined();
    expect(lines.map((l) => [l.level, l.msg])).toStrictEqual([
      ["info", "audit: expired"],
      ["warn", "an audit event was not appended to the audit log (it is in the relay's log only)"],
    ]);
    expect(lines[1]).toMatchObject({ event: "expired", requestId: "req-9" });
  });

  it("an entry the log refuses (an unknown type) is a warning, not an error", async () => {
    const { trail: audit, log, lines } = trail();
    await audit.record({ type: "deployed" as "created", requestId: "req-1" });
    expect(await log.read({ limit: 10 })).toStrictEqual([]);
    expect(lines.at(-1)).toMatchObject({ level: "warn", event: "deployed" });
  });

  it("idle() resolves only once every append in flight has settled", async () => {
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    const slow: AuditLog = { append: () => held, read: async () => [], drops: async () => undefined, close: async () => {} };
    const { trail: audit } = trail(slow);
    void audit.record({ type: "posted", requestId: "req-1" });
    let idle = false;
    const waiting = audit.idle().then(() => (idle = true));
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(idle).toBe(false);
    release();
    await waiting;
    expect(idle).toBe(true);
  });
});

describe("reading", () => {
  it("pages through every event with the `next` cursor; the last page has none", async () => {
    const { trail: audit } = trail();
    for (let i = 0; i < 5; i += 1) await audit.record({ type: "created", requestId: `req-${i}` });
    const first = await audit.read({ limit: 2 });
    expect(first.events.map((e) => e.requestId)).toStrictEqual(["req-0", "req-1"]);
    expect(first.next).toBe(first.events[1]!.id);
    const second = await audit.read({ limit: 2, after: first.next! });
    expect(second.events.map((e) => e.requestId)).toStrictEqual(["req-2", "req-3"]);
    const last = await audit.read({ limit: 2, after: second.next! });
    expect(last).toStrictEqual({ events: [expect.objectContaining({ requestId: "req-4" })] });
  });

  it("a page that holds exactly the events left has no `next`", async () => {
    const { trail: audit } = trail();
    for (let i = 0; i < 3; i += 1) await audit.record({ type: "created", requestId: `req-${i}` });
    expect((await audit.read({ limit: 3 })).next).toBeUndefined();
  });

  it("passes the log's outage on to the caller", async () => {
    await expect(trail(unavailable).trail.read({ limit: 10 })).rejects.toBeInstanceOf(StoreUnavailableError);
  });
});

describe("toAuditView", () => {
  it("shows the time in ISO 8601 and every other field as it is", () => {
    expect(toAuditView({ id: `${T0}-3`, at: T0, type: "cancelled", requestId: "req-1", reason: "agent" })).toStrictEqual({
      id: `${T0}-3`,
      at: "2027-01-15T08:00:00.000Z",
      type: "cancelled",
      requestId: "req-1",
      reason: "agent",
    });
  });
});
