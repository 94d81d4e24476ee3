/**
 * Decided messages never keep live buttons (issue 7): the update of an ended
 * request's Slack message is retried until Slack takes it, honouring
 * Retry-After, and survives the relay that ended the request. Real Redis,
 * relays built as `npm start` builds them (buildRelay), the real messenger
 * and WebClient against the local Web API stand-in.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { silentLogger } from "../../../src/logger.js";
import { buildRelay } from "../../../src/main.js";
import { CreateRequestBody } from "../../../src/protocol/request-body.js";
import type { RequestMessenger } from "../../../src/requests/delivery.js";
import { UPDATE_GRACE_MS, type RequestStore } from "../../../src/requests/store.js";
import { connectRedisStore } from "../../../src/store/redis-store.js";
import { connectTestRedis, deleteKeysUnder, REDIS_TEST_URL, uniquePrefix } from "../../helpers/redis.js";
import { relayConfig } from "../../helpers/relay-config.js";
import { hasNoButtons } from "../../helpers/slack-relay.js";
import { startSlackWebApi, type SlackWebApiStandIn } from "../../helpers/slack-web-api.js";
import { BOT_TOKEN } from "../../helpers/slack.js";
import { until } from "../../helpers/until.js";
import { ALICE } from "../../fixtures/people.js";

const CHANNEL = "C0UPDATES01";
const body = CreateRequestBody.parse({ kind: "step_gate", toolName: "Bash", input: { command: "terraform apply" } });

let prefix: string;
let slack: SlackWebApiStandIn;
const closing: Array<() => Promise<void>> = [];

beforeEach(async () => {
  prefix = uniquePrefix();
  slack = await startSlackWebApi();
});
afterEach(async () => {
  for (const close of closing.splice(0).reverse()) await close();
  await slack.close();
  const admin = connectTestRedis();
  await deleteKeysUnder(admin, prefix);
  await admin.quit();
});

/**
 * One relay instance on the shared Redis prefix; `messenger` stands in for its Slack side, which is otherwise the real one against
 * the stand-in. `close` stops it as SIGTERM does; `die` as a killed process: nothing awaited, only its store connection cut.
 */
async function instance(options: { now?: () => number; messenger?: RequestMessenger } = {}) {
  const now = options.now ?? Date.now;
  const store: RequestStore = connectRedisStore(REDIS_TEST_URL, { prefix, now });
  await store.ready();
  const config = relayConfig({ SLACK_BOT_TOKEN: BOT_TOKEN, SLACK_API_URL: slack.url, SLACK_DEFAULT_CHANNEL: CHANNEL, RELAY_DEFAULT_TIMEOUT: "600" });
  const relay = await buildRelay(config, { store, now, logger: silentLogger, ...(options.messenger ? { slack: { messenger: options.messenger } } : {}) });
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await relay.close();
    await store.close();
  };
  const die = async () => {
    closed = true;
    relay.service.close();
    await store.close();
  };
  closing.push(close);
  return { store, service: relay.service, close, die };
}

describe("the message of a decided request", () => {
  it("when Slack answers chat.update with 429 for a while, it is updated once Slack takes it, never before Retry-After", async () => {
    const relay = await instance();
    const stop = relay.service.startSweeper(50);
    closing.push(async () => stop());
    const { record } = await relay.service.create({ tokenName: "ci-bot", body });
    const posted = await slack.waitFor("chat.postMessage");
    await until(async () => (await relay.service.get(record.id))?.slack !== undefined, 3000, "the message to be recorded");
    slack.refuse("chat.update", 2, { status: 429, retryAfterSeconds: 1 });

    const answeredAt = Date.now();
    await relay.service.answer(record.id, { reply: "y" }, ALICE);
    const update = await slack.waitFor("chat.update", (_args, index) => index === 2, 8000);
    expect(Date.now() - answeredAt).toBeGreaterThanOrEqual(2000);
    expect(slack.callsTo("chat.update")).toHaveLength(3);
    expect(slack.refused("chat.update")).toBe(2);
    expect(update.args).toMatchObject({ channel: CHANNEL, ts: posted.args.ts });
    expect(hasNoButtons(update.args.blocks)).toBe(true);
    expect(JSON.stringify(update.args.blocks)).toContain(ALICE.id);
    await relay.service.idle();
    expect(await relay.service.sweepUpdates()).toBe(0);
  });

  it("when the relay that ended the request stops before Slack took the update, the next relay on the same Redis makes it", async () => {
    const clock = { t: Date.now() };
    const now = () => clock.t;
    const first = await instance({ now });
    const { record } = await first.service.create({ tokenName: "ci-bot", body });
    await first.service.idle();
    const posted = await slack.waitFor("chat.postMessage");
    // Slack keeps refusing the update until this relay is gone.
    slack.refuse("chat.update", 1, { status: 429, retryAfterSeconds: 120 });
    await first.service.answer(record.id, { reply: "n" }, ALICE);
    await first.service.idle();
    expect(slack.callsTo("chat.update")).toHaveLength(1);
    await first.close();

    const second = await instance({ now });
    expect(await second.service.sweepUpdates()).toBe(0);
    clock.t += 121_000;
    expect(await second.service.sweepUpdates()).toBe(1);
    const update = await slack.waitFor("chat.update", (_args, index) => index === 1);
    expect(update.args).toMatchObject({ channel: CHANNEL, ts: posted.args.ts });
    expect(hasNoButtons(update.args.blocks)).toBe(true);
    clock.t += 10 * UPDATE_GRACE_MS;
    expect(await second.service.sweepUpdates()).toBe(0);
    expect(slack.callsTo("chat.update")).toHaveLength(2);
  });

  it("when the relay dies in the middle of the update, another relay makes it once the grace period has passed", async () => {
    const clock = { t: Date.now() };
    const now = () => clock.t;
    const hanging: RequestMessenger = {
      post: async (request) => ({ channel: request.channel, ts: "1700000000.000900" }),
      showEnded: () => new Promise(() => {}),
      remind: async () => {},
      tellOutcome: async () => {},
    };
    const first = await instance({ now, messenger: hanging });
    const { record } = await first.service.create({ tokenName: "ci-bot", body });
    await until(async () => (await first.service.get(record.id))?.slack !== undefined, 3000, "the message to be recorded");
    await first.service.cancel(record.id, "agent");
    await first.die();

    const second = await instance({ now });
    clock.t += UPDATE_GRACE_MS - 1;
    expect(await second.service.sweepUpdates()).toBe(0);
    clock.t += 1;
    expect(await second.service.sweepUpdates()).toBe(1);
    const update = await slack.waitFor("chat.update");
    expect(update.args).toMatchObject({ channel: CHANNEL, ts: "1700000000.000900" });
    expect(JSON.stringify(update.args.blocks)).toContain("Cancelled");
  });
});
