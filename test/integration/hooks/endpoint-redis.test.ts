/**
 * The hook endpoint on the Redis store: a retried hook call joins the
 * request the first call made (the idempotency key lives in Redis, so this
 * holds across relay instances), a retry after the answer gets it at once,
 * and a disconnect cancels the request for every instance.
 */
import { afterEach, beforeEach, expect, it } from "vitest";
import { connectRedisStore } from "../../../src/store/redis-store.js";
import { startApiRelay, type ApiRelay } from "../../helpers/api-relay.js";
import { connectTestRedis, deleteKeysUnder, REDIS_TEST_URL, uniquePrefix } from "../../helpers/redis.js";
import { hookFixture } from "../../fixtures/claude-code.js";
import { ALICE } from "../../fixtures/people.js";
import { until } from "../../helpers/until.js";

let relay: ApiRelay;
let prefix: string;
beforeEach(async () => {
  prefix = uniquePrefix();
  relay = await startApiRelay({ store: connectRedisStore(REDIS_TEST_URL, { prefix }) });
});
afterEach(async () => {
  await relay.close();
  const redis = connectTestRedis();
  await deleteKeysUnder(redis, prefix);
  await redis.quit();
});

const hook = (body: unknown, signal?: AbortSignal) => relay.call("/v1/hooks/claude-code", { json: body, ...(signal ? { signal } : {}) });

it("with Redis, a retried PreToolUse joins the first request, both get the answer, and a late retry gets it at once", async () => {
  const first = hook(hookFixture("pre-tool-use"));
  const retry = hook(hookFixture("pre-tool-use"));
  await until(() => relay.service.waiting === 2);
  await relay.service.idle();
  expect(relay.messenger.posts).toHaveLength(1);
  await relay.service.answer(relay.messenger.posts[0]!.id, { reply: "q" }, ALICE);
  const stopped = {
    continue: false,
    stopReason: "Execution stopped manually by the user.",
    hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: "Execution stopped manually by the user." },
  };
  expect((await first).body).toEqual(stopped);
  expect((await retry).body).toEqual(stopped);
  expect((await hook(hookFixture("pre-tool-use"))).body).toEqual(stopped);
  await relay.service.idle();
  expect(relay.messenger.posts).toHaveLength(1);
});

it("with Redis, Claude Code closing the connection cancels the request with the reason", async () => {
  const abort = new AbortController();
  const call = hook(hookFixture("permission-request"), abort.signal).catch((error: unknown) => error);
  await until(() => relay.service.waiting === 1);
  await relay.service.idle();
  abort.abort();
  await call;
  await until(() => relay.messenger.ended.length === 1);
  expect(relay.messenger.ended[0]).toMatchObject({ status: "cancelled", cancelledBy: "claude-code", error: "Claude Code closed the connection" });
});
