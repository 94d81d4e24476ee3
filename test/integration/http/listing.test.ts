/**
 * GET /v1/requests over HTTP: an admin token lists every request, an agent
 * token only its own, newest first, filtered by `status`, at most `limit`;
 * a 400 naming each bad parameter; 401 without a known token; a 503 (never a
 * 500) when the store is away.
 */
import { describe, expect, it } from "vitest";
import { RequestList } from "../../../src/protocol/operator.js";
import { StoreUnavailableError } from "../../../src/requests/errors.js";
import { createMemoryStore } from "../../../src/store/memory-store.js";
import { bodies, expectInvalidParameter, useApiRelay, type ApiRelay } from "../../helpers/api-relay.js";

const start = useApiRelay();

/** Three requests, oldest first: ci-bot's, laptop's, then ci-bot's again, the last one cancelled. */
async function withRequests(): Promise<{ call: ApiRelay["call"]; ids: string[] }> {
  const { call, service } = await start();
  const ids: string[] = [];
  for (const as of ["ci-bot", "laptop", "ci-bot"]) {
    ids.push((await call("/v1/requests", { json: bodies.stepGate(), as })).body.id as string);
    await new Promise((resolve) => setTimeout(resolve, 3));
  }
  await call(`/v1/requests/${ids[2]}`, { method: "DELETE", as: "ci-bot" });
  await service.idle();
  return { call, ids };
}

const idsOf = (body: { requests: Array<{ id: string }> }) => body.requests.map((r) => r.id);

describe("who sees which requests", () => {
  it("no token → 401", async () => {
    const { call } = await start();
    expect(await call("/v1/requests", { as: null })).toMatchObject({ status: 401, body: { error: { code: "relay_unauthorized" } } });
  });

  it("an admin token lists every request, newest first, as GET shows each", async () => {
    const { call, ids } = await withRequests();
    const { status, body } = await call("/v1/requests", { as: "ops" });
    expect(status).toBe(200);
    expect(RequestList.parse(body)).toStrictEqual(body);
    expect(idsOf(body)).toStrictEqual([ids[2], ids[1], ids[0]]);
    expect(body.requests[1]).toStrictEqual((await call(`/v1/requests/${ids[1]}`, { as: "laptop" })).body);
  });

  it("an agent token lists only its own requests", async () => {
    const { call, ids } = await withRequests();
    expect(idsOf((await call("/v1/requests", { as: "ci-bot" })).body)).toStrictEqual([ids[2], ids[0]]);
    expect(idsOf((await call("/v1/requests", { as: "laptop" })).body)).toStrictEqual([ids[1]]);
  });
});

describe("filters", () => {
  it("`status` lists only the requests in it", async () => {
    const { call, ids } = await withRequests();
    expect(idsOf((await call("/v1/requests?status=pending", { as: "ops" })).body)).toStrictEqual([ids[1], ids[0]]);
    expect(idsOf((await call("/v1/requests?status=cancelled", { as: "ops" })).body)).toStrictEqual([ids[2]]);
    expect(idsOf((await call("/v1/requests?status=answered", { as: "ops" })).body)).toStrictEqual([]);
    expect(idsOf((await call("/v1/requests?status=pending", { as: "ci-bot" })).body)).toStrictEqual([ids[0]]);
  });

  it("`limit` keeps the newest", async () => {
    const { call, ids } = await withRequests();
    expect(idsOf((await call("/v1/requests?limit=1", { as: "ops" })).body)).toStrictEqual([ids[2]]);
    expect(idsOf((await call("/v1/requests?limit=2&status=pending", { as: "ops" })).body)).toStrictEqual([ids[1], ids[0]]);
  });
});

describe("bad parameters → 400 naming the parameter", () => {
  it.each([
    ["status=done", "status"],
    ["status=", "status"],
    ["status=PENDING", "status"],
    ["limit=0", "limit"],
    ["limit=1001", "limit"],
    ["limit=-1", "limit"],
    ["limit=many", "limit"],
    ["wait=5", "wait"],
    ["tokenName=laptop", "tokenName"],
    ["status=pending&status=answered", "status"],
  ])("?%s → 400 on %s", async (query, path) => {
    const { call } = await start();
    expectInvalidParameter(await call(`/v1/requests?${query}`, { as: "ops" }), path);
  });
});

describe("outages", () => {
  it("the store being away → 503 relay_store_unavailable with Retry-After", async () => {
    const store = createMemoryStore();
    const { call } = await start({ store: { ...store, listRequests: () => Promise.reject(new StoreUnavailableError("Redis did not answer listRequests")) } });
    const response = await call("/v1/requests", { as: "ci-bot" });
    expect(response).toMatchObject({ status: 503, body: { error: { code: "relay_store_unavailable" } } });
    expect(response.headers.get("retry-after")).toBe("2");
  });
});
