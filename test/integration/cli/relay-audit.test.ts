/**
 * The audit log as `npm start` wires it (src/main.ts): RELAY_ADMIN_TOKENS
 * read GET /v1/audit and agent tokens are refused; without Redis the log is
 * the instance's own; with REDIS_URL it is the Redis Stream under the
 * store's prefix, shared by every instance on that Redis, and capped at
 * RELAY_AUDIT_MAX_EVENTS; a shutdown lets the appends in flight finish;
 * RELAY_AUDIT_EXPORT keeps a copy of every event in a file, the ones the cap
 * kept out included; one agent token's flood costs only its own share of the
 * log, never another token's events (memory, one Redis server and a Redis
 * Cluster).
 */
import { randomUUID } from "node:crypto";
import { mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { AGENT_TOKEN, startFullRelay, type FullRelay } from "../../helpers/full-relay.js";
import { connectTestRedis, deleteKeysUnder, REDIS_TEST_URL } from "../../helpers/redis.js";
import { startSlackWebApi } from "../../helpers/slack-web-api.js";
import { until } from "../../helpers/until.js";
import { runCli } from "../../helpers/cli.js";
import { useTestCluster } from "../../helpers/store-backends.js";
import { ALICE } from "../../fixtures/people.js";
import { Action } from "../../../src/slack/ids.js";

const ADMIN = { name: "ops", token: "tok_ops_relay_audit_0123456789" };
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

async function start(env: Record<string, string> = {}, slack?: FullRelay["slack"]): Promise<FullRelay> {
  const relay = await startFullRelay({ env: { RELAY_ADMIN_TOKENS: `${ADMIN.name}:${ADMIN.token}`, ...env }, ...(slack ? { slack } : {}) });
  cleanups.push(() => relay.close());
  return relay;
}

/** A fresh prefix on the test Redis, a connection to it and a Slack stand-in, all cleaned up after the test. */
async function onTestRedis(): Promise<{ prefix: string; redis: ReturnType<typeof connectTestRedis>; slack: FullRelay["slack"] }> {
  const prefix = `test-audit-${randomUUID().slice(0, 8)}`;
  const redis = connectTestRedis();
  const slack = await startSlackWebApi();
  cleanups.push(async () => {
    await slack.close();
    await deleteKeysUnder(redis, prefix);
    await redis.quit();
  });
  return { prefix, redis, slack };
}

async function readAudit(
  relay: FullRelay,
  token = ADMIN.token,
  query = "",
): Promise<{ status: number; body: { events?: Array<Record<string, unknown>>; dropped?: Record<string, unknown> } }> {
  const response = await fetch(`${relay.url}/v1/audit${query}`, { headers: { authorization: `Bearer ${token}` } });
  return { status: response.status, body: (await response.json()) as { events?: Array<Record<string, unknown>> } };
}

describe("the relay's audit log", () => {
  it("without Redis: what the relay records, an admin token reads, and an agent token may not", async () => {
    const relay = await start();
    await relay.audit.record({ type: "created", requestId: "req-1", token: AGENT_TOKEN.name, kind: "step_gate" });
    const read = await readAudit(relay);
    expect(read.status).toBe(200);
    expect(read.body.events).toStrictEqual([expect.objectContaining({ type: "created", requestId: "req-1", token: AGENT_TOKEN.name, kind: "step_gate" })]);
    expect((await readAudit(relay, AGENT_TOKEN.token)).status).toBe(403);
  });

  it("records the life of an agent's request, which an admin token lists and reads", async () => {
    const relay = await start();
    const agent = { authorization: `Bearer ${AGENT_TOKEN.token}`, "content-type": "application/json" };
    const body = JSON.stringify({ kind: "step_gate", toolName: "Bash", input: { command: "ls" } });
    const { id } = (await (await fetch(`${relay.url}/v1/requests`, { method: "POST", headers: agent, body })).json()) as { id: string };
    await relay.message(0);
    const listed = await fetch(`${relay.url}/v1/requests?status=pending`, { headers: { authorization: `Bearer ${ADMIN.token}` } });
    expect(((await listed.json()) as { requests: Array<{ id: string }> }).requests.map((r) => r.id)).toStrictEqual([id]);
    await until(async () => ((await readAudit(relay, ADMIN.token, `?requestId=${id}`)).body.events ?? []).length === 2, 2000, "the posted event");
    const read = await readAudit(relay, ADMIN.token, `?requestId=${id}`);
    expect(read.body.events!.map((e) => e.type)).toStrictEqual(["created", "posted"]);
  });

  it("with Redis: one stream under the prefix, held at its cap without losing old events, read by every instance, with the appends in flight kept at shutdown", async () => {
    const { prefix, redis, slack } = await onTestRedis();
    const env = { REDIS_URL: REDIS_TEST_URL, REDIS_PREFIX: prefix, RELAY_AUDIT_MAX_EVENTS: "100" };
    const first = await start(env, slack);
    const second = await start(env, slack);

    for (let i = 0; i < 120; i += 1) await first.audit.record({ type: "posted", requestId: `req-${i}` });
    expect(await redis.xlen(`${prefix}:audit`)).toBe(100);
    const read = await readAudit(second, ADMIN.token, "?limit=1");
    expect(read.body.events).toStrictEqual([expect.objectContaining({ type: "posted", requestId: "req-0" })]);
    expect(read.body.dropped).toMatchObject({ events: 20 });

    // A decision is written even at the cap.
    void second.audit.record({ type: "answered", requestId: "req-last", status: "answered", person: { id: ALICE.id } });
    await second.close();
    const last = await redis.xrevrange(`${prefix}:audit`, "+", "-", "COUNT", 1);
    expect(JSON.parse(last[0]![1][1]!)).toMatchObject({ type: "answered", requestId: "req-last" });
  });

  it("RELAY_AUDIT_EXPORT: a copy of every event, the ones the log's cap kept out included, in a file only the relay's user can read", async () => {
    const dir = await mkdtemp(join(tmpdir(), "relay-audit-export-"));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const file = join(dir, "audit.jsonl");
    const relay = await start({ RELAY_AUDIT_MAX_EVENTS: "100", RELAY_AUDIT_EXPORT: file });
    for (let i = 0; i < 120; i += 1) void relay.audit.record({ type: "posted", requestId: `req-${i}`, at: Date.UTC(2026, 11, 2, 9, 0, i) });
    void relay.audit.record({ type: "answered", requestId: "req-0", status: "answered", person: { id: "U0ALICE01" } });
    expect((await readAudit(relay, ADMIN.token, "?limit=1")).body.dropped).toMatchObject({ events: 20 });
    await relay.close();

    const lines = (await readFile(file, "utf8")).split("\n");
    expect(lines.pop()).toBe("");
    expect(lines).toHaveLength(121);
    expect(JSON.parse(lines[0]!)).toStrictEqual({ at: "2026-12-02T09:00:00.000Z", type: "posted", requestId: "req-0" });
    expect(JSON.parse(lines[119]!)).toMatchObject({ type: "posted", requestId: "req-119" });
    expect(JSON.parse(lines[120]!)).toMatchObject({ type: "answered", requestId: "req-0", person: { id: "U0ALICE01" } });
    expect((await stat(file)).mode & 0o777).toBe(0o600);

    // A restart appends to the same file; nothing is overwritten.
    const again = await start({ RELAY_AUDIT_EXPORT: file });
    await again.audit.record({ type: "posted", requestId: "req-after-restart" });
    await again.close();
    const after = (await readFile(file, "utf8")).trimEnd().split("\n");
    expect(after).toHaveLength(122);
    expect(JSON.parse(after[121]!)).toMatchObject({ requestId: "req-after-restart" });
  });

  it("RELAY_AUDIT_EXPORT naming a file the relay cannot create stops the start with one line that names the variable", async () => {
    const dir = await mkdtemp(join(tmpdir(), "relay-audit-export-"));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const missing = join(dir, "no-such-dir", "audit.jsonl");
    await expect(start({ RELAY_AUDIT_EXPORT: missing })).rejects.toThrow(
      `RELAY_AUDIT_EXPORT: cannot append to ${missing} (ENOENT); give a file the relay's user may create and write, in a directory that exists`,
    );
  });

  const flood =
    "one agent token's flood of creates and cancels keeps none of another token's events out: past its share of the cap its own are counted under token_share";

  it(`memory: ${flood}`, () => floodThenApprove({}));

  it(`Redis: ${flood}`, async () => {
    const { prefix, slack } = await onTestRedis();
    await floodThenApprove({ REDIS_URL: REDIS_TEST_URL, REDIS_PREFIX: prefix }, slack);
  });

  describe("on a Redis Cluster", () => {
    const cluster = useTestCluster();
    it(`Redis Cluster: ${flood}`, () => floodThenApprove({ REDIS_CLUSTER_NODES: cluster.cluster().nodes, REDIS_PREFIX: cluster.prefix() }));
  });
});

/**
 * The attack of issue 16: with the cap at 100 and two agent tokens, one
 * (noisy-bot) creates and cancels 60 requests, then the other's request is
 * approved in Slack. Its created, posted and answered events must all be in
 * the log; noisy-bot holds its share (50) and the rest of its events are
 * counted under token_share, which GET /v1/audit and `approval-relay audit` say.
 */
async function floodThenApprove(storeEnv: Record<string, string>, slack?: FullRelay["slack"]): Promise<void> {
  const noisy = { name: "noisy-bot", token: "tok_noisy_bot_0123456789abcdef" };
  const tokens = `${AGENT_TOKEN.name}:${AGENT_TOKEN.token},${noisy.name}:${noisy.token}`;
  const relay = await start({ ...storeEnv, RELAY_AUDIT_MAX_EVENTS: "100", RELAY_TOKENS: tokens }, slack);
  const create = async (token: string, command: string) => {
    const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" };
    const body = JSON.stringify({ kind: "step_gate", toolName: "Bash", input: { command } });
    const response = await fetch(`${relay.url}/v1/requests`, { method: "POST", headers, body });
    expect(response.status).toBe(201);
    return ((await response.json()) as { id: string }).id;
  };

  for (let i = 0; i < 60; i += 1) {
    const id = await create(noisy.token, `noise ${i}`);
    const cancelled = await fetch(`${relay.url}/v1/requests/${id}`, { method: "DELETE", headers: { authorization: `Bearer ${noisy.token}` } });
    expect(cancelled.status).toBe(200);
  }
  await relay.service.idle();

  const id = await create(AGENT_TOKEN.token, "deploy production");
  const post = await relay.slack.waitFor("chat.postMessage", (args) => JSON.stringify(args.metadata ?? null).includes(id));
  await relay.click({ channel: String(post.args.channel), ts: String(post.args.ts), text: "", blocks: post.args.blocks as unknown[] }, Action.stepYes);
  await until(async () => ((await readAudit(relay, ADMIN.token, `?requestId=${id}`)).body.events ?? []).some((e) => e.type === "answered"), 5000, "the answer");

  const read = await readAudit(relay, ADMIN.token, `?requestId=${id}`);
  expect(read.body.events!.map((e) => e.type)).toStrictEqual(["created", "posted", "answered"]);
  expect(read.body.events![2]).toMatchObject({ token: AGENT_TOKEN.name, person: { id: ALICE.id } });
  expect(read.body.dropped).toMatchObject({ causes: [{ reason: "token_share", token: noisy.name }] });
  expect(read.body.dropped!.reason).toContain(`agent token ${noisy.name} held its share`);
  const all = await readAudit(relay, ADMIN.token, "?limit=1000");
  expect(all.body.events!.filter((e) => e.token === noisy.name)).toHaveLength(50);

  const cli = await runCli(["audit", "--request-id", id], { env: { RELAY_URL: relay.url, RELAY_TOKEN: ADMIN.token } });
  expect(cli.code).toBe(0);
  expect(
    cli.stdout
      .trimEnd()
      .split("\n")
      .map((line) => (JSON.parse(line) as { type: string }).type),
  ).toStrictEqual(["created", "posted", "answered"]);
  expect(cli.stderr).toMatch(
    /^approval-relay audit: \d+ events were not recorded from .+ agent token noisy-bot held its share of RELAY_AUDIT_MAX_EVENTS \(token_share\)\n$/,
  );
}
