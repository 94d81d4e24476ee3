/**
 * A runaway agent against the relay as `npm start` wires it (issue 19): an
 * agent token's pending cap holds over two instances sharing Redis, and a
 * create past it is answered 429 relay_too_many_pending with Retry-After and
 * the count over HTTP, a deny with that reason to a Claude Code hook call,
 * and exit code 3 with the reason from `approval-relay ask`; the create rate
 * limit answers 429 relay_rate_limited (a deny to a hook call); both are
 * counted in the metrics and written to the audit trail; and a repeated tool
 * call from the same session joins the pending request instead of being
 * posted again.
 */
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { runCli } from "../../helpers/cli.js";
import { configFiles } from "../../helpers/config-files.js";
import { AGENT_TOKEN, agentCall, startFullRelay, type FullRelay } from "../../helpers/full-relay.js";
import { sample } from "../../helpers/metrics.js";
import { connectTestRedis, deleteKeysUnder, REDIS_TEST_URL } from "../../helpers/redis.js";
import { until } from "../../helpers/until.js";

const HOOK_INPUT = JSON.parse(readFileSync(new URL("../../fixtures/claude-code/pre-tool-use.json", import.meta.url), "utf8")) as Record<string, unknown>;
const ADMIN = { name: "ops", token: "tok_ops_admin_0123456789abcdef" };

const writeConfig = configFiles("json");
const relays: FullRelay[] = [];
let prefix: string | undefined;
afterEach(async () => {
  await Promise.all(relays.splice(0).map((relay) => relay.close()));
  if (prefix !== undefined) {
    const redis = connectTestRedis();
    await deleteKeysUnder(redis, prefix);
    await redis.quit();
    prefix = undefined;
  }
});

async function start(env: Record<string, string>, shareSlackWith?: FullRelay): Promise<FullRelay> {
  const relay = await startFullRelay({
    env: { RELAY_ADMIN_TOKENS: `${ADMIN.name}:${ADMIN.token}`, ...env },
    ...(shareSlackWith ? { slack: shareSlackWith.slack } : {}),
  });
  relays.push(relay);
  return relay;
}

const stepGate = (command: string) => ({ kind: "step_gate", toolName: "Bash", input: { command }, agent: { sessionId: "loop-session" } });

