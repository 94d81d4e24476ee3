/**
 * GET /v1/audit over HTTP: admin tokens only (401 without a known token, 403
 * for an agent token), events oldest first with ISO times, pages with
 * `next` / `after`, filters by `since` and `requestId`, a 400 naming each
 * bad parameter, and a 503 (never a 500) when the audit log is away.
 */
import { describe, expect, it } from "vitest";
import type { AuditLog } from "../../../src/requests/audit.js";
import type { AuditRecord } from "../../../src/requests/audit-trail.js";
import { StoreUnavailableError } from "../../../src/requests/errors.js";
import { createMemoryAuditLog } from "../../../src/store/memory-audit.js";
import { AuditReply } from "../../../src/protocol/operator.js";
import { bodies, DEFAULT_CHANNEL, expectInvalidParameter, useApiRelay, type ApiRelay } from "../../helpers/api-relay.js";
import { ALICE, MALLORY } from "../../fixtures/people.js";

const start = useApiRelay();

const T0 = Date.parse("2026-12-01T09:00:00Z");
const events: AuditRecord[] = [
  { type: "created", requestId: "req-a", at: T0, token: "ci-bot", kind: "permission", channel: "C0123456789" },
  { type: "posted", requestId: "req-a", at: T0 + 1000, channel: "C0123456789" },
  { type: "created", requestId: "req-b", at: T0 + 2000, token: "laptop", kind: "step_gate" },
  { type: "refused", requestId: "req-a", at: T0 + 3000, person: MALLORY, reason: "not an approver" },
  { type: "answered", requestId: "req-a", at: T0 + 4000, person: ALICE, status: "answered", reason: "allowed" },
];

async function withEvents(): Promise<ApiRelay> {
  const started = await start();
  for (const event of events) await started.audit.record(event);
  return started;
}

const admin = { as: "ops" } as const;

describe("who may read the audit", () => {
  it("no token → 401", async () => {
    const { call } = await start();
    expect(await call("/v1/audit", { as: null })).toMatchObject({ status: 401, body: { error: { code: "relay_unauthorized" } } });
  });

  it("an unknown token → 401", async () => {
    const { call } = await start();
    const response = await call("/v1/audit", { as: null, headers: { authorization: "Bearer tok_nobody_000000000000000000" } });
    expect(response).toMatchObject({ status: 401, body: { error: { code: "relay_unauthorized" } } });
  });

  it("an agent token → 403 relay_forbidden, saying an admin token is needed", async () => {
    const { call } = await withEvents();
    const response = await call("/v1/audit", { as: "ci-bot" });
    expect(response).toMatchObject({ status: 403, body: { error: { code: "relay_forbidden" } } });
    expect(response.body.error.message).toContain("RELAY_ADMIN_TOKENS");
    expect(JSON.stringify(response.body)).not.toContain("req-a");
  });

  it("an agent token is refused before the query is looked at", async () => {
    const { call } = await start();
    expect((await call("/v1/audit?limit=0", { as: "ci-bot" })).status).toBe(403);
  });

  it("another method → 405 with Allow: GET, HEAD", async () => {
    const { call } = await start();
    const response = await call("/v1/audit", { ...admin, json: {} });
    expect(response.status).toBe(405);
    expect(response.headers.get("allow")).toBe("GET, HEAD");
  });
});

