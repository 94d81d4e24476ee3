/**
 * An idempotency key names one request: a retry with the same body gets that
 * request back, a create with another body under the same key is refused with
 * 409 relay_idempotency_mismatch and changes nothing. On the memory store and
 * on Redis (where the key is shared by every instance).
 */
import { afterEach, describe, expect, it } from "vitest";
import { createMemoryStore } from "../../../src/store/memory-store.js";
import { connectRedisStore } from "../../../src/store/redis-store.js";
import { bodies, startApiRelay, type ApiRelay } from "../../helpers/api-relay.js";
import { connectTestRedis, deleteKeysUnder, REDIS_TEST_URL, uniquePrefix } from "../../helpers/redis.js";

let relay: ApiRelay | undefined;
const prefixes: string[] = [];
afterEach(async () => {
  await relay?.close();
  relay = undefined;
  const redis = connectTestRedis();
  for (const prefix of prefixes.splice(0)) await deleteKeysUnder(redis, prefix);
  await redis.quit();
});

const stores = {
  memory: () => createMemoryStore(),
  redis: () => {
    const prefix = uniquePrefix();
    prefixes.push(prefix);
    return connectRedisStore(REDIS_TEST_URL, { prefix });
  },
};

describe.each(Object.entries(stores))("on the %s store", (_name, store) => {
  it("the same key with a different body answers 409 relay_idempotency_mismatch naming the first request, and creates and posts nothing", async () => {
    relay = await startApiRelay({ store: store() });
    const first = await relay.call("/v1/requests", { json: bodies.stepGate({ idempotencyKey: "deploy-42" }) });
    expect(first.status).toBe(201);
    const other = bodies.stepGate({ input: { file_path: "/srv/web/config/production.yml", content: "replicas: 40\n" } });
    const second = await relay.call("/v1/requests", { json: other, headers: { "Idempotency-Key": "deploy-42" } });
    expect(second.status).toBe(409);
    expect(second.body).toEqual({
      error: { code: "relay_idempotency_mismatch", message: expect.stringContaining("different body"), details: { id: first.body.id } },
    });
    await relay.service.idle();
    expect(relay.stored).toHaveLength(2);
    expect(await relay.service.get(relay.stored[1]!.id)).toBeUndefined();
    expect(relay.messenger.posts.map((record) => record.id)).toEqual([first.body.id]);
    expect((await relay.call(`/v1/requests/${first.body.id}`)).body).toMatchObject({ status: "pending", kind: "step_gate" });
  });

  it("the same key with the same body, its fields in another order, returns the first request", async () => {
    relay = await startApiRelay({ store: store() });
    const body = bodies.stepGate({ idempotencyKey: "deploy-43" });
    const first = await relay.call("/v1/requests", { json: body });
    const reordered = Object.fromEntries(Object.entries(body).reverse());
    const second = await relay.call("/v1/requests", { json: reordered });
    expect(second.status).toBe(200);
    expect(second.body).toMatchObject({ id: first.body.id, status: "pending" });
    await relay.service.idle();
    expect(relay.messenger.posts).toHaveLength(1);
  });
});