/** POST /v1/requests on `relay`, with the reply's Retry-After. */
async function create(relay: FullRelay, body: unknown): Promise<{ status: number; body: Record<string, unknown>; retryAfter: string | null }> {
  const response = await fetch(`${relay.url}/v1/requests`, {
    method: "POST",
    headers: { authorization: `Bearer ${AGENT_TOKEN.token}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown>, retryAfter: response.headers.get("retry-after") };
}

async function hookCall(relay: FullRelay, command: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${relay.url}/v1/hooks/claude-code?timeout=30`, {
    method: "POST",
    headers: { authorization: `Bearer ${AGENT_TOKEN.token}`, "content-type": "application/json" },
    body: JSON.stringify({ ...HOOK_INPUT, tool_use_id: `toolu_${randomUUID()}`, tool_input: { command } }),
  });
  return { status: response.status, body: JSON.parse(await response.text()) as Record<string, unknown> };
}

async function auditTypes(relay: FullRelay): Promise<Array<{ type: string; token?: string; reason?: string }>> {
  const response = await fetch(`${relay.url}/v1/audit`, { headers: { authorization: `Bearer ${ADMIN.token}` } });
  return ((await response.json()) as { events: Array<{ type: string; token?: string; reason?: string }> }).events;
}

describe("an agent token's pending cap", () => {
  it("holds over two instances on one Redis: past it HTTP gets 429 with Retry-After and the count, a hook call a deny, the CLI exit 3", async () => {
    prefix = `test-limits-${randomUUID().slice(0, 8)}`;
    const env = { REDIS_URL: REDIS_TEST_URL, REDIS_PREFIX: prefix, RELAY_MAX_PENDING_PER_TOKEN: "2" };
    const a = await start(env);
    const b = await start(env, a);

    const first = await create(a, { ...stepGate("make one"), timeoutSeconds: 30 });
    expect(first.status).toBe(201);
    expect((await create(b, stepGate("make two"))).status).toBe(201);

    const refused = await create(a, stepGate("make three"));
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ error: { code: "relay_too_many_pending", details: { pending: 2, limit: 2 } } });
    expect((refused.body.error as { message: string }).message).toContain("already has 2 pending requests");
    expect(Number(refused.retryAfter)).toBeGreaterThanOrEqual(29);
    expect(Number(refused.retryAfter)).toBeLessThanOrEqual(30);
    expect((await create(b, stepGate("make four"))).status).toBe(429);

    const hook = await hookCall(b, "make five");
    expect(hook.status).toBe(200);
    expect(hook.body).toMatchObject({ hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny" } });
    expect((hook.body.hookSpecificOutput as { permissionDecisionReason: string }).permissionDecisionReason).toMatch(
      /already has 2 pending requests.*The tool call was denied\./,
    );

    const cli = await runCli(["ask", "Deploy?"], { env: { RELAY_URL: a.url, RELAY_TOKEN: AGENT_TOKEN.token, RELAY_RETRIES: "1" } });
    expect(cli.code).toBe(3);
    expect(cli.stderr).toMatch(
      /^approval-relay: the relay refused the request: This agent token already has 2 pending requests.*\(HTTP 429\); try again in \d+ s\n$/,
    );

    // One answered or cancelled makes room, on either instance.
    expect((await agentCall(b.url, `/v1/requests/${String(first.body.id)}`, { method: "DELETE" })).status).toBe(200);
    expect((await create(a, stepGate("make six"))).status).toBe(201);

    const metrics = await (await fetch(`${a.url}/metrics`)).text();
    expect(sample(metrics, "relay_creates_limited_total", { token: AGENT_TOKEN.name, limit: "too_many_pending" })).toBe(2);
    // Written by each instance for the first refusal of its minute: one each here.
    await until(async () => (await auditTypes(a)).filter((event) => event.type === "limited").length === 2, 2000, "both limited events");
    for (const event of (await auditTypes(a)).filter(({ type }) => type === "limited")) {
      expect(event).toMatchObject({ token: AGENT_TOKEN.name, reason: "too_many_pending: 2 pending, at most 2" });
    }
  });

  it("a route's maxPending sets it lower for the requests under that route", async () => {
    const file = writeConfig(JSON.stringify({ routes: [{ match: { labels: { env: "prod" } }, maxPending: 1 }] }));
    const relay = await start({ RELAY_CONFIG_FILE: file, RELAY_MAX_PENDING_PER_TOKEN: "3" });
    const prod = (command: string) => ({ ...stepGate(command), labels: { env: "prod" } });
    expect((await create(relay, prod("deploy 1"))).status).toBe(201);
    expect(await create(relay, prod("deploy 2"))).toMatchObject({
      status: 429,
      body: { error: { code: "relay_too_many_pending", details: { pending: 1, limit: 1 } } },
    });
    expect((await create(relay, stepGate("make 2"))).status).toBe(201);
    expect((await create(relay, stepGate("make 3"))).status).toBe(201);
    expect(await create(relay, stepGate("make 4"))).toMatchObject({ status: 429, body: { error: { details: { pending: 3, limit: 3 } } } });
  });
});

describe("the create rate limit", () => {
  it("past RELAY_CREATE_RATE_LIMIT a minute a create gets 429 relay_rate_limited with Retry-After and a hook call a deny; counted and audited once", async () => {
    const relay = await start({ RELAY_CREATE_RATE_LIMIT: "3" });
    for (const n of [1, 2, 3]) expect((await create(relay, stepGate(`make ${n}`))).status).toBe(201);
    const refused = await create(relay, stepGate("make 4"));
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ error: { code: "relay_rate_limited", details: { limitPerMinute: 3 } } });
    expect(Number(refused.retryAfter)).toBeGreaterThan(0);
    expect(Number(refused.retryAfter)).toBeLessThanOrEqual(60);

    const hook = await hookCall(relay, "make 5");
    expect(hook.status).toBe(200);
    expect((hook.body.hookSpecificOutput as { permissionDecision: string; permissionDecisionReason: string }).permissionDecisionReason).toMatch(
      /more than 3 requests in a minute.*The tool call was denied\./,
    );
    // Reading and cancelling are not creates: never limited.
    expect((await agentCall(relay.url, "/v1/requests")).status).toBe(200);

    const metrics = await (await fetch(`${relay.url}/metrics`)).text();
    expect(sample(metrics, "relay_creates_limited_total", { token: AGENT_TOKEN.name, limit: "rate_limited" })).toBe(2);
    await until(async () => (await auditTypes(relay)).some((event) => event.type === "limited"), 2000, "the limited event");
    expect((await auditTypes(relay)).filter((event) => event.type === "limited")).toMatchObject([
      { token: AGENT_TOKEN.name, reason: "rate_limited: more than 3 creates a minute" },
    ]);
  });
});

describe("a repeated tool call", () => {
  it("joins the pending request from the same session: one message in Slack; another session's, or one after it ended, is a new request", async () => {
    const relay = await start({});
    const first = await create(relay, stepGate("make deploy"));
    expect(first.status).toBe(201);
    const again = await create(relay, { ...stepGate("make deploy"), title: "ignored: the first one stands" });
    expect(again).toMatchObject({ status: 200, body: { id: first.body.id, status: "pending" } });
    const otherSession = await create(relay, { ...stepGate("make deploy"), agent: { sessionId: "another-session" } });
    expect(otherSession.status).toBe(201);
    await relay.message(1);
    expect(relay.slack.callsTo("chat.postMessage")).toHaveLength(2);

    expect((await agentCall(relay.url, `/v1/requests/${String(first.body.id)}`, { method: "DELETE" })).status).toBe(200);
    const afterEnd = await create(relay, stepGate("make deploy"));
    expect(afterEnd.status).toBe(201);
    expect(afterEnd.body.id).not.toBe(first.body.id);
  });
});
