/**
 * The relay as `npm start` runs it (src/main.ts), across its life: the start
 * (the bot token check and what it does not hold up), Socket Mode (the quick
 * start's default), shutdown releasing every held call, a restart with Redis
 * keeping pending requests answerable, and two instances sharing one Redis
 * (the agent waits on one, the click lands on the other).
 */
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { createLogger, silentLogger } from "../../../src/logger.js";
import { startRelay } from "../../../src/main.js";
import { Action, encodeButton } from "../../../src/slack/ids.js";
import { AGENT_TOKEN, startFullRelay } from "../../helpers/full-relay.js";
import { freePort } from "../../helpers/ports.js";
import { connectTestRedis, deleteKeysUnder, REDIS_TEST_URL } from "../../helpers/redis.js";
import { blockAction, BOT_TOKEN, CHANNEL, TEAM_ID } from "../../helpers/slack.js";
import { startSlackWebApi, type SlackWebApiStandIn } from "../../helpers/slack-web-api.js";
import { startSocketModeServer } from "../../helpers/socket-mode-server.js";
import { ALICE } from "../../fixtures/people.js";
import { until } from "../../helpers/until.js";

const AUTH = { authorization: `Bearer ${AGENT_TOKEN.token}`, "content-type": "application/json" };
const preToolUse = readFileSync(new URL("../../fixtures/claude-code/pre-tool-use.json", import.meta.url), "utf8");

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

async function createRequest(url: string, body: unknown, query = ""): Promise<Response> {
  return fetch(`${url}/v1/requests${query}`, { method: "POST", headers: AUTH, body: JSON.stringify(body) });
}

async function getRequest(url: string, id: string, query = ""): Promise<Record<string, unknown>> {
  const response = await fetch(`${url}/v1/requests/${id}${query}`, { headers: AUTH });
  return (await response.json()) as Record<string, unknown>;
}

/** A Slack stand-in and a Redis key prefix shared by relay instances, cleaned up after the test. */
async function sharedRedis(): Promise<{ slack: SlackWebApiStandIn; env: Record<string, string> }> {
  const prefix = `test-lifecycle-${randomUUID().slice(0, 8)}`;
  const slack = await startSlackWebApi();
  cleanups.push(async () => {
    await slack.close();
    const redis = connectTestRedis();
    await deleteKeysUnder(redis, prefix);
    await redis.quit();
  });
  return { slack, env: { REDIS_URL: REDIS_TEST_URL, REDIS_PREFIX: prefix } };
}

