/**
 * A Redis outage against the whole relay (src/main.ts, HTTP mode, the Slack
 * stand-in): a private redis-server, persisted to its own dir, is stopped
 * and started again on the same port while agents call. During the outage
 * every API call answers 503 relay_store_unavailable with Retry-After within
 * the bound, /readyz says why, a hook call is denied before its deadline;
 * once Redis is back, held calls, the expiry sweep and the callback worker
 * carry on and nothing is lost.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { NOT_READY_REASONS } from "../../../src/http/routes/health.js";
import { STORE_UNAVAILABLE_REASON } from "../../../src/requests/hooks/calls.js";
import { Action } from "../../../src/slack/ids.js";
import { AGENT_TOKEN, startFullRelay, type FullRelay } from "../../helpers/full-relay.js";
import { startReceiver, type Receiver } from "../../helpers/receiver.js";
import { startRedisServer, type RedisServer } from "../../helpers/redis-server.js";
import { sleep, until } from "../../helpers/until.js";

/** The store bound (RELAY_STORE_TIMEOUT_MS default, 2 s) plus room for a loaded machine. */
const BOUND_MS = 2_500;

let dataDir: string;
let redis: RedisServer | undefined;
let relay: FullRelay | undefined;
let receiver: Receiver;

beforeEach(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "relay-outage-"));
  redis = await startRedisServer(undefined, { dataDir });
  receiver = await startReceiver();
  relay = await startFullRelay({ env: { REDIS_URL: redis.url, REDIS_PREFIX: "outage" } });
});
afterEach(async () => {
  await relay?.close();
  await redis?.stop();
  await receiver.close();
  rmSync(dataDir, { recursive: true, force: true });
});

interface Reply {
  status: number;
  headers: Headers;
  body: unknown;
  ms: number;
}

