/**
 * Callbacks with Redis across relay instances: a callback queued by one
 * instance is delivered by another after a restart, or after the instance
 * that was delivering it died; two instances working the same queue never
 * deliver one callback twice. Each instance has its own connections.
 */
import { type Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { connectRedisStore } from "../../../src/store/redis-store.js";
import { callbackBody, instance, T0, TOKENS, type Clock, type Instance, type WorkerOverrides } from "../../helpers/callbacks.js";
import { startReceiver, type Receiver, type Reply } from "../../helpers/receiver.js";
import { connectTestRedis, deleteKeysUnder, REDIS_TEST_URL, uniquePrefix } from "../../helpers/redis.js";
import { ALICE } from "../../fixtures/people.js";

let admin: Redis;
let prefix: string;
const opened: Array<Instance | Receiver> = [];
beforeAll(() => {
  admin = connectTestRedis();
});
beforeEach(() => {
  prefix = uniquePrefix();
});
afterEach(async () => {
  await Promise.all(opened.splice(0).map((thing) => thing.close()));
  await deleteKeysUnder(admin, prefix);
});
afterAll(async () => {
  await admin.quit();
});

/** A relay instance (own store and connections) on the shared prefix. */
async function relayInstance(clock: Clock, overrides: WorkerOverrides = {}): Promise<Instance> {
  const store = connectRedisStore(REDIS_TEST_URL, { prefix, now: () => clock.t });
  await store.ready();
  const relay = await instance(store, clock, overrides);
  opened.push(relay);
  return relay;
}

async function receiver(reply?: () => Reply): Promise<Receiver> {
  const started = await startReceiver(reply);
  opened.push(started);
  return started;
}

async function endedRequest(relay: Instance, url: string): Promise<string> {
  const { record } = await relay.service.create({ tokenName: TOKENS[0]!.name, body: callbackBody(url) });
  await relay.service.answer(record.id, { reply: "y" }, { id: ALICE.id });
  return record.id;
}

describe("callbacks across relay instances on one Redis", () => {
  it("a callback queued before a restart is delivered once by the new instance", async () => {
    const clock: Clock = { t: T0 };
    const target = await receiver();
    const before = await relayInstance(clock);
    const id = await endedRequest(before, `${target.url}/cb`);
    await before.close();

    const after = await relayInstance(clock);
    expect(await after.worker.drain()).toMatchObject({ delivered: 1 });
    expect(target.hits.map((hit) => hit.headers["x-relay-request-id"])).toStrictEqual([id]);
    expect(JSON.parse(target.hits[0]!.body)).toMatchObject({ id, status: "answered", decision: { reply: "y" } });
  });

  it("a callback whose deliverer died mid-attempt is delivered by another instance once the lease runs out", async () => {
    const clock: Clock = { t: T0 };
    const target = await receiver();
    const dying = await relayInstance(clock);
    const id = await endedRequest(dying, `${target.url}/cb`);
    expect(await dying.store.claim("callbacks", clock.t, 60_000, 10)).toStrictEqual([{ key: id, id, attempts: 0 }]);
    await dying.close();

    const survivor = await relayInstance(clock, { leaseMs: 60_000 });
    expect(await survivor.worker.drain()).toMatchObject({ delivered: 0 });
    clock.t += 60_000;
    expect(await survivor.worker.drain()).toMatchObject({ delivered: 1 });
    expect(target.hits).toHaveLength(1);
  });

  it("a retry scheduled by one instance is made by another", async () => {
    const clock: Clock = { t: T0 };
    let calls = 0;
    const target = await receiver(() => ({ status: calls++ === 0 ? 500 : 200 }));
    const a = await relayInstance(clock);
    const b = await relayInstance(clock);
    await endedRequest(a, `${target.url}/cb`);
    expect(await a.worker.runOnce()).toMatchObject({ retried: 1 });
    clock.t += 1000;
    expect(await b.worker.runOnce()).toMatchObject({ delivered: 1 });
    expect(target.hits).toHaveLength(2);
  });

  it("two instances draining the same queue deliver each callback exactly once", async () => {
    const clock: Clock = { t: T0 };
    const target = await receiver(() => ({ status: 200, delayMs: 5 }));
    const a = await relayInstance(clock, { batchSize: 4 });
    const b = await relayInstance(clock, { batchSize: 4 });
    const ids: string[] = [];
    for (let i = 0; i < 30; i += 1) ids.push(await endedRequest(i % 2 ? a : b, `${target.url}/cb`));

    const [fromA, fromB] = await Promise.all([a.worker.drain(), b.worker.drain()]);
    expect(fromA.delivered + fromB.delivered).toBe(30);
    expect(fromA.delivered).toBeGreaterThan(0);
    expect(fromB.delivered).toBeGreaterThan(0);
    const delivered = target.hits.map((hit) => hit.headers["x-relay-request-id"] as string);
    expect(delivered.sort()).toStrictEqual(ids.sort());
  });

  it("two instances running in the background deliver every callback once, as soon as each request ends", async () => {
    const clock: Clock = { t: T0 };
    const target = await receiver(() => ({ status: 200, delayMs: 2 }));
    const a = await relayInstance(clock, { pollIntervalMs: 60_000 });
    const b = await relayInstance(clock, { pollIntervalMs: 60_000 });
    a.worker.start();
    b.worker.start();
    const ids: string[] = [];
    for (let i = 0; i < 10; i += 1) ids.push(await endedRequest(i % 2 ? a : b, `${target.url}/cb`));
    const deadline = Date.now() + 3000;
    while (target.hits.length < ids.length && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5));
    await Promise.all([a.worker.stop(), b.worker.stop()]);
    const delivered = target.hits.map((hit) => hit.headers["x-relay-request-id"] as string);
    expect(delivered.sort()).toStrictEqual(ids.sort());
  });
});
