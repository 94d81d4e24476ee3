/**
 * Signed callbacks end to end on the memory store and on Redis: requests
 * created through the real RequestService, ended every way a request can end,
 * and delivered by the CallbackWorker over real HTTP to a receiver on
 * 127.0.0.1 that checks what arrives.
 */
import { type Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { verifyCallbackSignature } from "../../../src/protocol/callback-signature.js";
import { toView } from "../../../src/requests/model.js";
import { CreateRequestBody } from "../../../src/protocol/request-body.js";
import { callbackBody, instance, memoryStores, redisStores, T0, TOKENS, type Clock, type Instance, type StoreFactory } from "../../helpers/callbacks.js";
import { startReceiver, type Hit, type Receiver } from "../../helpers/receiver.js";
import { connectTestRedis, deleteKeysUnder, uniquePrefix } from "../../helpers/redis.js";
import { ALICE, BOB } from "../../fixtures/people.js";

let redis: Redis;
let prefix: string;
beforeAll(() => {
  redis = connectTestRedis();
});
afterAll(async () => {
  await redis.quit();
});

const opened: Array<Instance | Receiver> = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((thing) => thing.close()));
  if (prefix) await deleteKeysUnder(redis, prefix);
});

const stores: Array<[string, StoreFactory]> = [
  ["memory", memoryStores],
  [
    "redis",
    redisStores(
      () => redis,
      () => prefix,
    ),
  ],
];

describe.each(stores)("callbacks on the %s store", (_name, openStore) => {
  async function setup() {
    prefix = uniquePrefix();
    const clock: Clock = { t: T0 };
    const relay = await instance(await openStore(clock), clock);
    const receiver = await startReceiver();
    opened.push(relay, receiver);
    return { clock, relay, receiver };
  }

  /** Asserts `hit` is the relay's signed POST of the request as GET shows it now. */
  async function expectCallbackOf(relay: Instance, hit: Hit | undefined, id: string, clock: Clock) {
    if (!hit) throw new Error(`no callback for ${id}`);
    const record = await relay.service.get(id);
    expect(record?.status).not.toBe("pending");
    expect(JSON.parse(hit.body)).toStrictEqual(JSON.parse(JSON.stringify(toView(record!))));
    expect(hit.headers["content-type"]).toBe("application/json");
    expect(hit.headers["user-agent"]).toMatch(/^slack-approval-relay/);
    expect(hit.headers["x-relay-request-id"]).toBe(id);
    expect(hit.headers["x-relay-timestamp"]).toBe(String(Math.floor(clock.t / 1000)));
    const signature = hit.headers["x-relay-signature"];
    expect(
      verifyCallbackSignature({
        token: TOKENS[0]!.token,
        timestamp: hit.headers["x-relay-timestamp"] as string,
        body: hit.body,
        signature: signature as string,
        now: clock.t,
      }),
    ).toBe(true);
  }

  it("each of the four endings sends exactly one signed POST of the request as GET shows it", async () => {
    const { clock, relay, receiver } = await setup();
    const create = async (path: string) => (await relay.service.create({ tokenName: TOKENS[0]!.name, body: callbackBody(`${receiver.url}${path}`) })).record.id;
    const answered = await create("/answered");
    const cancelled = await create("/cancelled");
    const expired = await create("/expired");
    relay.messenger.refuseWith = "channel_not_found";
    const failed = await create("/failed");
    await relay.service.idle();
    await relay.service.answer(answered, { reply: "y" }, ALICE);
    await relay.service.cancel(cancelled, "agent", "the agent gave up");
    clock.t += 60_000;
    expect(await relay.service.expireDue()).toBe(1);

    expect(await relay.worker.drain()).toStrictEqual({ delivered: 4, retried: 0, dropped: 0, released: 0 });
    for (const [path, id, status] of [
      ["/answered", answered, "answered"],
      ["/cancelled", cancelled, "cancelled"],
      ["/expired", expired, "expired"],
      ["/failed", failed, "failed"],
    ] as const) {
      expect(receiver.on(path), path).toHaveLength(1);
      expect(JSON.parse(receiver.on(path)[0]!.body).status).toBe(status);
      await expectCallbackOf(relay, receiver.on(path)[0], id, clock);
    }
    clock.t += 24 * 3600_000;
    await relay.worker.drain();
    expect(receiver.hits).toHaveLength(4);
  });

  it("a request answered on the spot in autonomous mode sends its callback too", async () => {
    const { clock, relay, receiver } = await setup();
    const body = CreateRequestBody.parse({
      kind: "interactive_questions",
      callbackUrl: `${receiver.url}/auto`,
      autonomous: true,
      questions: [{ id: "go", question: "Go?", type: "confirm", default: true }],
    });
    const { record } = await relay.service.create({ tokenName: TOKENS[0]!.name, body });
    expect(record.status).toBe("answered");
    await relay.worker.drain();
    expect(receiver.hits).toHaveLength(1);
    await expectCallbackOf(relay, receiver.hits[0], record.id, clock);
    expect(JSON.parse(receiver.hits[0]!.body).decision).toStrictEqual({ answers: { go: true } });
  });

  it("a request without a callbackUrl sends nothing", async () => {
    const { relay, receiver } = await setup();
    const { record } = await relay.service.create({ tokenName: TOKENS[0]!.name, body: callbackBody(receiver.url, { callbackUrl: undefined }) });
    await relay.service.cancel(record.id);
    expect(await relay.worker.drain()).toStrictEqual({ delivered: 0, retried: 0, dropped: 0, released: 0 });
    expect(receiver.hits).toHaveLength(0);
  });

  it("a request created by another token is signed with that token's secret", async () => {
    const { relay, receiver, clock } = await setup();
    const { record } = await relay.service.create({ tokenName: TOKENS[1]!.name, body: callbackBody(receiver.url) });
    await relay.service.cancel(record.id);
    await relay.worker.drain();
    const hit = receiver.hits[0]!;
    const check = (token: string) =>
      verifyCallbackSignature({
        token,
        timestamp: hit.headers["x-relay-timestamp"] as string,
        body: hit.body,
        signature: hit.headers["x-relay-signature"] as string,
        now: clock.t,
      });
    expect(check(TOKENS[1]!.token)).toBe(true);
    expect(check(TOKENS[0]!.token)).toBe(false);
  });

  it("an ending that loses the race (already answered) queues no second callback", async () => {
    const { relay, receiver } = await setup();
    const { record } = await relay.service.create({ tokenName: TOKENS[0]!.name, body: callbackBody(receiver.url) });
    await relay.service.answer(record.id, { reply: "n" }, { id: ALICE.id });
    await relay.service.answer(record.id, { reply: "y" }, { id: BOB.id });
    await relay.service.cancel(record.id);
    await relay.worker.drain();
    expect(receiver.hits).toHaveLength(1);
    expect(JSON.parse(receiver.hits[0]!.body).decision).toStrictEqual({ reply: "n" });
  });
});
