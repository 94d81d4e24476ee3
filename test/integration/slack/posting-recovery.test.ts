/**
 * A request is never silently dropped between being stored and being posted:
 * relay instances sharing one real Redis, each with its own connections.
 * When the instance that created a request dies before its message is
 * recorded, another instance posts it once the lease has run out, exactly
 * once, and it can then be answered. A slow post that keeps renewing its
 * lease (Slack rate limits, the real messenger against the Web API
 * stand-in) is never taken over, and stops when the request ends first.
 * Each instance is built as `npm start` builds it (buildRelay, src/main.ts).
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { silentLogger } from "../../../src/logger.js";
import { buildRelay, type RelayOverrides } from "../../../src/main.js";
import { CreateRequestBody } from "../../../src/protocol/request-body.js";
import type { RequestService, RequestMessenger } from "../../../src/requests/service.js";
import { connectRedisStore } from "../../../src/store/redis-store.js";
import type { RequestStore } from "../../../src/requests/store.js";
import { connectTestRedis, deleteKeysUnder, REDIS_TEST_URL, uniquePrefix } from "../../helpers/redis.js";
import { DEFAULT_CHANNEL } from "../../helpers/api-relay.js";
import { FakeMessenger } from "../../helpers/fake-messenger.js";
import { relayConfig } from "../../helpers/relay-config.js";
import { BOT_TOKEN, CHANNEL, MESSAGE_TS } from "../../helpers/slack.js";
import { SlackScript } from "../../helpers/slack-script.js";
import { startSlackWebApi } from "../../helpers/slack-web-api.js";
import { sleep, until } from "../../helpers/until.js";
import { ALICE } from "../../fixtures/people.js";

const T0 = 1_800_000_000_000;
const LEASE_MS = 30_000;
const body = CreateRequestBody.parse({ kind: "step_gate", toolName: "Bash", input: { command: "terraform apply" } });

interface Clock {
  t: number;
}

interface Instance {
  store: RequestStore;
  service: RequestService;
  close(): Promise<void>;
  /** Stops as a killed process does: no drain, nothing awaited, only its store connection cut. */
  die(): Promise<void>;
}

let prefix: string;
let api: SlackScript;
const opened: Instance[] = [];

beforeEach(async () => {
  prefix = uniquePrefix();
  api = new SlackScript(await startSlackWebApi());
});
afterEach(async () => {
  await Promise.all(opened.splice(0).map((relay) => relay.close()));
  await api.standIn.close();
  expect(api.unexpected).toEqual([]);
  const admin = connectTestRedis();
  await deleteKeysUnder(admin, prefix);
  await admin.quit();
});

/**
 * One relay process: its own store connections on the shared prefix, its own service; `clock` undefined → real time.
 * `slack` is a messenger standing in for Slack, or the real Slack side's waits (its Web API: the test's stand-in).
 */
async function instance(slack: RequestMessenger | NonNullable<RelayOverrides["slack"]>, clock?: Clock, postLeaseMs = LEASE_MS): Promise<Instance> {
  const now = clock ? () => clock.t : Date.now;
  const store = connectRedisStore(REDIS_TEST_URL, { prefix, now });
  await store.ready();
  const config = relayConfig({ SLACK_BOT_TOKEN: BOT_TOKEN, SLACK_API_URL: api.url, SLACK_DEFAULT_CHANNEL: DEFAULT_CHANNEL, RELAY_DEFAULT_TIMEOUT: "600" });
  const built = await buildRelay(config, {
    store,
    now,
    postLeaseMs,
    logger: silentLogger,
    slack: "post" in slack ? { messenger: slack } : slack,
  });
  let closed = false;
  const relay: Instance = {
    store,
    service: built.service,
    async close() {
      if (closed) return;
      closed = true;
      await built.close();
      await store.close();
    },
    async die() {
      closed = true;
      built.service.close();
      await store.close();
    },
  };
  opened.push(relay);
  return relay;
}

/** A messenger whose post never settles: the process dies before Slack answers. */
const dyingMessenger = (): RequestMessenger => ({
  post: () => new Promise(() => {}),
  showEnded: async () => {},
  remind: async () => {},
  tellOutcome: async () => {},
});

/** A relay instance that stores a request, starts posting it and dies; returns the request id. */
async function createThenDie(clock?: Clock, postLeaseMs = LEASE_MS): Promise<string> {
  const dying = await instance(dyingMessenger(), clock, postLeaseMs);
  const { record } = await dying.service.create({ tokenName: "ci-bot", body });
  await dying.die();
  return record.id;
}

