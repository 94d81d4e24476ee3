/**
 * GET /metrics over HTTP: the Prometheus text format with every family,
 * open without METRICS_TOKEN and 401 in the relay's error shape without it
 * when it is set; the counters move as agents create requests and people
 * answer them, and the gauges show the store (every instance's requests),
 * the calls held on this instance, and keep their last values through a
 * store outage, which relay_store_errors_total counts.
 */
import { randomUUID } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { RelayMetrics } from "../../../src/http/metrics.js";
import type { RequestStore } from "../../../src/requests/store.js";
import { createMemoryStore } from "../../../src/store/memory-store.js";
import { connectRedisStore, createRedisStore } from "../../../src/store/redis-store.js";
import { hookFixture } from "../../fixtures/claude-code.js";
import { ALICE } from "../../fixtures/people.js";
import { permissionRecord, stepGateRecord } from "../../fixtures/records.js";
import { bodies, TOKENS, useApiRelay, type ApiRelay } from "../../helpers/api-relay.js";
import { familyTypes, sample } from "../../helpers/metrics.js";
import { uniquePrefix, useTestRedis } from "../../helpers/redis.js";
import { startRedisServer, type RedisServer } from "../../helpers/redis-server.js";
import { until } from "../../helpers/until.js";

const start = useApiRelay();
const METRICS_TOKEN = "metrics-scraper-0123456789abcdef";

const FAMILIES = [
  "relay_requests_created_total",
  "relay_requests_ended_total",
  "relay_requests_pending",
  "relay_decision_seconds",
  "relay_waiters",
  "relay_slack_calls_total",
  "relay_slack_queue_depth",
  "relay_store_errors_total",
  "relay_callback_queue_depth",
  "relay_queue_entries_total",
];