/** A Slack Web API that answers auth.test with what `authTest` resolves to; its URL for SLACK_API_URL. */
async function slackAnswering(authTest: () => Promise<Record<string, unknown>>): Promise<string> {
  const server = createServer((req, res) => {
    req.resume();
    void authTest().then((reply) => res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(reply)));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  cleanups.push(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/`;
}

const startEnv = (slackApiUrl: string) => ({
  SLACK_BOT_TOKEN: BOT_TOKEN,
  SLACK_SIGNING_SECRET: "0f9e8d7c6b5a49382716a5b4c3d2e1f0",
  SLACK_API_URL: slackApiUrl,
  RELAY_TOKENS: `${AGENT_TOKEN.name}:${AGENT_TOKEN.token}`,
});

describe("the relay's start", () => {
  it("when Slack refuses the bot token, the start fails with how to fix it, and closes its port and its Redis connections", async () => {
    const { env } = await sharedRedis();
    const port = await freePort();
    const slackApiUrl = await slackAnswering(async () => ({ ok: false, error: "invalid_auth" }));

    await expect(startRelay({ env: { ...startEnv(slackApiUrl), ...env }, logger: silentLogger, port, host: "127.0.0.1" })).rejects.toThrow(
      "SLACK_BOT_TOKEN was refused by Slack (invalid_auth): copy the Bot User OAuth Token again from the app's OAuth & Permissions page",
    );

    await expect(fetch(`http://127.0.0.1:${port}/healthz`)).rejects.toThrow();
    const redis = connectTestRedis();
    cleanups.push(async () => void (await redis.quit()));
    const channel = `${env.REDIS_PREFIX}:ended`;
    await until(async () => (await redis.pubsub("NUMSUB", channel))[1] === 0, 2000, "the store's subscription to close");
  });

  it("when its port is taken, the start fails with one line naming PORT and closes its Redis connections", async () => {
    const { env } = await sharedRedis();
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
    cleanups.push(() => new Promise((resolve) => taken.close(() => resolve())));
    const port = (taken.address() as AddressInfo).port;
    const slackApiUrl = await slackAnswering(async () => ({ ok: true, team: "Acme", user: "relay" }));

    await expect(startRelay({ env: { ...startEnv(slackApiUrl), ...env }, logger: silentLogger, port, host: "127.0.0.1" })).rejects.toThrow(
      `PORT: port ${port} is already in use (EADDRINUSE): stop what listens there, or set PORT to a free port`,
    );

    const redis = connectTestRedis();
    cleanups.push(async () => void (await redis.quit()));
    const channel = `${env.REDIS_PREFIX}:ended`;
    await until(async () => (await redis.pubsub("NUMSUB", channel))[1] === 0, 2000, "the store's subscription to close");
  });

  it("answers /healthz while Slack has not yet answered the bot token check, and starts once it has", async () => {
    let accept: () => void = () => {};
    const accepted = new Promise<void>((resolve) => (accept = resolve));
    const slackApiUrl = await slackAnswering(async () => {
      await accepted;
      return { ok: true, team: "Acme", user: "relay" };
    });
    const port = await freePort();
    const starting = startRelay({ env: startEnv(slackApiUrl), logger: silentLogger, port, host: "127.0.0.1" });
    let started = false;
    void starting.then(
      () => (started = true),
      () => undefined,
    );

    await until(
      () =>
        fetch(`http://127.0.0.1:${port}/healthz`).then(
          (r) => r.ok,
          () => false,
        ),
      10_000,
      "/healthz",
    );
    expect(started).toBe(false);
    accept();
    const relay = await starting;
    cleanups.push(() => relay.close());
    expect(relay.url).toBe(`http://127.0.0.1:${port}`);
  });

  it("when Slack cannot be reached, it starts anyway and says /readyz will report Slack down", async () => {
    const logs: string[] = [];
    const relay = await startRelay({
      env: startEnv(`http://127.0.0.1:${await freePort()}/api/`),
      logger: createLogger({ level: "info", write: (line) => logs.push(line) }),
      port: 0,
      host: "127.0.0.1",
    });
    cleanups.push(() => relay.close());
    expect((await fetch(`${relay.url}/healthz`)).status).toBe(200);
    expect(logs.join("\n")).toMatch(/could not verify the Slack bot token at start; \/readyz will report Slack as down/);
  });
});