describe("a request whose creating instance died before posting it", () => {
  it("is posted by another instance once the lease has run out, exactly once, and can then be answered", async () => {
    const clock: Clock = { t: T0 };
    const id = await createThenDie(clock);
    const [toB, toC] = [new FakeMessenger(), new FakeMessenger()];
    const [b, c] = [await instance(toB, clock), await instance(toC, clock)];
    const waiting = b.service.wait(id, 60_000);

    clock.t = T0 + LEASE_MS - 1;
    expect(await Promise.all([b.service.recoverUnposted(), c.service.recoverUnposted()])).toStrictEqual([0, 0]);
    clock.t = T0 + LEASE_MS;
    const started = await Promise.all([b.service.recoverUnposted(), c.service.recoverUnposted()]);
    await Promise.all([b.service.idle(), c.service.idle()]);
    expect(started.sort()).toStrictEqual([0, 1]);
    const refs = [...toB.refs, ...toC.refs];
    expect(refs).toHaveLength(1);
    expect((await c.service.get(id))?.slack).toStrictEqual(refs[0]);

    clock.t = T0 + 10 * LEASE_MS;
    expect(await Promise.all([b.service.recoverUnposted(), c.service.recoverUnposted()])).toStrictEqual([0, 0]);
    expect(toB.posts.length + toC.posts.length).toBe(1);

    const clicked = await c.service.findBySlackMessage(refs[0]!);
    expect(await c.service.answer(clicked!.id, { reply: "y" }, ALICE)).toMatchObject({ outcome: "applied" });
    expect(await waiting).toMatchObject({ id, status: "answered", decision: { reply: "y" } });
  });

  it("is posted by the sweeper of a surviving instance without anyone asking, and only once", async () => {
    const leaseMs = 150;
    const id = await createThenDie(undefined, leaseMs);
    const [toB, toC] = [new FakeMessenger(), new FakeMessenger()];
    const [b, c] = [await instance(toB, undefined, leaseMs), await instance(toC, undefined, leaseMs)];
    const stops = [b.service.startSweeper(20), c.service.startSweeper(20)];
    try {
      await until(() => toB.posts.length + toC.posts.length > 0, 3000, "a surviving instance to post the request");
      await sleep(2 * leaseMs);
      await Promise.all([b.service.idle(), c.service.idle()]);
    } finally {
      stops.forEach((stop) => stop());
    }
    expect([...toB.posts, ...toC.posts].map((record) => record.id)).toStrictEqual([id]);
    expect((await b.service.get(id))?.slack).toStrictEqual([...toB.refs, ...toC.refs][0]);
  });
});

describe("a slow post under Slack rate limits", () => {
  /** An instance posting through the real messenger and WebClient; each wait runs `during` and moves the clock. */
  async function postingInstance(clock: Clock, during: () => Promise<void>): Promise<Instance> {
    const sleep = async (ms: number) => {
      clock.t += ms;
      await during();
    };
    return instance({ random: () => 0.5, sleep }, clock);
  }

  it("keeps renewing its lease, so no other instance takes the request over while it waits longer than a lease", async () => {
    const clock: Clock = { t: T0 };
    api.on("chat.postMessage", { status: 429, headers: { "retry-after": "45" } }, 2).onPost();
    const other = new FakeMessenger();
    const b = await instance(other, clock);
    const claimedDuringWaits: number[] = [];
    const a = await postingInstance(clock, async () => {
      claimedDuringWaits.push(await b.service.recoverUnposted());
    });

    const { record } = await a.service.create({ tokenName: "ci-bot", body });
    await a.service.idle();
    expect(clock.t - T0).toBe(90_000);
    expect(claimedDuringWaits).toStrictEqual([0, 0]);
    expect(other.posts).toStrictEqual([]);
    expect(api.callsTo("chat.postMessage")).toHaveLength(3);
    api.done();
    expect((await b.service.get(record.id))?.slack).toStrictEqual({ channel: CHANNEL, ts: MESSAGE_TS });
    clock.t += 10 * LEASE_MS;
    expect(await b.service.recoverUnposted()).toBe(0);
  });

  it("stops without another call to Slack when the request is cancelled while it waits", async () => {
    const clock: Clock = { t: T0 };
    api.on("chat.postMessage", { status: 429, headers: { "retry-after": "5" } }).onPost();
    let id = "";
    const a = await postingInstance(clock, async () => {
      await a.service.cancel(id, "agent");
    });

    id = (await a.service.create({ tokenName: "ci-bot", body })).record.id;
    await a.service.idle();
    expect(api.callsTo("chat.postMessage")).toHaveLength(1);
    const record = await a.service.get(id);
    expect(record).toMatchObject({ status: "cancelled", cancelledBy: "agent" });
    expect(record?.slack).toBeUndefined();
  });
});
