/**
 * Shared helpers for tests that run against a real Redis server: the one
 * test/global-setup.ts provides for the run (REDIS_TEST_URL, or a throwaway
 * redis-server it started), connections, a unique key prefix per test,
 * cleanup of everything under that prefix, and a Redis that never answers.
 */
import { randomUUID } from "node:crypto";
import { createServer, type AddressInfo, type Socket } from "node:net";
import { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, inject } from "vitest";

export const REDIS_TEST_URL = inject("redisTestUrl");

/** A new connection to the test Redis; the caller quits it. */
export function connectTestRedis(): Redis {
  return new Redis(REDIS_TEST_URL, { maxRetriesPerRequest: 2 });
}

/**
 * For a test file: one connection to the test Redis (`redis()`, opened before
 * the first test, quit after the last) and fresh key prefixes (`prefix()`),
 * every key under each deleted after its test.
 */
export function useTestRedis(): { redis: () => Redis; prefix: () => string } {
  let redis: Redis | undefined;
  const prefixes: string[] = [];
  beforeAll(() => {
    redis = connectTestRedis();
  });
  afterEach(async () => {
    await Promise.all(prefixes.splice(0).map((prefix) => deleteKeysUnder(redis!, prefix)));
  });
  afterAll(async () => {
    await redis?.quit();
  });
  return {
    redis: () => redis!,
    prefix: () => {
      const prefix = uniquePrefix();
      prefixes.push(prefix);
      return prefix;
    },
  };
}

/** A prefix no other test uses, e.g. "test:3f9c0a1b". */
export function uniquePrefix(): string {
  return `test:${randomUUID().slice(0, 8)}`;
}

/** Every key under `prefix` (SCAN, never KEYS). */
export async function keysUnder(redis: Redis, prefix: string): Promise<string[]> {
  const found: string[] = [];
  let cursor = "0";
  do {
    const [next, batch] = await redis.scan(cursor, "MATCH", `${prefix}:*`, "COUNT", 1000);
    found.push(...batch);
    cursor = next;
  } while (cursor !== "0");
  return found;
}

/** Deletes every key under `prefix`. */
export async function deleteKeysUnder(redis: Redis, prefix: string): Promise<void> {
  const keys = await keysUnder(redis, prefix);
  for (let i = 0; i < keys.length; i += 500) await redis.del(...keys.slice(i, i + 500));
}

/** A server on loopback that takes connections and never answers: a Redis that hangs. `close()` drops its connections and stops it. */
export async function silentRedis(): Promise<{ url: string; close: () => Promise<void> }> {
  const sockets: Socket[] = [];
  const silent = createServer((socket) => sockets.push(socket));
  await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
  const { port } = silent.address() as AddressInfo;
  return {
    url: `redis://127.0.0.1:${port}`,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    },
  };
}