/** GET /metrics as Prometheus would, with `authorization` when given. */
async function scrape(relay: ApiRelay, authorization?: string) {
  const response = await fetch(`${relay.url}/metrics`, authorization === undefined ? {} : { headers: { authorization } });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

/** The fields of a request another instance created just now. */
function elsewhere() {
  return { id: randomUUID(), createdAt: Date.now(), expiresAt: Date.now() + 600_000 };
}

async function metricsText(relay: ApiRelay, authorization?: string): Promise<string> {
  const { status, text } = await scrape(relay, authorization);
  expect(status).toBe(200);
  return text;
}

describe("GET /metrics without METRICS_TOKEN", () => {
  it("answers without a token in the Prometheus text format, with every family and the process and Node.js metrics", async () => {
    const relay = await start({ metrics: new RelayMetrics() });
    const { status, headers, text } = await scrape(relay);
    expect(status).toBe(200);
    expect(headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
    expect(headers.get("cache-control")).toBe("no-store");
    const types = familyTypes(text);
    for (const name of FAMILIES) expect(types.has(name), name).toBe(true);
    expect(types.get("process_cpu_user_seconds_total")).toBe("counter");
    expect(types.get("nodejs_heap_size_used_bytes")).toBe("gauge");
  });

  it("takes GET only: another method → 405 with Allow: GET, HEAD", async () => {
    const relay = await start({ metrics: new RelayMetrics() });
    const response = await fetch(`${relay.url}/metrics`, { method: "POST" });
    expect(response.status).toBe(405);
    expect(response.headers.get("allow")).toBe("GET, HEAD");
    expect((await response.json()) as unknown).toMatchObject({ error: { code: "relay_method_not_allowed" } });
  });

  it("a relay built without metrics has no /metrics (404)", async () => {
    const relay = await start();
    expect((await scrape(relay)).status).toBe(404);
  });
});

describe("GET /metrics with METRICS_TOKEN", () => {
  const withToken = () => start({ metrics: new RelayMetrics(), http: { metricsToken: METRICS_TOKEN } });

  it("answers the scraper that sends it as a bearer token", async () => {
    const relay = await withToken();
    expect(familyTypes(await metricsText(relay, `Bearer ${METRICS_TOKEN}`)).has("relay_waiters")).toBe(true);
  });

  it.each([
    ["no Authorization header", undefined],
    ["a wrong token", "Bearer metrics-scraper-0123456789abcdeX"],
    ["an agent token", `Bearer ${TOKENS[0]!.token}`],
    ["the token without the Bearer scheme", METRICS_TOKEN],
    ["the token as Basic credentials", `Basic ${Buffer.from(`prometheus:${METRICS_TOKEN}`).toString("base64")}`],
  ])("%s → 401 relay_unauthorized in the relay's error shape, with WWW-Authenticate: Bearer and no metrics", async (_case, authorization) => {
    const relay = await withToken();
    const { status, headers, text } = await scrape(relay, authorization);
    expect(status).toBe(401);
    expect(headers.get("www-authenticate")).toBe("Bearer");
    expect(JSON.parse(text)).toStrictEqual({ error: { code: "relay_unauthorized", message: expect.stringContaining("METRICS_TOKEN") } });
    expect(text).not.toContain("relay_requests");
  });
});

describe("what the counters and gauges show", () => {
  it("an agent's requests move the created and ended counters and the pending gauge; an answer after the post is a decision time", async () => {
    const relay = await start({ metrics: new RelayMetrics() });
    const first = await relay.call("/v1/requests", { json: bodies.bashPermission() });
    const second = await relay.call("/v1/requests", { json: bodies.stepGate() });
    let text = await metricsText(relay);
    expect(sample(text, "relay_requests_created_total", { kind: "permission" })).toBe(1);
    expect(sample(text, "relay_requests_created_total", { kind: "step_gate" })).toBe(1);
    expect(sample(text, "relay_requests_pending")).toBe(2);

    await until(async () => (await relay.service.get(first.body.id))?.postedAt !== undefined, 2000, "the post");
    await relay.service.answer(first.body.id, { behavior: "allow", updatedInput: {} }, ALICE);
    expect((await relay.call(`/v1/requests/${second.body.id}`, { method: "DELETE" })).status).toBe(200);
    text = await metricsText(relay);
    expect(sample(text, "relay_requests_ended_total", { kind: "permission", status: "answered" })).toBe(1);
    expect(sample(text, "relay_requests_ended_total", { kind: "step_gate", status: "cancelled" })).toBe(1);
    expect(sample(text, "relay_requests_pending")).toBe(0);
    expect(sample(text, "relay_decision_seconds_count")).toBe(1);
    expect(sample(text, "relay_decision_seconds_bucket", { le: "+Inf" })).toBe(1);
  });

  it("a repeated create with the same idempotency key counts once", async () => {
    const relay = await start({ metrics: new RelayMetrics() });
    const body = bodies.stepGate({ idempotencyKey: "deploy-42" });
    expect((await relay.call("/v1/requests", { json: body })).status).toBe(201);
    expect((await relay.call("/v1/requests", { json: body })).status).toBe(200);
    expect(sample(await metricsText(relay), "relay_requests_created_total", { kind: "step_gate" })).toBe(1);
  });

  it("the pending and callback gauges show the store, with requests other instances created", async () => {
    const store = createMemoryStore();
    const relay = await start({ store, metrics: new RelayMetrics() });
    await store.create(stepGateRecord({}, elsewhere()));
    const withCallback = permissionRecord({ callbackUrl: "https://hooks.example.com/relay" }, elsewhere());
    await store.create(withCallback);
    let text = await metricsText(relay);
    expect(sample(text, "relay_requests_pending")).toBe(2);
    expect(sample(text, "relay_callback_queue_depth")).toBe(0);
    expect(sample(text, "relay_requests_created_total", { kind: "step_gate" })).toBe(0);
    await relay.service.cancel(withCallback.id, "ci-bot");
    text = await metricsText(relay);
    expect(sample(text, "relay_requests_pending")).toBe(1);
    expect(sample(text, "relay_callback_queue_depth")).toBe(1);
  });

  it("relay_waiters counts each held long-poll and Claude Code hook call once, and drops as they end", async () => {
    const relay = await start({ metrics: new RelayMetrics() });
    const created = await relay.call("/v1/requests", { json: bodies.stepGate() });
    const stop = new AbortController();
    const polling = relay.call(`/v1/requests/${created.body.id}?wait=30`, { signal: stop.signal }).catch(() => undefined);
    const hook = relay.call("/v1/hooks/claude-code", { json: hookFixture("pre-tool-use"), signal: stop.signal }).catch(() => undefined);
    await until(() => relay.service.waiting === 2, 2000, "both calls to be held");
    expect(sample(await metricsText(relay), "relay_waiters")).toBe(2);
    stop.abort();
    await Promise.all([polling, hook]);
    await until(async () => sample(await metricsText(relay), "relay_waiters") === 0, 2000, "the held calls to end");
  });
});

describe("on Redis", () => {
  const testRedis = useTestRedis();

  it("relay_requests_pending is this relay's view of the shared store: another instance's requests count", async () => {
    const [redis, prefix] = [testRedis.redis(), testRedis.prefix()];
    const other: RequestStore = createRedisStore({ redis, prefix });
    const relay = await start({ store: createRedisStore({ redis, prefix }), metrics: new RelayMetrics() });
    await relay.call("/v1/requests", { json: bodies.stepGate() });
    await other.create(stepGateRecord({}, elsewhere()));
    const text = await metricsText(relay);
    expect(sample(text, "relay_requests_pending")).toBe(2);
    expect(sample(text, "relay_requests_created_total", { kind: "step_gate" })).toBe(1);
    await other.close();
  });
});

describe("through a store outage", () => {
  let server: RedisServer | undefined;
  afterEach(async () => {
    await server?.stop();
    server = undefined;
  });

  it("the scrape still answers, the store's gauges keep their last values and relay_store_errors_total counts each failed call", async () => {
    server = await startRedisServer();
    const metrics = new RelayMetrics();
    const store = connectRedisStore(server.url, { prefix: uniquePrefix(), onUnavailable: metrics.storeOutage });
    const relay = await start({ store, metrics });
    const created = await relay.call("/v1/requests", { json: bodies.stepGate() });
    await until(async () => (await relay.service.get(created.body.id))?.slack !== undefined, 2000, "the post");
    let text = await metricsText(relay);
    expect(sample(text, "relay_requests_pending")).toBe(1);
    expect(sample(text, "relay_store_errors_total")).toBe(0);

    await server.stop();
    server = undefined;
    text = await metricsText(relay);
    expect(sample(text, "relay_requests_pending")).toBe(1);
    expect(sample(text, "relay_store_errors_total")).toBe(1);
    expect((await relay.call(`/v1/requests/${created.body.id}`)).status).toBe(503);
    text = await metricsText(relay);
    expect(sample(text, "relay_requests_pending")).toBe(1);
    expect(sample(text, "relay_store_errors_total")).toBe(3);
  });
});
