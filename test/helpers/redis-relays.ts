/**
 * Several Slack-side relay instances (./slack-relay.ts) on one real Redis,
 * as a deployment behind a load balancer runs them: each instance has its
 * own request store and rule store with their own connections, all on the
 * test's own key prefix, and its own clock to move. Slack's Web API is stubbed with nock, which
 * intercepts for every instance at once: stub on one instance's `api` and
 * its `calls` then hold what every instance asked of Slack.
 *
 * `useRelaysOnRedis` registers the hooks: no network but loopback, a fresh
 * prefix per test, and after each test every instance closed, no unexpected
 * Web API call, every key under the prefix deleted (never a flush: the
 * test Redis is shared).
 */
import nock from "nock";
import { afterAll, afterEach, beforeAll, beforeEach, expect } from "vitest";
import type { RequestStore } from "../../src/requests/store.js";
import { connectRedisStore } from "../../src/store/redis-store.js";
import { connectRedisRuleStore } from "../../src/store/redis-rules.js";
import type { RuleStore } from "../../src/requests/rules.js";
import { connectTestRedis, deleteKeysUnder, REDIS_TEST_URL, uniquePrefix } from "./redis.js";
import { startSlackRelay, type SlackRelay, type SlackRelayOptions } from "./slack-relay.js";
import type { FakeSlackApi } from "./slack.js";

export interface RelaysOnRedis {
  /** Starts one more instance on the test's prefix. */
  start(options?: Omit<SlackRelayOptions, "store" | "rules">): Promise<SlackRelay>;
  /** Stops an instance and closes its store, as a process that exits: what it stored and queued stays in Redis. */
  stop(relay: SlackRelay): Promise<void>;
}

export function useRelaysOnRedis(): RelaysOnRedis {
  let prefix = "";
  const running = new Map<SlackRelay, [RequestStore, RuleStore]>();

  const stop = async (relay: SlackRelay) => {
    const [store, rules] = running.get(relay) ?? [];
    running.delete(relay);
    await relay.close();
    await rules?.close();
    await store?.close();
    expect(relay.unexpected).toEqual([]);
  };

  beforeAll(() => {
    nock.disableNetConnect();
    nock.enableNetConnect("127.0.0.1");
  });
  afterAll(() => nock.enableNetConnect());
  beforeEach(() => {
    prefix = uniquePrefix();
  });
  afterEach(async () => {
    for (const relay of [...running.keys()]) await stop(relay);
    const admin = connectTestRedis();
    await deleteKeysUnder(admin, prefix);
    await admin.quit();
    nock.cleanAll();
  });

  return {
    async start(options = {}) {
      const store = connectRedisStore(REDIS_TEST_URL, { prefix });
      await store.ready();
      const rules = connectRedisRuleStore(REDIS_TEST_URL, { prefix });
      const relay = await startSlackRelay({ ...options, store, rules });
      running.set(relay, [store, rules]);
      return relay;
    },
    stop,
  };
}

/** Answers the next `times` chat.postMessage calls (requests, thread replies, channel posts), each with a ts of its own. */
export function onPosts(api: FakeSlackApi, times: number): FakeSlackApi {
  let made = 0;
  return api.on(
    "chat.postMessage",
    (args) => {
      const ts = `1700000000.${String((made += 1)).padStart(6, "0")}`;
      return { ok: true, channel: args.channel, ts, message: { ts } };
    },
    times,
  );
}

/** Runs `sweep` on every instance at once, `rounds` times over; returns how many it sent in all. */
export async function sweepTogether(instances: SlackRelay[], sweep: (relay: SlackRelay) => Promise<number>, rounds = 3): Promise<number> {
  let sent = 0;
  for (let round = 0; round < rounds; round += 1) {
    const counts = await Promise.all(instances.map(sweep));
    sent += counts.reduce((sum, n) => sum + n, 0);
  }
  return sent;
}
