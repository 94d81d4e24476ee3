/**
 * A click is recorded before Slack gets its ack: the relay runs in its own
 * process (`approval-relay serve` on Redis) and is SIGKILLed the moment the
 * click's 200 arrives; a relay started again on the same Redis finds the
 * request decided. Redis is made to take half a second (a busy script on a
 * private redis-server) so that a relay acking before it records would be
 * killed with the answer still unwritten. And a relay SIGKILLed while Slack
 * refuses the decided message's update (429) leaves the update queued in
 * Redis: the next relay makes it, so the message does not keep live buttons.
 * Nor does one whose poster was SIGKILLed after Slack took the message and
 * before its reply came (the store never learned where it is; the soak's
 * "buttons left on an expired request's message after a SIGKILL", issue
 * 19): the relay that expires the request finds the message in the
 * channel's history, by the metadata every request message carries.
 */
import { Redis } from "ioredis";
import { afterEach, expect, it } from "vitest";
import { UPDATE_GRACE_MS } from "../../../src/requests/store.js";
import { Action, encodeButton } from "../../../src/slack/ids.js";
import { storeKeys } from "../../../src/store/keys.js";
import { startRedisServer, type RedisServer } from "../../helpers/redis-server.js";
import { blockAction, BOT_TOKEN, CHANNEL, postToSlackEndpoint, SIGNING_SECRET } from "../../helpers/slack.js";
import { startSlackWebApi, type SlackWebApiStandIn } from "../../helpers/slack-web-api.js";
import { killRuns, startServe, type CliRun } from "../../helpers/cli.js";
import { sleep } from "../../helpers/until.js";
import { ALICE, RELAY_BOT } from "../../fixtures/people.js";

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
  await killRuns(runs);
  await slack?.close();
  await server?.stop();
});

async function startRelay(env: Record<string, string>): Promise<string> {
  return (await startServe(env, runs)).url;
}

const api = (url: string, path: string, init: RequestInit = {}) =>
  fetch(`${url}${path}`, { ...init, headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" } }).then(
    async (r) => (await r.json()) as { id: string; status: string; decision?: unknown; slack?: { channel: string; ts: string } },
  );

/** A private Redis and the Slack stand-in; the environment of a relay process on them. */
async function environment(): Promise<Record<string, string>> {
  server = await startRedisServer();
  slack = await startSlackWebApi();
  return {
    SLACK_BOT_TOKEN: BOT_TOKEN,
    SLACK_SIGNING_SECRET: SIGNING_SECRET,
    SLACK_API_URL: slack.url,
    SLACK_DEFAULT_CHANNEL: CHANNEL,
    RELAY_TOKENS: `ci:${TOKEN}`,
    REDIS_URL: server.url,
    LOG_LEVEL: "warn",
  };
}

/** A private Redis, the Slack stand-in, a relay process on them, and a step_gate request it has posted. */
async function relayWithPostedRequest() {
  const env = await environment();
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

const blocksOf = (raw: unknown) => (typeof raw === "string" ? JSON.parse(raw) : raw) as Array<{ type: string }>;

it("a request whose poster was SIGKILLed before Slack's reply came has its message found and shown expired, without buttons", { timeout: 90_000 }, async () => {
  const env = await environment();
  const ts = `${Math.floor(Date.now() / 1000)}.000001`;
  let shown!: () => void;
  const onScreen = new Promise<void>((resolve) => (shown = resolve));
  // Slack keeps the message and shows it; its reply to the relay never comes.
  slack!.answer("chat.postMessage", (args) => {
    if (args.metadata === undefined) return undefined;
    slack!.messages.push({ channel: String(args.channel), ts, bot_id: RELAY_BOT.botId, text: args.text, metadata: args.metadata });
    shown();
    return "hang";
  });

  const first = await startServe(env, runs);
  const { id } = await api(first.url, "/v1/requests", {
    method: "POST",
    body: JSON.stringify({ kind: "step_gate", toolName: "Bash", input: { command: "terraform apply" }, timeoutSeconds: 3 }),
  });
  await onScreen;
  first.run.child.kill("SIGKILL");
  await first.run.done;

  const second = await startServe(env, runs);
  for (let i = 0; i < 100 && (await api(second.url, `/v1/requests/${id}`)).status === "pending"; i += 1) await sleep(100);
  const ended = await api(second.url, `/v1/requests/${id}`);
  expect(ended.status).toBe("expired");
  expect(ended.slack).toBeUndefined();
  // Ended with no message known, its update is queued for UPDATE_GRACE_MS (30 s) later (a post still on its way may land
  // meanwhile): the clock is moved on by making it due now, rather than waiting the grace out.
  const updates = storeKeys("relay").shards[0]!.queues.updates.due;
  const redis = new Redis(server!.url);
  const due = Number(await redis.zscore(updates, id));
  expect(due).toBeGreaterThan(Date.now());
  expect(due).toBeLessThanOrEqual(Date.now() + UPDATE_GRACE_MS);
  await redis.zadd(updates, Date.now(), id);
  await redis.quit();

  const update = await slack!.waitFor("chat.update", (args) => args.ts === ts, 60_000);
  expect(update.args.channel).toBe(CHANNEL);
  const blocks = blocksOf(update.args.blocks);
  expect(blocks.length).toBeGreaterThan(0);
  expect(blocks.some((block) => block.type === "actions")).toBe(false);
  // Posted once: the relay that stayed did not post the expired request again.
  expect(slack!.callsTo("chat.postMessage").filter((call) => call.args.metadata !== undefined)).toHaveLength(1);
});
