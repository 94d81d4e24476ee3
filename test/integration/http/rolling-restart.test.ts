/**
 * Restarts and rolling deploys, with the relay in its own process
 * (`approval-relay serve`) sent SIGTERM while calls are held: a private
 * redis-server (shared store) or the memory store, the Slack stand-in, clicks
 * as signed payloads. What an operator's deploy does to agents waiting on it:
 * the instance stops taking new work at once, held calls may still be
 * answered during RELAY_SHUTDOWN_GRACE, and then, with Redis, long-polled
 * requests stay pending for the next instance while held hook calls are
 * denied ("the relay restarted") and their requests cancelled.
 */
import { afterEach, describe, expect, it } from "vitest";
import { RelayClient } from "../../../src/client/relay-client.js";
import { DRAINING_DENY, SHUTDOWN_REASON } from "../../../src/requests/hooks/calls.js";
import { Action, decodeButton } from "../../../src/slack/ids.js";
import { buttonValue } from "../../helpers/full-relay.js";
import { freePort } from "../../helpers/ports.js";
import { startRedisServer, type RedisServer } from "../../helpers/redis-server.js";
import { blockAction, BOT_TOKEN, CHANNEL, postToSlackEndpoint, SIGNING_SECRET } from "../../helpers/slack.js";
import { startSlackWebApi, type SlackWebApiStandIn } from "../../helpers/slack-web-api.js";
import { hookFixture } from "../../fixtures/claude-code.js";
import { killRuns, startServe, type CliRun } from "../../helpers/cli.js";
import { sleep } from "../../helpers/until.js";

const TOKEN = "tok_restart_0123456789abcdef";
const HOOK = "/v1/hooks/claude-code?timeout=60";

let server: RedisServer | undefined;
let slack: SlackWebApiStandIn | undefined;
const runs: CliRun[] = [];

afterEach(async () => {
  await killRuns(runs);
  await slack?.close();
  await server?.stop();
  server = slack = undefined;
});

async function environment(store: "redis" | "memory", graceSeconds: number) {
  slack = await startSlackWebApi();
  const env: Record<string, string> = {
    SLACK_BOT_TOKEN: BOT_TOKEN,
    SLACK_SIGNING_SECRET: SIGNING_SECRET,
    SLACK_API_URL: slack.url,
    SLACK_DEFAULT_CHANNEL: CHANNEL,
    RELAY_TOKENS: `ci:${TOKEN}`,
    RELAY_SHUTDOWN_GRACE: String(graceSeconds),
    LOG_LEVEL: "warn",
  };
  if (store === "redis") {
    server = await startRedisServer();
    env.REDIS_URL = server.url;
  }
  return { env, slack, port: await freePort() };
}

function call(url: string, path: string, init: { method?: string; json?: unknown } = {}) {
  return fetch(`${url}${path}`, {
    method: init.method ?? (init.json === undefined ? "GET" : "POST"),
    headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
    ...(init.json === undefined ? {} : { body: JSON.stringify(init.json) }),
  });
}

async function json<T = Record<string, unknown>>(response: Promise<Response> | Response): Promise<T> {
  return (await (await response).json()) as T;
}

const stepGate = { kind: "step_gate", toolName: "Bash", input: { command: "make deploy" } };
const hookInput = (toolUseId: string) => ({ ...hookFixture("pre-tool-use"), tool_use_id: toolUseId });

/** The index-th request message posted to the stand-in, with the request id its buttons carry. */
async function posted(standIn: SlackWebApiStandIn, index: number) {
  const { args } = await standIn.requestPost(index);
  const blocks = args.blocks as unknown[];
  const id = decodeButton(buttonValue(blocks, Action.stepYes))!.r;
  return { channel: String(args.channel), ts: String(args.ts), blocks, id };
}

async function clickYes(url: string, message: { channel: string; ts: string; blocks: unknown[] }) {
  const value = buttonValue(message.blocks, Action.stepYes)!;
  const response = await postToSlackEndpoint(`${url}/slack/events`, blockAction({ actionId: Action.stepYes, value, channel: message.channel, ts: message.ts }));
  expect(response.status).toBe(200);
}

/**
 * Probes /readyz as a load balancer does until it says shutting down. A probe
 * that loses its connection while the relay starts draining (a reused
 * keep-alive socket reset mid-request) is simply probed again, as a load
 * balancer would; only the 503 counts.
 */
async function readyzOnceShuttingDown(url: string, since: number) {
  for (;;) {
    const response = await fetch(`${url}/readyz`).catch(() => undefined);
    if (response?.status === 503) return { elapsed: Date.now() - since, body: await response.json() };
    await sleep(20);
  }
}

