/**
 * Vitest globalSetup: the Redis the tests use. Unless REDIS_TEST_URL names
 * one, it starts a throwaway redis-server from the PATH for this run (free
 * port, own temp dir, no persistence) and stops it at the end, so `npm test`
 * needs nothing started by hand and never touches a developer's own Redis.
 * Tests read the URL with `inject("redisTestUrl")` (test/helpers/redis.ts).
 * It also makes the empty folder the run's compiled CLI goes in
 * (test/helpers/cli.ts compiles it there on first use) and removes it at the end.
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Redis } from "ioredis";
import type { TestProject } from "vitest/node";
import { findRedisServer, INSTALL_REDIS, startRedisServer } from "./helpers/redis-server.js";

declare module "vitest" {
  export interface ProvidedContext {
    /** redis://… of the Redis this run's tests use. */
    redisTestUrl: string;
    /** An empty folder of this run's, under node_modules/.cache (so `zod` resolves), for test/helpers/cli.ts's compiled CLI. */
    cliBuildDir: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const stopRedis = await provideRedis(project);
  const cache = fileURLToPath(new URL("../node_modules/.cache", import.meta.url));
  mkdirSync(cache, { recursive: true });
  const cliBuildDir = mkdtempSync(join(cache, "approval-relay-cli-"));
  project.provide("cliBuildDir", cliBuildDir);
  return async () => {
    rmSync(cliBuildDir, { recursive: true, force: true });
    await stopRedis?.();
  };
}

/** Provides REDIS_TEST_URL, or a redis-server started for the run; returns how to stop what it started. */
async function provideRedis(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  const given = process.env.REDIS_TEST_URL;
  if (given) {
    await checkAnswers(given);
    project.provide("redisTestUrl", given);
    return undefined;
  }
  const binary = findRedisServer();
  if (!binary) throw new Error(`The Redis tests need a redis-server and there is none on the PATH: ${INSTALL_REDIS}.`);
  const server = await startRedisServer(binary);
  project.provide("redisTestUrl", server.url);
  return () => server.stop();
}

/** Fails the run at once, with one clear line, when REDIS_TEST_URL does not answer. */
async function checkAnswers(url: string): Promise<void> {
  const redis = new Redis(url, { lazyConnect: true, connectTimeout: 3000, maxRetriesPerRequest: 0, retryStrategy: () => null });
  let cause: unknown;
  redis.on("error", (error) => (cause = error));
  try {
    await redis.connect();
    await redis.ping();
  } catch (error) {
    cause ??= error;
    const reason = cause instanceof Error ? cause.message : String(cause);
    throw new Error(`REDIS_TEST_URL does not answer (${reason}); unset it to let the tests start their own redis-server.`);
  } finally {
    redis.disconnect();
  }
}
