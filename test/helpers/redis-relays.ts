/**
 * Several Slack-side relay instances (./slack-relay.ts) on one real Redis,
 * as a deployment behind a load balancer runs them: each instance has its
 * own request store and rule store with their own connections, all on the
 * test's own key prefix, and its own clock to move. They share one Slack
 * Web API stand-in and one script (./slack-script.ts), as instances of one
 * deployment share Slack: script on any instance's `api` and its `calls`
 * then hold what every instance asked of Slack.
 *
 * `useRelaysOnRedis` registers the hooks: a fresh prefix and stand-in per
 * test, and after each test every instance closed, no unexpected Web API
 * call, every key under the prefix deleted (never a flush: the test Redis
 * is shared).
 *
 * `useFullRelaysOnRedis` does the same for whole relays as `approval-relay
 * serve` runs them (./full-relay.ts: agent API, /mcp, hooks, Slack over
 * HTTP), started before each test on its prefix with one Slack stand-in:
 * for what must hold across instances behind a load balancer.
 */
import { afterEach, beforeEach, expect } from "vitest";
import type { RequestStore } from "../../src/requests/store.js";
import { connectRedisStore } from "../../src/store/redis-store.js";
import { connectRedisRuleStore } from "../../src/store/redis-rules.js";
import type { RuleStore } from "../../src/requests/rules.js";
import { connectTestRedis, deleteKeysUnder, REDIS_TEST_URL, uniquePrefix } from "./redis.js";
import { startSlackRelay, type SlackRelay, type SlackRelayOptions } from "./slack-relay.js";
import { SlackScript } from "./slack-script.js";
import { startSlackWebApi, type SlackWebApiStandIn } from "./slack-web-api.js";
import { startFullRelay, type FullRelay } from "./full-relay.js";

export interface RelaysOnRedis {
  /** Starts one more instance on the test's prefix. */
  start(options?: Omit<SlackRelayOptions, "store" | "rules">): Promise<SlackRelay>;
  /** Stops an instance and closes its store, as a process that exits: what it stored and queued stays in Redis. */
  stop(relay: SlackRelay): Promise<void>;
}

export function useRelaysOnRedis(): RelaysOnRedis {
  let prefix = "";
  let api: SlackScript | undefined;
  const running = new Map<SlackRelay, [RequestStore, RuleStore]>();

  const stop = async (relay: SlackRelay) => {
    const [store, rules] = running.get(relay) ?? [];
    running.delete(relay);
    await relay.close();
    await rules?.close();
    await store?.close();
    expect(relay.unexpected).toEqual([]);
  };

  beforeEach(async () => {
    prefix = uniquePrefix();
    api = new SlackScript(await startSlackWebApi());
  });
  afterEach(async () => {
    for (const relay of [...running.keys()]) await stop(relay);
    const admin = connectTestRedis();
    await deleteKeysUnder(admin, prefix);
    await admin.quit();
    await api?.standIn.close();
  });

  return {
    async start(options = {}) {
      const store = connectRedisStore(REDIS_TEST_URL, { prefix });
      await store.ready();
      const rules = connectRedisRuleStore(REDIS_TEST_URL, { prefix });
      const relay = await startSlackRelay({ ...options, store, rules, api: api! });
      running.set(relay, [store, rules]);
      return relay;
    },
    stop,
  };
}

/** Answers the next `times` chat.postMessage calls (requests, thread replies, channel posts), each with a ts of its own. */
export function onPosts(api: SlackScript, times: number): SlackScript {
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

export interface FullRelaysOnRedis {
  /** This test's instances, in the order they started. */
  readonly relays: readonly FullRelay[];
  /** The Slack stand-in they share. */
  readonly slack: SlackWebApiStandIn;
}

/**
 * Before each test, `count` whole relays on one fresh Redis prefix and one
 * Slack stand-in, with `env` over startFullRelay's (e.g. RELAY_TOKENS); after
 * it, none has logged an error, all are closed, and the prefix's keys deleted.
 * A test's own hooks registered after this run inside it (after-hooks first).
 */
export function useFullRelaysOnRedis(count: number, env: Record<string, string> = {}): FullRelaysOnRedis {
  let prefix = "";
  let slack: SlackWebApiStandIn | undefined;
  const relays: FullRelay[] = [];

  beforeEach(async () => {
    prefix = uniquePrefix();
    slack = await startSlackWebApi();
    for (let i = 0; i < count; i += 1) relays.push(await startFullRelay({ slack, env: { REDIS_URL: REDIS_TEST_URL, REDIS_PREFIX: prefix, ...env } }));
  }, 30_000);
  afterEach(async () => {
    const errors = relays.flatMap((relay) => relay.errors());
    for (const relay of relays.splice(0)) await relay.close();
    await slack?.close();
    const admin = connectTestRedis();
    await deleteKeysUnder(admin, prefix);
    await admin.quit();
    expect(errors).toEqual([]);
  });

  return {
    get relays() {
      return relays;
    },
    get slack() {
      if (!slack) throw new Error("useFullRelaysOnRedis: the relays start before each test");
      return slack;
    },
  };
}
