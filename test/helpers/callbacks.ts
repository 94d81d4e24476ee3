/**
 * A relay's callback side for tests: a relay from buildRelay on a given store,
 * its CallbackWorker (run by the test) delivering to real HTTP receivers, and one fake clock that
 * both read, so retries and give-ups are reached by moving the clock instead
 * of waiting.
 */
import type { Redis } from "ioredis";
import type { CallbackWorker } from "../../src/callbacks/worker.js";
import { buildRelay, type RelayOverrides } from "../../src/main.js";
import { createLogger } from "../../src/logger.js";
import { CreateRequestBody } from "../../src/protocol/request-body.js";
import type { RequestService } from "../../src/requests/service.js";
import { createMemoryStore } from "../../src/store/memory-store.js";
import { createRedisStore } from "../../src/store/redis-store.js";
import type { RequestStore } from "../../src/requests/store.js";
import { DEFAULT_CHANNEL, TOKENS } from "./api-relay.js";
import { FakeMessenger } from "./fake-messenger.js";
import { relayConfig } from "./relay-config.js";

export { TOKENS };
/** Unix ms at which every harness clock starts. */
export const T0 = 1_800_000_000_000;

export interface Clock {
  t: number;
}

/** Opens a store on `clock`; `retentionMs` defaults to the store's own. */
export type StoreFactory = (clock: Clock, retentionMs?: number) => Promise<RequestStore>;

export const memoryStores: StoreFactory = async (clock, retentionMs) =>
  createMemoryStore({ now: () => clock.t, ...(retentionMs === undefined ? {} : { retentionMs }) });

/** Stores on `redis` under `prefix`: several calls share one queue, as relay instances do. */
export const redisStores =
  (redis: () => Redis, prefix: () => string): StoreFactory =>
  async (clock, retentionMs) => {
    const store = createRedisStore({ redis: redis(), prefix: prefix(), now: () => clock.t, ...(retentionMs === undefined ? {} : { retentionMs }) });
    await store.ready();
    return store;
  };

export interface Instance {
  store: RequestStore;
  service: RequestService;
  messenger: FakeMessenger;
  worker: CallbackWorker;
  /** Every log line this instance wrote. */
  logs: string[];
  close(): Promise<void>;
}

export type WorkerOverrides = NonNullable<RelayOverrides["callbacks"]>;

/** One relay instance (buildRelay: its service and callback worker, not started) on `store`, on `clock`. */
export async function instance(store: RequestStore, clock: Clock, overrides: WorkerOverrides = {}): Promise<Instance> {
  const logs: string[] = [];
  const logger = createLogger({ level: "debug", write: (line) => logs.push(line), now: () => clock.t });
  const messenger = new FakeMessenger();
  const config = relayConfig({ SLACK_DEFAULT_CHANNEL: DEFAULT_CHANNEL }, { tokens: TOKENS, defaultTimeoutSeconds: 60 });
  const relay = await buildRelay(config, {
    logger,
    now: () => clock.t,
    store,
    slack: { messenger },
    callbacks: { random: () => 0, ...overrides },
  });
  return {
    store,
    service: relay.service,
    messenger,
    worker: relay.callbacks,
    logs,
    async close() {
      await relay.close();
      await store.close();
    },
  };
}

/** A valid step_gate body whose callback goes to `url`. */
export const callbackBody = (url: string, over: Record<string, unknown> = {}): CreateRequestBody =>
  CreateRequestBody.parse({ kind: "step_gate", toolName: "Bash", input: { command: "deploy" }, callbackUrl: url, ...over });
