/**
 * What the relay's log says about HTTP requests: one line per request with
 * its id, the id echoed to the caller (the caller's own when it sends a sane
 * one), probes kept out of the info log, and no token anywhere.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createMemoryStore } from "../../../src/store/memory-store.js";
import { bodies, startApiRelay, type ApiRelayOptions, type ApiRelay } from "../../helpers/api-relay.js";
import { hookFixture } from "../../fixtures/claude-code.js";

let relay: ApiRelay | undefined;
afterEach(async () => {
  await relay?.close();
  relay = undefined;
});

async function start(options: ApiRelayOptions = {}) {
  relay = await startApiRelay(options);
  return relay;
}

type Entry = Record<string, unknown> & { level: string; msg: string };
const entries = (logs: string[]): Entry[] => logs.map((line) => JSON.parse(line) as Entry);

describe("request ids", () => {
  it("every response carries X-Request-Id, and the request's log line carries the same id, status, agent and duration", async () => {
    const { call, logs } = await start();
    const response = await call("/v1/requests", { json: bodies.stepGate() });
    const id = response.headers.get("x-request-id");
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    const lines = entries(logs).filter((entry) => entry.requestId === id);
    expect(lines).toEqual([
      expect.objectContaining({
        level: "info",
        msg: "request finished",
        method: "POST",
        path: "/v1/requests",
        status: 201,
        agent: "ci-bot",
        ms: expect.any(Number),
      }),
    ]);
  });

  it("a sane X-Request-Id from the caller is kept; anything else is replaced by a fresh one", async () => {
    const { call, logs } = await start();
    const kept = await call("/healthz", { headers: { "x-request-id": "trace-4bf92f3577b34da6.a3ce929d0e0e4736" } });
    expect(kept.headers.get("x-request-id")).toBe("trace-4bf92f3577b34da6.a3ce929d0e0e4736");
    for (const given of ["has spaces in it", "x".repeat(129), 'quote"d', ""]) {
      const replaced = await call("/healthz", { headers: { "x-request-id": given } });
      expect(replaced.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
    }
    expect(entries(logs).some((entry) => entry.requestId === "trace-4bf92f3577b34da6.a3ce929d0e0e4736")).toBe(true);
  });

  it("a 500 quotes the request id as its reference and the error line carries it", async () => {
    const store = createMemoryStore();
    const { call, logs } = await start({ store: { ...store, get: () => Promise.reject(new Error("store is down")) } });
    const response = await call("/v1/requests/some-id", { headers: { "x-request-id": "caller-id-1" } });
    expect(response.body.error).toMatchObject({ code: "relay_internal_error", details: { requestId: "caller-id-1" } });
    expect(entries(logs).find((entry) => entry.level === "error")).toMatchObject({ requestId: "caller-id-1", method: "GET", path: "/v1/requests/some-id" });
  });

  it("a hook call that fails inside the relay quotes its request id in the deny", async () => {
    const store = createMemoryStore();
    const { call, logs } = await start({ store: { ...store, create: () => Promise.reject(new Error("store is down")) } });
    const { body } = await call("/v1/hooks/claude-code", { json: hookFixture("pre-tool-use"), headers: { "x-request-id": "hook-call-9" } });
    expect(body.hookSpecificOutput.permissionDecisionReason).toContain("reference hook-call-9");
    expect(entries(logs).find((entry) => entry.level === "error")).toMatchObject({ requestId: "hook-call-9", error: { message: "store is down" } });
  });
});

describe("the request log", () => {
  it("writes one line per request at info, and health probes only at debug", async () => {
    const { call, logs } = await start();
    await call("/healthz");
    await call("/readyz");
    await call("/nowhere");
    const finished = entries(logs).filter((entry) => entry.msg === "request finished");
    expect(finished.map((entry) => [entry.level, entry.path, entry.status])).toEqual([
      ["debug", "/healthz", 200],
      ["debug", "/readyz", 200],
      ["info", "/nowhere", 404],
    ]);
  });

  it("never holds a token, nor the Authorization header, whatever the request", async () => {
    const { call, logs, tokens } = await start();
    const created = await call("/v1/requests", { json: bodies.bashPermission() });
    await call(`/v1/requests/${created.body.id}?wait=0.05`);
    await call("/v1/requests", { json: bodies.stepGate(), as: null, headers: { authorization: `Bearer ${tokens[1]!.token}x` } });
    await call("/v1/requests", { body: "{", as: "laptop" });
    await call("/v1/requests", { method: "PUT", json: {} });
    await call("/v1/hooks/claude-code?timeout=3", { json: hookFixture("pre-tool-use") });
    await call(`/v1/requests/${created.body.id}`, { method: "DELETE" });
    expect(entries(logs).filter((entry) => entry.msg === "request finished")).toHaveLength(7);
    for (const line of logs) {
      expect(line).not.toMatch(/authorization|bearer/i);
      for (const { token } of tokens) expect(line).not.toContain(token);
    }
  });
});
