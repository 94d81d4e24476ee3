import { Agent, request } from "node:http";
import { connect } from "node:net";
import { App, HTTPReceiver, LogLevel } from "@slack/bolt";
import { afterEach, describe, expect, it } from "vitest";
import { ROUTES } from "../../../src/http/api.js";
import { SERVER_TIMEOUTS } from "../../../src/http/server.js";
import { NOT_READY_REASONS } from "../../../src/http/routes/health.js";
import { silentLogger } from "../../../src/logger.js";
import { buildRelay } from "../../../src/main.js";
import { createMemoryStore } from "../../../src/store/memory-store.js";
import { bodies, startApiRelay, type ApiRelayOptions, type ApiRelay } from "../../helpers/api-relay.js";
import { FakeMessenger } from "../../helpers/fake-messenger.js";
import { relayConfig } from "../../helpers/relay-config.js";
import { sign } from "../../helpers/slack.js";

let relay: ApiRelay | undefined;
afterEach(async () => {
  await relay?.close();
  relay = undefined;
});

async function start(options: ApiRelayOptions = {}) {
  relay = await startApiRelay(options);
  return relay;
}

function raw(url: string, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(Number(new URL(url).port), "127.0.0.1");
    let received = "";
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => (received += chunk));
    socket.on("close", () => resolve(received));
    socket.on("error", reject);
    socket.write(text);
  });
}

describe("Fastify's JSON-schema compilers (ajv), which the relay does not load", () => {
  it("when a route declares a schema, the app refuses to get ready and points at the zod schemas", async () => {
    const relay = await buildRelay(relayConfig(), { logger: silentLogger, store: createMemoryStore(), slack: { messenger: new FakeMessenger() } });
    // A listed route the app did not register (no Slack listener): only listed routes may be added (src/http/api.ts).
    relay.http.post(ROUTES.slackEvents.path, { schema: { body: { type: "object" } } }, async () => ({}));
    await expect(relay.http.ready()).rejects.toThrow("Fastify route schemas are not used here: parse with the zod schemas of src/protocol");
    await relay.close().catch(() => undefined);
  });
});

describe("health", () => {
  it("GET /healthz answers ok without a token, even when the relay is not ready", async () => {
    const { call } = await start({ http: { readiness: async () => ({ store: false, slack: false }) } });
    const { status, body } = await call("/healthz", { as: null });
    expect(status).toBe(200);
    expect(body).toEqual({ status: "ok" });
  });

  it("GET /readyz answers ready with the checks when the store and Slack answer", async () => {
    const { call } = await start();
    expect(await call("/readyz", { as: null })).toMatchObject({ status: 200, body: { status: "ready", checks: { store: true, slack: true } } });
  });

  it("GET /readyz answers 503 naming the check that failed", async () => {
    const { call } = await start({ http: { readiness: async () => ({ store: true, slack: false }) } });
    expect(await call("/readyz", { as: null })).toEqual(
      expect.objectContaining({ status: 503, body: { status: "not_ready", checks: { store: true, slack: false }, reasons: [NOT_READY_REASONS.slack] } }),
    );
  });

  it("GET /readyz answers 503 with the reason when the store does not answer", async () => {
    const { call } = await start({ http: { readiness: async () => ({ store: false, slack: true }) } });
    const { status, body } = await call("/readyz", { as: null });
    expect(status).toBe(503);
    expect(body).toEqual({ status: "not_ready", checks: { store: false, slack: true }, reasons: [NOT_READY_REASONS.store] });
    expect(NOT_READY_REASONS.store).toMatch(/store \(Redis\) does not answer.*503 relay_store_unavailable/);
  });

  it("GET /readyz answers 503, not 500, when the check itself throws", async () => {
    const { call, logs } = await start({ http: { readiness: () => Promise.reject(new Error("redis is down")) } });
    expect(await call("/readyz", { as: null })).toMatchObject({
      status: 503,
      body: {
        status: "not_ready",
        checks: { store: false, slack: false },
        reasons: [NOT_READY_REASONS.check, NOT_READY_REASONS.store, NOT_READY_REASONS.slack],
      },
    });
    expect(logs.some((line) => line.includes("readiness check failed"))).toBe(true);
  });
});

describe("every response", () => {
  it("carries JSON, no-store and nosniff headers, for successes and errors alike", async () => {
    const { call } = await start();
    const created = await call("/v1/requests", { json: bodies.stepGate() });
    const responses = [
      created,
      await call(`/v1/requests/${created.body.id}`),
      await call("/healthz"),
      await call("/v1/requests", { body: "{" }),
      await call("/v1/requests", { json: {}, as: null }),
      await call("/nowhere"),
      await call("/v1/requests", { method: "PUT" }),
    ];
    for (const response of responses) {
      expect(response.headers.get("content-type")).toBe("application/json; charset=utf-8");
      expect(response.headers.get("cache-control")).toBe("no-store");
      expect(response.headers.get("x-content-type-options")).toBe("nosniff");
    }
  });

  it("an unexpected failure is a 500 relay_internal_error with a reference that is in the log, and nothing internal leaks", async () => {
    const store = createMemoryStore();
    const broken = { ...store, get: () => Promise.reject(new Error("connect ECONNREFUSED redis://:hunter2@10.0.0.5:6379")) };
    const { call, logs } = await start({ store: broken });
    const { status, body } = await call("/v1/requests/some-id");
    expect(status).toBe(500);
    expect(body.error.code).toBe("relay_internal_error");
    expect(JSON.stringify(body)).not.toMatch(/hunter2|ECONNREFUSED|at .*\.ts/);
    const logged = logs.map((line) => JSON.parse(line)).find((entry) => entry.level === "error");
    expect(logged).toMatchObject({ requestId: body.error.details.requestId, method: "GET", path: "/v1/requests/some-id" });
  });

  it("never contains a configured token, nor does any log line", async () => {
    const { call, logs, responses, tokens } = await start();
    const created = await call("/v1/requests", { json: bodies.bashPermission() });
    await call(`/v1/requests/${created.body.id}?wait=0.05`);
    await call(`/v1/requests/${created.body.id}`, { as: "laptop" });
    await call(`/v1/requests/${created.body.id}`, { method: "DELETE" });
    await call("/v1/requests", { json: bodies.stepGate(), as: null, headers: { authorization: `Bearer ${tokens[1]!.token}x` } });
    await call("/v1/requests", { json: bodies.stepGate(), as: null, headers: { authorization: `Basic ${tokens[0]!.token}` } });
    await call("/v1/requests", { body: `{"token": "${tokens[0]!.token}"`, as: "laptop" });
    await call("/v1/requests?wait=99", { json: {} });
    expect(responses.length).toBe(8);
    for (const text of [...responses, ...logs]) {
      for (const { token } of tokens) expect(text).not.toContain(token);
    }
  });
});