describe("the relay process", () => {
  it("in Socket Mode (SLACK_APP_TOKEN set), a click delivered over the WebSocket answers the waiting agent", async () => {
    const ts = "1700000000.000777";
    const standIn = await startSocketModeServer({
      "auth.test": () => ({ ok: true, team: "Acme", team_id: TEAM_ID, user: "relay" }),
      "chat.postMessage": () => ({ ok: true, channel: CHANNEL, ts }),
      "chat.update": () => ({ ok: true }),
    });
    const relay = await startRelay({
      env: {
        SLACK_BOT_TOKEN: BOT_TOKEN,
        SLACK_APP_TOKEN: "xapp-1-A0RELAY-lifecycle",
        SLACK_API_URL: standIn.apiUrl,
        SLACK_DEFAULT_CHANNEL: CHANNEL,
        RELAY_TOKENS: `${AGENT_TOKEN.name}:${AGENT_TOKEN.token}`,
      },
      logger: silentLogger,
      port: 0,
      host: "127.0.0.1",
    });
    cleanups.push(async () => {
      await relay.close();
      await standIn.close();
    });
    await standIn.connected();
    expect((await fetch(`${relay.url}/slack/events`, { method: "POST" })).status).toBe(404);

    const created = (await (await createRequest(relay.url, { kind: "step_gate", toolName: "Bash", input: { command: "make deploy" } })).json()) as {
      id: string;
    };
    const waiting = getRequest(relay.url, created.id, "?wait=10");
    await relay.service.idle();
    const ack = await standIn.deliver("interactive", blockAction({ actionId: Action.stepYes, value: encodeButton({ r: created.id }), ts }));

    expect(ack.envelope_id).toEqual(expect.any(String));
    expect(await waiting).toMatchObject({ id: created.id, status: "answered", decision: { reply: "y" } });
  });

  it("with the memory store and no grace, when it shuts down, a held long-poll gets its request cancelled at once (nothing survives the process) and a held hook call is denied and its request cancelled", async () => {
    const relay = await startFullRelay();
    let closed = false;
    cleanups.push(async () => {
      if (!closed) await relay.close();
    });
    const created = (await (await createRequest(relay.url, { kind: "step_gate", toolName: "Bash", input: { command: "ls" } })).json()) as { id: string };
    const poll = getRequest(relay.url, created.id, "?wait=30");
    const hook = fetch(`${relay.url}/v1/hooks/claude-code?timeout=60`, { method: "POST", headers: AUTH, body: preToolUse });
    const hookMessage = await relay.message(1);
    await relay.message(0);

    const started = Date.now();
    await relay.close();
    closed = true;

    expect(await poll).toMatchObject({ id: created.id, status: "cancelled", error: expect.stringMatching(/in-memory store does not outlive a restart/) });
    const reply = (await (await hook).json()) as { hookSpecificOutput: Record<string, unknown> };
    expect(Date.now() - started).toBeLessThan(5000);
    expect(reply.hookSpecificOutput).toMatchObject({
      hookEventName: "PreToolUse",
      permissionDecision: "deny",
      permissionDecisionReason: expect.stringMatching(/restarted before anyone answered/),
    });
    expect(JSON.stringify(await relay.updated(hookMessage))).toMatch(/Cancelled/);
  });

  it("with Redis, a request created before a restart is answered after it, on the new process", async () => {
    const { slack, env } = await sharedRedis();
    const before = await startFullRelay({ env, slack });
    const input = { command: "kubectl rollout restart deploy/api" };
    const created = (await (await createRequest(before.url, { kind: "permission", toolName: "Bash", input })).json()) as { id: string };
    const message = await before.message(0);
    await before.close();

    const after = await startFullRelay({ env, slack });
    cleanups.push(() => after.close());
    expect(await getRequest(after.url, created.id)).toMatchObject({ status: "pending" });
    await after.click(message, Action.allow);

    expect(await getRequest(after.url, created.id, "?wait=10")).toMatchObject({
      status: "answered",
      decision: { behavior: "allow", updatedInput: input },
      answeredBy: { id: ALICE.id },
    });
  });

  it("with two instances on one Redis, the agent waiting on the first gets the answer clicked on the second", async () => {
    const { slack, env } = await sharedRedis();
    const first = await startFullRelay({ env, slack });
    cleanups.push(() => first.close());
    const second = await startFullRelay({ env, slack });
    cleanups.push(() => second.close());

    const waiting = createRequest(first.url, { kind: "step_gate", toolName: "Bash", input: { command: "terraform apply" } }, "?wait=20");
    const message = await first.message(0);
    const clickedAt = Date.now();
    await second.click(message, Action.stepNo);

    const answered = (await (await waiting).json()) as Record<string, unknown>;
    expect(answered).toMatchObject({ status: "answered", decision: { reply: "n" } });
    expect(Date.now() - clickedAt).toBeLessThan(2000);
  });
});