describe("SIGTERM with Redis (shared store)", () => {
  it(
    "stops taking new work at once, waits out the grace, then denies the held hook call and cancels its request, while the long-polled request stays pending and the client carries on to the next instance, where a click answers it",
    { timeout: 90_000 },
    async () => {
      const { env, slack, port } = await environment("redis", 3);
      const first = await startServe(env, runs, port);
      const created = await json<{ id: string; expiresAt: string }>(call(first.url, "/v1/requests", { json: stepGate }));
      const longPolled = await posted(slack, 0);
      const client = new RelayClient({ url: first.url, token: TOKEN, initialRetryDelayMs: 100, maxRetryDelayMs: 400, retries: 60 });
      const waiting = client.wait(created.id, { expiresAt: created.expiresAt });
      const heldHook = call(first.url, HOOK, { json: hookInput("toolu_held") });
      const hookMessage = await posted(slack, 1);
      await sleep(300);

      const sigterm = Date.now();
      first.run.child.kill("SIGTERM");
      const readyz = await readyzOnceShuttingDown(first.url, sigterm);
      expect(readyz).toMatchObject({ body: { status: "shutting_down" } });
      expect(readyz.elapsed).toBeLessThan(1000);

      const refused = await call(first.url, "/v1/requests", { json: stepGate });
      expect(refused.status).toBe(503);
      expect(refused.headers.get("retry-after")).toBe("1");
      expect(refused.headers.get("connection")).toBe("close");
      expect(await json(refused)).toMatchObject({ error: { code: "relay_shutting_down" } });
      const lateHook = await call(first.url, HOOK, { json: hookInput("toolu_late") });
      expect(lateHook.status).toBe(200);
      expect(await json(lateHook)).toMatchObject({ hookSpecificOutput: { permissionDecision: "deny", permissionDecisionReason: DRAINING_DENY } });
      // The client library says it retries, so it is refused with 503 and carries on to the next instance.
      const clientHook = client.claudeCodeHook({ ...hookInput("toolu_client"), hook_event_name: "PreToolUse" }, { timeoutSeconds: 60 });

      expect((await first.run.done).code).toBe(0);
      expect(Date.now() - sigterm).toBeGreaterThanOrEqual(2900);
      expect(await json(heldHook)).toMatchObject({
        hookSpecificOutput: { permissionDecision: "deny", permissionDecisionReason: `${SHUTDOWN_REASON}, so the tool call was denied.` },
      });
      expect(JSON.stringify((await slack.waitFor("chat.update", (args) => args.ts === hookMessage.ts)).args.blocks)).toMatch(/Cancelled/);
      expect(slack.requestPosts()).toHaveLength(2);

      const second = await startServe(env, runs, port);
      expect(await json(call(second.url, `/v1/requests/${created.id}`))).toMatchObject({ status: "pending" });
      expect(await json(call(second.url, `/v1/requests/${hookMessage.id}`))).toMatchObject({ status: "cancelled", error: SHUTDOWN_REASON });
      await clickYes(second.url, longPolled);
      expect(await waiting).toMatchObject({ id: created.id, status: "answered", decision: { reply: "y" } });

      await clickYes(second.url, await posted(slack, 2));
      expect(await clientHook).toEqual({ hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "allow" } });
    },
  );

  it("lets a held hook call be answered during the grace, and exits as soon as nothing is held", { timeout: 60_000 }, async () => {
    const { env, slack, port } = await environment("redis", 20);
    const relay = await startServe(env, runs, port);
    const hook = call(relay.url, HOOK, { json: hookInput("toolu_in_grace") });
    const message = await posted(slack, 0);
    await sleep(200);

    const sigterm = Date.now();
    relay.run.child.kill("SIGTERM");
    await readyzOnceShuttingDown(relay.url, sigterm);
    await clickYes(relay.url, message);

    expect(await json(hook)).toEqual({ hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "allow" } });
    expect((await relay.run.done).code).toBe(0);
    expect(Date.now() - sigterm).toBeLessThan(10_000);
  });
});

describe("SIGTERM with the memory store", () => {
  it("after the grace, denies the held hook call and cancels every pending request, since none survives the process", { timeout: 60_000 }, async () => {
    const { env, slack, port } = await environment("memory", 1);
    const relay = await startServe(env, runs, port);
    const created = await json<{ id: string }>(call(relay.url, "/v1/requests", { json: stepGate }));
    const polledMessage = await posted(slack, 0);
    const poll = json(call(relay.url, `/v1/requests/${created.id}?wait=30`));
    const hook = call(relay.url, HOOK, { json: hookInput("toolu_memory") });
    const hookMessage = await posted(slack, 1);
    await sleep(200);

    const sigterm = Date.now();
    relay.run.child.kill("SIGTERM");

    expect(await json(hook)).toMatchObject({
      hookSpecificOutput: { permissionDecision: "deny", permissionDecisionReason: `${SHUTDOWN_REASON}, so the tool call was denied.` },
    });
    expect(Date.now() - sigterm).toBeGreaterThanOrEqual(900);
    expect(await poll).toMatchObject({ id: created.id, status: "cancelled", error: expect.stringMatching(/in-memory store/) });
    expect((await relay.run.done).code).toBe(0);
    for (const message of [polledMessage, hookMessage]) {
      expect(JSON.stringify((await slack.waitFor("chat.update", (args) => args.ts === message.ts)).args.blocks)).toMatch(/Cancelled/);
    }
  });
});