describe("connections", () => {
  it("keeps a connection alive across requests", async () => {
    const { url, tokens } = await start();
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const get = () =>
      new Promise<{ status: number; reused: boolean }>((resolve, reject) => {
        const req = request(`${url}/v1/requests/unknown`, { agent, headers: { authorization: `Bearer ${tokens[0]!.token}` } }, (res) => {
          res.resume();
          res.on("end", () => resolve({ status: res.statusCode!, reused: req.reusedSocket }));
        });
        req.on("error", reject);
        req.end();
      });
    expect(await get()).toEqual({ status: 404, reused: false });
    expect(await get()).toEqual({ status: 404, reused: true });
    agent.destroy();
  });

  it("lets a 60 s long-poll finish, bounds slow headers, and outlasts proxies' idle timeouts", async () => {
    const { server } = await start();
    expect(server.requestTimeout === 0 || server.requestTimeout > 65_000).toBe(true);
    expect(server.headersTimeout).toBe(SERVER_TIMEOUTS.headersTimeout);
    expect(server.headersTimeout).toBeLessThanOrEqual(60_000);
    expect(server.keepAliveTimeout).toBeGreaterThan(60_000);
  });

  it("answers a request Node cannot parse with a JSON 400 and stays up", async () => {
    const { url, call } = await start();
    const reply = await raw(url, "NOT A REQUEST\r\n\r\n");
    expect(reply).toMatch(/^HTTP\/1\.1 400 /);
    expect(reply).toContain('{"error":{"code":"relay_bad_http"');
    expect((await call("/healthz")).status).toBe(200);
  });

  it("answers oversized headers with a JSON 431", async () => {
    const { url } = await start();
    const reply = await raw(url, `GET /healthz HTTP/1.1\r\nHost: relay\r\nX-Big: ${"a".repeat(40_000)}\r\n\r\n`);
    expect(reply).toMatch(/^HTTP\/1\.1 431 /);
    expect(reply).toContain("relay_headers_too_large");
  });
});

describe("Slack events in HTTP mode", () => {
  const signingSecret = "8f742231b10e8888abcd99yyyzzz85a5";
  function signed(body: string) {
    const timestamp = Math.floor(Date.now() / 1000);
    return { "x-slack-request-timestamp": String(timestamp), "x-slack-signature": sign(body, signingSecret, timestamp) };
  }
  function bolt() {
    const receiver = new HTTPReceiver({ signingSecret, endpoints: "/slack/events", logLevel: LogLevel.ERROR });
    new App({ receiver, token: "xoxb-0000-test", tokenVerificationEnabled: false, logLevel: LogLevel.ERROR });
    return receiver.requestListener;
  }

  it("POST /slack/events reaches Bolt's receiver, which checks Slack's signature without a relay token", async () => {
    const { call } = await start({ http: { slackListener: bolt() } });
    const body = JSON.stringify({ type: "url_verification", challenge: "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P" });
    const verified = await call("/slack/events", { body, as: null, headers: signed(body) });
    expect(verified).toMatchObject({ status: 200, body: { challenge: "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P" } });
    const forged = await fetch(`${relay!.url}/slack/events`, { method: "POST", body, headers: { ...signed(body), "x-slack-signature": "v0=00" } });
    expect(forged.status).toBe(401);
  });

  it("GET /slack/events → 405 with Allow: POST", async () => {
    const { call } = await start({ http: { slackListener: bolt() } });
    const response = await call("/slack/events", { as: null });
    expect(response.status).toBe(405);
    expect(response.headers.get("allow")).toBe("POST");
  });

  it("a body declared over the limit is refused with 413 before Bolt reads it", async () => {
    let reached = false;
    const { call } = await start({ http: { slackListener: () => void (reached = true), bodyLimitBytes: 1000 } });
    const response = await call("/slack/events", { body: "x".repeat(2000), as: null });
    expect(response.status).toBe(413);
    expect(reached).toBe(false);
  });

  it("is 404 when the relay runs in Socket Mode (no listener), and when Bolt does not claim the path", async () => {
    const { call } = await start();
    expect((await call("/slack/events", { body: "{}", as: null })).status).toBe(404);
    await relay!.close();
    const receiver = new HTTPReceiver({ signingSecret, endpoints: "/slack/other", logLevel: LogLevel.ERROR });
    const second = await start({ http: { slackListener: receiver.requestListener } });
    const response = await second.call("/slack/events", { body: "{}", as: null });
    expect(response).toMatchObject({ status: 404, body: { error: { code: "relay_not_found" } } });
  });
});
