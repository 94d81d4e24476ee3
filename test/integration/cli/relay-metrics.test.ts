/**
 * GET /metrics of the relay as `npm start` wires it (src/main.ts) on Redis:
 * METRICS_TOKEN guards it; the Slack calls the relay makes (the bot token
 * check, the post, the update after a click) are counted by the client it
 * builds; an agent's request moves the counters, the held long-poll shows in
 * relay_waiters and the shared store's pending requests in
 * relay_requests_pending.
 */
import { randomUUID } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { Action } from "../../../src/slack/ids.js";
import { AGENT_TOKEN, startFullRelay, type FullRelay } from "../../helpers/full-relay.js";
import { sample } from "../../helpers/metrics.js";
import { connectTestRedis, deleteKeysUnder, REDIS_TEST_URL } from "../../helpers/redis.js";
import { until } from "../../helpers/until.js";

const METRICS_TOKEN = "metrics-scraper-0123456789abcdef";
const AUTH = { authorization: `Bearer ${AGENT_TOKEN.token}`, "content-type": "application/json" };

let relay: FullRelay | undefined;
let prefix: string;
afterEach(async () => {
  await relay?.close();
  relay = undefined;
  const redis = connectTestRedis();
  await deleteKeysUnder(redis, prefix);
  await redis.quit();
});

async function metricsText(authorization = `Bearer ${METRICS_TOKEN}`): Promise<string> {
  const response = await fetch(`${relay!.url}/metrics`, { headers: { authorization } });
  expect(response.status).toBe(200);
  return response.text();
}

describe("the relay's /metrics as npm start wires it", () => {
  it("with METRICS_TOKEN set, refuses a scrape without it and counts what the relay does with Slack, the store and its agents", async () => {
    prefix = `test-metrics-${randomUUID().slice(0, 8)}`;
    relay = await startFullRelay({ env: { REDIS_URL: REDIS_TEST_URL, REDIS_PREFIX: prefix, METRICS_TOKEN } });
    const refused = await fetch(`${relay.url}/metrics`);
    expect(refused.status).toBe(401);
    expect(await refused.json()).toMatchObject({ error: { code: "relay_unauthorized" } });

    let text = await metricsText();
    expect(sample(text, "relay_slack_calls_total", { method: "auth.test", outcome: "ok" })).toBe(1);
    expect(sample(text, "relay_requests_pending")).toBe(0);

    const created = await fetch(`${relay.url}/v1/requests`, {
      method: "POST",
      headers: AUTH,
      body: JSON.stringify({ kind: "permission", toolName: "Bash", input: { command: "make deploy" } }),
    });
    const { id } = (await created.json()) as { id: string };
    const message = await relay.message(0);
    const polling = fetch(`${relay.url}/v1/requests/${id}?wait=20`, { headers: AUTH });
    await until(() => relay!.service.waiting === 1, 2000, "the long-poll to be held");
    text = await metricsText();
    expect(sample(text, "relay_requests_created_total", { kind: "permission" })).toBe(1);
    expect(sample(text, "relay_requests_pending")).toBe(1);
    expect(sample(text, "relay_waiters")).toBe(1);
    expect(sample(text, "relay_slack_calls_total", { method: "chat.postMessage", outcome: "ok" })).toBe(1);

    await relay.click(message, Action.allow);
    expect(((await (await polling).json()) as { status: string }).status).toBe("answered");
    await relay.updated(message);
    await until(async () => sample(await metricsText(), "relay_slack_calls_total", { method: "chat.update", outcome: "ok" }) === 1, 2000, "the update's count");
    text = await metricsText();
    expect(sample(text, "relay_requests_ended_total", { kind: "permission", status: "answered" })).toBe(1);
    expect(sample(text, "relay_decision_seconds_count")).toBe(1);
    expect(sample(text, "relay_requests_pending")).toBe(0);
    expect(sample(text, "relay_waiters")).toBe(0);
    expect(sample(text, "relay_store_errors_total")).toBe(0);
  });
});
