/**
 * A relay's callback side for tests: a real RequestService on a given store,
 * a CallbackWorker delivering to real HTTP receivers, and one fake clock that
 * both read, so retries and give-ups are reached by moving the clock instead
 * of waiting.
 */
import type { Redis } from "ioredis";
import { CallbackWorker, type CallbackWorkerOptions } from "../../src/callbacks/worker.js";
import { createLogger } from "../../src/logger.js";
import { CreateRequestBody } from "../../src/protocol/request-body.js";
import { RequestService } from "../../src/requests/service.js";
import { createMemoryStore } from "../../src/store/memory-store.js";
import { createRedisStore } from "../../src/store/redis-store.js";
import type { RequestStore } from "../../src/requests/store.js";
import { DEFAULT_CHANNEL, TOKENS } from "./api-relay.js";
import { FakeMessenger } from "./fake-messenger.js";

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

export type WorkerOverrides = Partial<Omit<CallbackWorkerOptions, "store">>;

/** One relay instance's service and worker on `store`, both on `clock`. */
export function instance(store: RequestStore, clock: Clock, overrides: WorkerOverrides = {}): Instance {
  const logs: string[] = [];
  const logger = createLogger({ level: "debug", write: (line) => logs.push(line), now: () => clock.t });
  const messenger = new FakeMessenger();
  const now = () => clock.t;
  const service = new RequestService({ store, messenger, logger, now, defaultChannel: DEFAULT_CHANNEL, defaultTimeoutSeconds: 60 });
  const secrets = new Map(TOKENS.map((t) => [t.name, t.token]));
  const worker = new CallbackWorker({
    store,
    tokenSecret: (name) => secrets.get(name),
    now,
    random: () => 0,
    logger,
    ...overrides,
  });
  return {
    store,
    service,
    messenger,
    worker,
    logs,
    async close() {
      await worker.stop();
      await service.idle();
      service.close();
      await store.close();
    },
  };
}

/** A valid step_gate body whose callback goes to `url`. */
export const callbackBody = (url: string, over: Record<string, unknown> = {}): CreateRequestBody =>
  CreateRequestBody.parse({ kind: "step_gate", toolName: "Bash", input: { command: "deploy" }, callbackUrl: url, ...over });
