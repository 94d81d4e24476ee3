/**
 * A RequestService on the memory store with a fake messenger, ids req-1,
 * req-2, … and fake timers, so the service tests control time: the injected
 * clock reads the faked Date, and timers move with it.
 */
import { afterEach, beforeEach, vi } from "vitest";
import { FakeMessenger } from "./fake-messenger.js";
import { CreateRequestBody } from "../../src/protocol/request-body.js";
import { RequestService, type RequestServiceDeps } from "../../src/requests/service.js";
import { createMemoryStore } from "../../src/store/memory-store.js";
import type { RequestStore } from "../../src/requests/store.js";

/** Unix time in milliseconds at which every test starts. */
export const T0 = 1_700_000_000_000;
export const DEFAULT_CHANNEL = "C0DEFAULT01";

export function useFakeClock(): void {
  vi.useFakeTimers({ now: T0, toFake: ["setTimeout", "clearTimeout", "setInterval", "clearInterval", "Date"] });
}

export interface Harness {
  service: RequestService;
  store: RequestStore;
  messenger: FakeMessenger;
}

export function createHarness(deps: Partial<RequestServiceDeps> = {}): Harness {
  const now = () => Date.now();
  const store = deps.store ?? createMemoryStore({ now });
  const messenger = new FakeMessenger();
  let next = 0;
  const service = new RequestService({
    store,
    messenger,
    defaultTimeoutSeconds: 600,
    defaultChannel: DEFAULT_CHANNEL,
    now,
    newId: () => `req-${(next += 1)}`,
    ...deps,
  });
  return { service, store, messenger };
}

/** The harness of the running test (useHarness): its parts read through to the test's own, and what it swaps or adds is closed after it. */
export interface HarnessInUse extends Harness {
  /** Closes the test's harness and puts one made with `deps` in its place. */
  replace(deps?: Partial<RequestServiceDeps>): void;
  /** Another harness beside the test's (another relay instance, e.g. on the same store), closed after the test. */
  another(deps?: Partial<RequestServiceDeps>): Harness;
}

/**
 * The one setup of the service tests: before each test the fake clock
 * starts at T0 and a harness is made with `deps()` (run then, so a test file
 * can reset what its deps record); after it, every harness the test used is
 * closed and real timers come back.
 */
export function useHarness(deps: () => Partial<RequestServiceDeps> = () => ({})): HarnessInUse {
  let current: Harness | undefined;
  const others: Harness[] = [];
  beforeEach(() => {
    useFakeClock();
    current = createHarness(deps());
  });
  afterEach(() => {
    for (const harness of [current, ...others.splice(0)]) harness?.service.close();
    current = undefined;
    vi.useRealTimers();
  });
  const running = () => {
    if (!current) throw new Error("useHarness: the harness exists only while a test runs");
    return current;
  };
  return {
    get service() {
      return running().service;
    },
    get store() {
      return running().store;
    },
    get messenger() {
      return running().messenger;
    },
    replace(more = {}) {
      running().service.close();
      current = createHarness(more);
    },
    another(more = {}) {
      const harness = createHarness(more);
      others.push(harness);
      return harness;
    },
  };
}

/** A parsed request body: a Bash permission request with `fields` added, or `fields` alone when they name a kind. */
export function bodyOf(fields: Record<string, unknown> = {}): CreateRequestBody {
  const bash = { kind: "permission", toolName: "Bash", input: { command: "npm test" } };
  return CreateRequestBody.parse("kind" in fields ? fields : { ...bash, ...fields });
}

/** Lets every pending promise callback run (setImmediate is not faked). */
export const flush = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Follows a promise so a test can ask whether it has settled yet. */
export function watch<T>(promise: Promise<T>): { readonly settled: boolean; readonly value: Promise<T> } {
  let settled = false;
  void promise.then(
    () => (settled = true),
    () => (settled = true),
  );
  return {
    get settled() {
      return settled;
    },
    value: promise,
  };
}

/** A promise resolved from outside, to hold a messenger call open. */
export function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void; reject: (error: unknown) => void } {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

export const ALLOW = { behavior: "allow", updatedInput: { command: "npm test" } } as const;