describe("reading the audit with an admin token", () => {
  it("returns every event oldest first, with its id, an ISO 8601 time and its fields, and no `next` when all fit", async () => {
    const { call } = await withEvents();
    const { status, body } = await call("/v1/audit", admin);
    expect(status).toBe(200);
    expect(AuditReply.parse(body)).toStrictEqual(body);
    expect(body.next).toBeUndefined();
    expect(body.events.map((e: { type: string }) => e.type)).toStrictEqual(["created", "posted", "created", "refused", "answered"]);
    expect(body.events[3]).toStrictEqual({
      id: expect.stringMatching(/^\d+-\d+$/),
      at: "2026-12-01T09:00:03.000Z",
      type: "refused",
      requestId: "req-a",
      person: MALLORY,
      reason: "not an approver",
    });
  });

  it("pages with `limit`: `next` names the cursor, `after` reads on, the last page has no `next`", async () => {
    const { call } = await withEvents();
    const first = (await call("/v1/audit?limit=2", admin)).body;
    expect(first.events).toHaveLength(2);
    expect(first.next).toBe(first.events[1].id);
    const second = (await call(`/v1/audit?limit=2&after=${first.next}`, admin)).body;
    expect(second.events.map((e: { type: string }) => e.type)).toStrictEqual(["created", "refused"]);
    const last = (await call(`/v1/audit?limit=2&after=${second.next}`, admin)).body;
    expect(last).toStrictEqual({ events: [expect.objectContaining({ type: "answered" })] });
  });

  it("reads one request's events with `requestId`", async () => {
    const { call } = await withEvents();
    const { body } = await call("/v1/audit?requestId=req-b", admin);
    expect(body.events).toStrictEqual([expect.objectContaining({ type: "created", requestId: "req-b", token: "laptop" })]);
  });

  it("takes `since` as an ISO 8601 time, a date or Unix milliseconds, all of the events appended since", async () => {
    const { call } = await withEvents();
    const all = (await call("/v1/audit", admin)).body.events as Array<{ id: string }>;
    const appendedMs = Number(all[0]!.id.split("-")[0]);
    const iso = new Date(appendedMs).toISOString();
    for (const since of [String(appendedMs), encodeURIComponent(iso), "2020-01-01"]) {
      expect((await call(`/v1/audit?since=${since}`, admin)).body.events).toHaveLength(5);
    }
    expect((await call(`/v1/audit?since=${appendedMs + 3_600_000}`, admin)).body).toStrictEqual({ events: [] });
    expect((await call(`/v1/audit?since=${encodeURIComponent("2999-01-01T00:00:00+02:00")}`, admin)).body).toStrictEqual({ events: [] });
  });

  it("shows what the relay recorded of a request's life: created, posted, cancelled by its agent", async () => {
    const { call, service } = await start();
    const { id } = (await call("/v1/requests", { json: bodies.stepGate(), as: "ci-bot" })).body;
    await service.idle();
    await call(`/v1/requests/${id}`, { method: "DELETE", as: "ci-bot" });
    await service.idle();
    const { body } = await call(`/v1/audit?requestId=${id}`, admin);
    expect(body.events.map((e: { type: string }) => e.type)).toStrictEqual(["created", "posted", "cancelled"]);
    expect(body.events[0]).toMatchObject({ requestId: id, token: "ci-bot", kind: "step_gate", channel: DEFAULT_CHANNEL });
    expect(body.events[2]).toMatchObject({ status: "cancelled" });
  });

  it("an empty audit is an empty list", async () => {
    const { call } = await start();
    expect(await call("/v1/audit", admin)).toMatchObject({ status: 200, body: { events: [] } });
  });

  it("the audit log being away → 503 relay_store_unavailable with Retry-After", async () => {
    const away: AuditLog = {
      append: () => Promise.reject(new StoreUnavailableError("down")),
      read: () => Promise.reject(new StoreUnavailableError("Redis did not answer audit read within 2000 ms")),
      drops: () => Promise.reject(new StoreUnavailableError("down")),
      close: async () => {},
    };
    const { call } = await start({ auditLog: away });
    const response = await call("/v1/audit", admin);
    expect(response).toMatchObject({ status: 503, body: { error: { code: "relay_store_unavailable" } } });
    expect(response.headers.get("retry-after")).toBe("2");
  });
});

describe("bad parameters → 400 naming the parameter", () => {
  it.each([
    ["since=yesterday", "since"],
    ["since=-5", "since"],
    ["since=2026-12-01T09:00:00", "since"],
    ["since=2026-13-01", "since"],
    ["since=", "since"],
    ["since=99999999999999999", "since"],
    ["after=abc", "after"],
    ["after=1796000000000", "after"],
    ["after=", "after"],
    ["limit=0", "limit"],
    ["limit=1001", "limit"],
    ["limit=1.5", "limit"],
    ["limit=ten", "limit"],
    ["limit=", "limit"],
    ["requestId=", "requestId"],
    [`requestId=${"r".repeat(201)}`, "requestId"],
    ["sinse=2026-12-01", "sinse"],
    ["wait=5", "wait"],
    ["limit=1&limit=2", "limit"],
    ["since=2026-12-01&since=2026-12-02", "since"],
  ])("?%s → 400 on %s", async (query, path) => {
    const { call } = await withEvents();
    expectInvalidParameter(await call(`/v1/audit?${query}`, admin), path);
  });

  it("the largest limit, 1000, is taken", async () => {
    const { call } = await withEvents();
    expect((await call("/v1/audit?limit=1000", admin)).body.events).toHaveLength(5);
  });
});

describe("an audit trail agents cannot flush", () => {
  it("a person's answer stays in GET /v1/audit after another token creates and cancels 60 requests, and the reply says what the cap kept out", async () => {
    const relay = await start({ auditLog: createMemoryAuditLog({ maxEvents: 100 }) });
    const created = await relay.call("/v1/requests", { as: "ci-bot", json: bodies.stepGate() });
    const id = String(created.body.id);
    await relay.service.answer(id, { reply: "y" }, ALICE);
    for (let i = 0; i < 60; i += 1) {
      const noise = await relay.call("/v1/requests", { as: "laptop", json: bodies.stepGate() });
      expect((await relay.call(`/v1/requests/${String(noise.body.id)}`, { as: "laptop", method: "DELETE" })).status).toBe(200);
    }
    await relay.service.idle();
    const mine = await relay.call(`/v1/audit?requestId=${id}`, admin);
    expect((mine.body as AuditReply).events.map((event) => event.type)).toEqual(expect.arrayContaining(["created", "answered"]));
    const dropped = (mine.body as AuditReply).dropped;
    expect(dropped?.events).toBeGreaterThan(0);
    expect(dropped?.reason).toContain("RELAY_AUDIT_MAX_EVENTS");
    expect(dropped?.causes).toStrictEqual([{ reason: "cap", events: dropped!.events, from: dropped!.from, to: dropped!.to }]);
  });

  it("says nothing was dropped when nothing was", async () => {
    const { call } = await withEvents();
    expect((await call("/v1/audit", admin)).body).not.toHaveProperty("dropped");
  });
});
