/**
 * A click is recorded before Slack gets its ack: the relay runs in its own
 * process (`approval-relay serve` on Redis) and is SIGKILLed the moment the
 * click's 200 arrives; a relay started again on the same Redis finds the
 * request decided. Redis is made to take half a second (a busy script on a
 * private redis-server) so that a relay acking before it records would be
 * killed with the answer still unwritten. And a relay SIGKILLed while Slack
 * refuses the decided message's update (429) leaves the update queued in
 * Redis: the next relay makes it, so the message does not keep live buttons.
 */
import { Redis } from "ioredis";
import { afterEach, expect, it } from "vitest";
import { Action, encodeButton } from "../../../src/slack/ids.js";
import { freePort } from "../../helpers/ports.js";
import { startRedisServer, type RedisServer } from "../../helpers/redis-server.js";
import { blockAction, BOT_TOKEN, CHANNEL, postToSlackEndpoint, SIGNING_SECRET } from "../../helpers/slack.js";
import { startSlackWebApi, type SlackWebApiStandIn } from "../../helpers/slack-web-api.js";
import { startCli, type CliRun } from "../../helpers/cli.js";
import { sleep } from "../../helpers/until.js";
import { ALICE } from "../../fixtures/people.js";

const TOKEN = "tok_sigkill_0123456789abcdef";
/** Keeps Redis busy for ARGV[1] milliseconds: every other client waits meanwhile. */
const BUSY = `
local t = redis.call('TIME')
local start = tonumber(t[1]) * 1000000 + tonumber(t[2])
repeat
  local n = redis.call('TIME')
until tonumber(n[1]) * 1000000 + tonumber(n[2]) - start >= tonumber(ARGV[1]) * 1000
return 1`;

let server: RedisServer | undefined;
let slack: SlackWebApiStandIn | undefined;
const runs: CliRun[] = [];

afterEach(async () => {
  for (const run of runs.splice(0)) {
    run.child.kill("SIGKILL");
    await run.done;
  }
  await slack?.close();
  await server?.stop();
});

async function startRelay(env: Record<string, string>): Promise<string> {
  const port = await freePort();
  const run = startCli(["serve"], { tsx: true, env: { ...env, PORT: String(port) } });
  runs.push(run);
  const url = `http://127.0.0.1:${port}`;
  const end = Date.now() + 20_000;
  while (Date.now() < end) {
    if (
      await fetch(`${url}/healthz`).then(
        (r) => r.ok,
        () => false,
      )
    )
      return url;
    await sleep(100);
  }
  throw new Error(`the relay did not become healthy: ${(await Promise.race([run.done, sleep(10).then(() => undefined)]))?.stderr ?? ""}`);
}

const api = (url: string, path: string, init: RequestInit = {}) =>
  fetch(`${url}${path}`, { ...init, headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" } }).then(
    async (r) => (await r.json()) as { id: string; status: string; decision?: unknown; slack?: { channel: string; ts: string } },
  );

/** A private Redis, the Slack stand-in, a relay process on them, and a step_gate request it has posted. */
async function relayWithPostedRequest() {
  server = await startRedisServer();
  slack = await startSlackWebApi();
  const env = {
    SLACK_BOT_TOKEN: BOT_TOKEN,
    SLACK_SIGNING_SECRET: SIGNING_SECRET,
    SLACK_API_URL: slack.url,
    SLACK_DEFAULT_CHANNEL: CHANNEL,
    RELAY_TOKENS: `ci:${TOKEN}`,
    REDIS_URL: server.url,
    LOG_LEVEL: "warn",
  };
  const first = await startRelay(env);
  const { id } = await api(first, "/v1/requests", { method: "POST", body: JSON.stringify({ kind: "step_gate", toolName: "Bash", input: { command: "ls" } }) });
  let slackRef: { channel: string; ts: string } | undefined;
  for (let i = 0; i < 200 && !slackRef; i += 1) {
    slackRef = (await api(first, `/v1/requests/${id}`)).slack;
    if (!slackRef) await sleep(25);
  }
  expect(slackRef).toBeDefined();
  return { env, first, id, slackRef: slackRef! };
}

it("a relay killed right after acking a click leaves the request decided for the next relay on the same Redis", { timeout: 60_000 }, async () => {
  const { env, first, id, slackRef } = await relayWithPostedRequest();

  const blocker = new Redis(server!.url);
  const busy = blocker.eval(BUSY, 0, 500);
  await sleep(20);
  const click = await postToSlackEndpoint(
    `${first}/slack/events`,
    blockAction({ actionId: Action.stepYes, value: encodeButton({ r: id }), channel: slackRef.channel, ts: slackRef.ts }),
  );
  runs[0]!.child.kill("SIGKILL");
  expect(click.status).toBe(200);
  await runs[0]!.done;
  await busy;
  await blocker.quit();

  const second = await startRelay(env);
  expect(await api(second, `/v1/requests/${id}`)).toMatchObject({ id, status: "answered", decision: { reply: "y" } });
});

it("a relay killed while Slack refuses the decided message's update leaves the update to the next relay on the same Redis", { timeout: 90_000 }, async () => {
  const { env, first, id, slackRef } = await relayWithPostedRequest();

  slack!.refuse("chat.update", 10_000, { status: 429, retryAfterSeconds: 1 });
  const click = await postToSlackEndpoint(
    `${first}/slack/events`,
    blockAction({ actionId: Action.stepYes, value: encodeButton({ r: id }), channel: slackRef.channel, ts: slackRef.ts }),
  );
  expect(click.status).toBe(200);
  for (let i = 0; i < 200 && slack!.refused("chat.update") === 0; i += 1) await sleep(25);
  expect(slack!.refused("chat.update")).toBeGreaterThan(0);
  runs[0]!.child.kill("SIGKILL");
  await runs[0]!.done;
  const refusedBeforeKill = slack!.refused("chat.update");
  slack!.refuse("chat.update", 0, { status: 429 });

  const second = await startRelay(env);
  expect(await api(second, `/v1/requests/${id}`)).toMatchObject({ id, status: "answered", decision: { reply: "y" } });
  const taken = () => slack!.callsTo("chat.update").slice(refusedBeforeKill);
  for (let i = 0; i < 450 && taken().length === 0; i += 1) await sleep(100);
  const [update] = taken();
  expect(update?.args).toMatchObject({ channel: slackRef.channel, ts: slackRef.ts });
  // The decided message: who answered, and no buttons left.
  const raw = update?.args.blocks;
  const blocks = (typeof raw === "string" ? JSON.parse(raw) : raw) as Array<{ type: string }>;
  expect(blocks.length).toBeGreaterThan(0);
  expect(blocks.some((block) => block.type === "actions")).toBe(false);
  expect(JSON.stringify(blocks)).toContain(ALICE.id);
});