async function call(path: string, init: { method?: string; body?: unknown } = {}): Promise<Reply> {
  const started = Date.now();
  const response = await fetch(`${relay!.url}${path}`, {
    method: init.method ?? (init.body === undefined ? "GET" : "POST"),
    headers: { authorization: `Bearer ${AGENT_TOKEN.token}`, ...(init.body === undefined ? {} : { "content-type": "application/json" }) },
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined, ms: Date.now() - started };
}

const stepGate = (over: Record<string, unknown> = {}) => ({ kind: "step_gate", toolName: "Bash", input: { command: "make deploy" }, ...over });
const hookInput = (toolUseId: string) => ({
  hook_event_name: "PreToolUse",
  session_id: "5f1c2a9e-outage",
  cwd: "/srv/app",
  tool_name: "Bash",
  tool_input: { command: "make deploy" },
  tool_use_id: toolUseId,
});

function expectStoreUnavailable(reply: Reply): void {
  expect(reply.status).toBe(503);
  expect(reply.body).toMatchObject({ error: { code: "relay_store_unavailable" } });
  expect(reply.headers.get("retry-after")).toBe("2");
  expect(reply.ms).toBeLessThan(BOUND_MS);
}

describe("a Redis outage", () => {
  it("answers every API call 503 with Retry-After within the bound, reports it on /readyz, and loses nothing once Redis is back", async () => {
    const created = await call("/v1/requests", { body: stepGate() });
    expect(created.status).toBe(201);
    const { id } = created.body as { id: string };
    const message = await relay!.message(0);
    // Ends during the outage: the sweep expires it once Redis is back, and its callback goes out then.
    const short = await call("/v1/requests", { body: stepGate({ timeoutSeconds: 2, callbackUrl: `${receiver.url}/done` }) });
    expect(short.status).toBe(201);
    const shortId = (short.body as { id: string }).id;
    await relay!.message(1);
    const held = call(`/v1/requests/${id}?wait=40`);
    // Its wait ends while Redis is away: it answers what it knew, the request pending, as a wait that ran out does.
    const shortPoll = call(`/v1/requests/${id}?wait=3`);
    await sleep(200);

    await redis!.stop();

    expectStoreUnavailable(await call("/v1/requests", { body: stepGate() }));
    expectStoreUnavailable(await call(`/v1/requests/${id}`));
    expectStoreUnavailable(await call(`/v1/requests/${id}?wait=5`));
    expectStoreUnavailable(await call(`/v1/requests/${id}`, { method: "DELETE" }));
    const ready = await call("/readyz");
    expect(ready.status).toBe(503);
    expect(ready.body).toMatchObject({ status: "not_ready", checks: { store: false, slack: true }, reasons: [NOT_READY_REASONS.store] });
    expect(ready.ms).toBeLessThan(BOUND_MS);
    await sleep(2_500); // past the short request's deadline, with the sweep failing every 100 ms meanwhile
    const knew = await shortPoll;
    expect(knew.status).toBe(200);
    expect(knew.body).toMatchObject({ id, kind: "step_gate", status: "pending" });

    redis = await startRedisServer(undefined, { port: redis!.port, dataDir });
    await until(async () => (await call("/readyz")).status === 200, 10_000, "/readyz to say ready again");

    expect((await call(`/v1/requests/${id}`)).body).toMatchObject({ id, status: "pending" });
    await relay!.click(message, Action.stepYes);
    const answered = await held;
    expect(answered.status).toBe(200);
    expect(answered.body).toMatchObject({ id, status: "answered", decision: { reply: "y" } });
    await until(async () => ((await call(`/v1/requests/${shortId}`)).body as { status: string }).status === "expired", 5_000, "the sweep to expire");
    await until(() => receiver.on("/done").length === 1, 5_000, "the callback to go out");
    expect(JSON.parse(receiver.on("/done")[0]!.body)).toMatchObject({ id: shortId, status: "expired" });
    expect(relay!.errors()).toEqual([]);
    // Background work paused without a line per tick, and said so once.
    const messages = relay!.logs.map((line) => (JSON.parse(line) as { msg?: string }).msg);
    expect(messages.filter((msg) => msg === "the store is unavailable: background sweeps pause until it is back")).toHaveLength(1);
    expect(messages.filter((msg) => msg === "the store is unavailable: callback delivery pauses until it is back")).toHaveLength(1);
  }, 40_000);

  it("a Redis that accepts calls but does not answer them (paused) gets a 503 within the bound, not a hang", async () => {
    const created = await call("/v1/requests", { body: stepGate() });
    const { id } = created.body as { id: string };
    const admin = new Redis(redis!.url);
    try {
      await admin.call("CLIENT", "PAUSE", "4000", "ALL");
      const reply = await call(`/v1/requests/${id}`);
      expectStoreUnavailable(reply);
      expect(reply.ms).toBeGreaterThanOrEqual(1_900);
      await until(async () => (await call(`/v1/requests/${id}`)).status === 200, 10_000, "Redis to answer again");
    } finally {
      admin.disconnect();
    }
  }, 30_000);

  it("denies a Claude Code hook call before its deadline, saying the relay's storage is unavailable", async () => {
    await redis!.stop();
    const reply = await call("/v1/hooks/claude-code?timeout=5", { body: hookInput("toolu_outage_1") });
    expect(reply.status).toBe(200);
    expect(reply.ms).toBeLessThan(5_000);
    expect(reply.body).toEqual({
      hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: STORE_UNAVAILABLE_REASON },
    });
  }, 20_000);

  it("a hook call made during a short outage waits it out: once Redis is back the request is posted and the person's answer comes back", async () => {
    await redis!.stop();
    const hook = call("/v1/hooks/claude-code?timeout=60", { body: hookInput("toolu_outage_2") });
    await sleep(1_500);
    redis = await startRedisServer(undefined, { port: redis!.port, dataDir });
    const message = await relay!.message(0);
    await relay!.click(message, Action.stepYes);
    const reply = await hook;
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "allow" } });
  }, 30_000);
});
