/**
 * The relay's metrics module: each family under its exact name and type, the
 * recorders the service, the WebClient and the store are given, the gauges
 * read on each scrape (the store once per scrape, its last counts kept when it
 * fails), and one registry per relay.
 */
import { describe, expect, it } from "vitest";
import { DECISION_BUCKETS, RelayMetrics, type MetricsSources } from "../../../src/http/metrics.js";
import { createLogger } from "../../../src/logger.js";
import { StoreUnavailableError } from "../../../src/requests/errors.js";
import type { StoreCounts } from "../../../src/requests/store.js";
import { answered, askRecord, cancelled, ENDED_AT, expired, permissionRecord, stepGateRecord } from "../../fixtures/records.js";
import { familyTypes, sample } from "../../helpers/metrics.js";

const FAMILIES = {
  relay_requests_created_total: "counter",
  relay_requests_ended_total: "counter",
  relay_requests_pending: "gauge",
  relay_decision_seconds: "histogram",
  relay_waiters: "gauge",
  relay_slack_calls_total: "counter",
  relay_slack_queue_depth: "gauge",
  relay_store_errors_total: "counter",
  relay_callback_queue_depth: "gauge",
};

/** Sources whose numbers a test sets; `counts` answers what `next` says. */
function sources(next: () => Promise<StoreCounts> = async () => ({ pending: 0, callbacks: 0 })) {
  let asked = 0;
  const state = { waiting: 0, held: 0, hookWaiting: 0, depth: 0 };
  const watched: MetricsSources = {
    service: {
      get waiting() {
        return state.waiting;
      },
    },
    hookCalls: {
      get held() {
        return state.held;
      },
      get waiting() {
        return state.hookWaiting;
      },
    },
    queue: { depth: () => state.depth },
    store: {
      counts: () => {
        asked += 1;
        return next();
      },
    },
  };
  return { state, watched, asked: () => asked };
}

describe("the relay's metrics", () => {
  it("declares every family under its exact name and type, with the process and Node.js defaults", async () => {
    const types = familyTypes(await new RelayMetrics().expose());
    for (const [name, type] of Object.entries(FAMILIES)) expect(types.get(name), name).toBe(type);
    for (const name of ["process_cpu_user_seconds_total", "process_resident_memory_bytes", "nodejs_heap_size_used_bytes", "nodejs_eventloop_lag_seconds"]) {
      expect(types.has(name), name).toBe(true);
    }
  });

  it("states its content type as the Prometheus text format", () => {
    expect(new RelayMetrics().contentType).toBe("text/plain; version=0.0.4; charset=utf-8");
  });

  it("counts requests created by kind and ended by kind and status, every kind and status shown from zero", async () => {
    const metrics = new RelayMetrics();
    let text = await metrics.expose();
    expect(sample(text, "relay_requests_created_total", { kind: "interactive_questions" })).toBe(0);
    expect(sample(text, "relay_requests_ended_total", { kind: "ask_user_question", status: "failed" })).toBe(0);
    const permission = permissionRecord();
    metrics.requests.created(permission);
    metrics.requests.created(stepGateRecord());
    metrics.requests.created(permissionRecord());
    metrics.requests.ended(expired(permission));
    metrics.requests.ended(cancelled(askRecord()));
    text = await metrics.expose();
    expect(sample(text, "relay_requests_created_total", { kind: "permission" })).toBe(2);
    expect(sample(text, "relay_requests_created_total", { kind: "step_gate" })).toBe(1);
    expect(sample(text, "relay_requests_ended_total", { kind: "permission", status: "expired" })).toBe(1);
    expect(sample(text, "relay_requests_ended_total", { kind: "ask_user_question", status: "cancelled" })).toBe(1);
    expect(sample(text, "relay_requests_ended_total", { kind: "permission", status: "answered" })).toBe(0);
  });

  it("observes the seconds from post to decision of answered requests only, in buckets from a second to a day", async () => {
    const metrics = new RelayMetrics();
    const posted = { postedAt: ENDED_AT - 45_000 };
    metrics.requests.ended(answered(permissionRecord({}, posted), { behavior: "allow", updatedInput: {} }));
    metrics.requests.ended(answered(permissionRecord({}, { postedAt: ENDED_AT - 2 * 3600_000 }), { behavior: "deny", message: "no" }));
    // Answered at once by the relay (never posted), and ended some other way: no decision time.
    metrics.requests.ended(answered(permissionRecord(), { behavior: "allow", updatedInput: {} }));
    metrics.requests.ended(expired(permissionRecord({}, posted)));
    const text = await metrics.expose();
    expect(sample(text, "relay_decision_seconds_count")).toBe(2);
    expect(sample(text, "relay_decision_seconds_sum")).toBe(45 + 7200);
    expect(sample(text, "relay_decision_seconds_bucket", { le: "30" })).toBe(0);
    expect(sample(text, "relay_decision_seconds_bucket", { le: "60" })).toBe(1);
    expect(sample(text, "relay_decision_seconds_bucket", { le: "7200" })).toBe(2);
    expect(DECISION_BUCKETS[0]).toBe(1);
    expect(DECISION_BUCKETS.at(-1)).toBe(86_400);
  });

  it("counts Slack calls by method and outcome, and store outages", async () => {
    const metrics = new RelayMetrics();
    metrics.slackCall("chat.postMessage", "ok");
    metrics.slackCall("chat.postMessage", "ok");
    metrics.slackCall("chat.postMessage", "ratelimited");
    metrics.slackCall("views.open", "error");
    metrics.storeOutage(new StoreUnavailableError("Redis GET failed: Connection is closed."));
    const text = await metrics.expose();
    expect(sample(text, "relay_slack_calls_total", { method: "chat.postMessage", outcome: "ok" })).toBe(2);
    expect(sample(text, "relay_slack_calls_total", { method: "chat.postMessage", outcome: "ratelimited" })).toBe(1);
    expect(sample(text, "relay_slack_calls_total", { method: "views.open", outcome: "error" })).toBe(1);
    expect(sample(text, "relay_store_errors_total")).toBe(1);
  });

  it("reads the held calls, the Slack queue and the store's counts on each scrape, asking the store once for both of its gauges", async () => {
    const metrics = new RelayMetrics();
    let counts = { pending: 4, callbacks: 2 };
    const { state, watched, asked } = sources(async () => counts);
    expect(sample(await metrics.expose(), "relay_waiters")).toBe(0);
    metrics.watch(watched);
    // Three waits in the service, two of them hook calls; a third hook call is still creating its request.
    Object.assign(state, { waiting: 3, held: 3, hookWaiting: 2, depth: 7 });
    let text = await metrics.expose();
    expect(sample(text, "relay_waiters")).toBe(4);
    expect(sample(text, "relay_slack_queue_depth")).toBe(7);
    expect(sample(text, "relay_requests_pending")).toBe(4);
    expect(sample(text, "relay_callback_queue_depth")).toBe(2);
    expect(asked()).toBe(1);
    counts = { pending: 1, callbacks: 0 };
    Object.assign(state, { waiting: 0, held: 1, hookWaiting: 0, depth: 0 });
    text = await metrics.expose();
    expect(sample(text, "relay_waiters")).toBe(1);
    expect(sample(text, "relay_requests_pending")).toBe(1);
    expect(sample(text, "relay_callback_queue_depth")).toBe(0);
    expect(asked()).toBe(2);
  });

  it("when the store fails, the scrape still answers and its gauges keep their last values; an error that is no outage is logged", async () => {
    const logs: string[] = [];
    const metrics = new RelayMetrics({ logger: createLogger({ level: "debug", write: (line) => logs.push(line) }) });
    const answers: Array<() => Promise<StoreCounts>> = [
      async () => ({ pending: 6, callbacks: 1 }),
      async () => Promise.reject(new StoreUnavailableError("Redis ZCARD failed: Connection is closed.")),
      async () => Promise.reject(new TypeError("a bug")),
    ];
    metrics.watch(sources(() => answers.shift()!()).watched);
    for (let scrape = 0; scrape < 3; scrape += 1) {
      const text = await metrics.expose();
      expect(sample(text, "relay_requests_pending"), `scrape ${scrape}`).toBe(6);
      expect(sample(text, "relay_callback_queue_depth"), `scrape ${scrape}`).toBe(1);
    }
    expect(logs.filter((line) => line.includes('"level":"warn"')).map((line) => JSON.parse(line).msg)).toStrictEqual([
      "metrics: reading the store's counts failed; the gauges keep their last values",
    ]);
  });

  it("two relays in one process keep their own counts", async () => {
    const [one, other] = [new RelayMetrics(), new RelayMetrics()];
    one.requests.created(stepGateRecord());
    expect(sample(await one.expose(), "relay_requests_created_total", { kind: "step_gate" })).toBe(1);
    expect(sample(await other.expose(), "relay_requests_created_total", { kind: "step_gate" })).toBe(0);
  });
});
