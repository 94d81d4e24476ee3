/**
 * A callback in flight when its instance drains for a rolling restart
 * (SIGTERM's path: RelayLifecycle.close) is let finish, not thrown away to
 * be made again by the instance that stays (the soak's callback 3.8 s late
 * during a SIGTERM roll, issue 19): stopping it meant a second POST, after
 * the other instance's next look at the queue, each try as slow as the
 * receiver. One that outlasts the stop grace is still handed back and
 * delivered by the other instance.
 *
 * Two whole relays (src/main.ts) on a redis-server of the test's own, the
 * Web API stand-in, and a real HTTP receiver that takes its time answering.
 */
import { afterEach, expect, it } from "vitest";
import { startFullRelay, agentCall, type FullRelay } from "../../helpers/full-relay.js";
import { startReceiver, type Receiver, type Reply } from "../../helpers/receiver.js";
import { startRedisServer, type RedisServer } from "../../helpers/redis-server.js";
import { until } from "../../helpers/until.js";

let redis: RedisServer | undefined;
let receiver: Receiver | undefined;
const relays: FullRelay[] = [];

afterEach(async () => {
  for (const relay of relays.splice(0)) await relay.close();
  await receiver?.close();
  await redis?.stop();
});

/** A relay on a private Redis, and a receiver answering as `reply` says; `another()` starts a second relay on the same Redis and Slack. */
async function oneRelay(reply: (index: number) => Reply) {
  redis = await startRedisServer();
  const rx = await startReceiver((_hit, index) => reply(index));
  receiver = rx;
  const env = { REDIS_URL: redis.url, REDIS_PREFIX: "hand-over" };
  const a = await startFullRelay({ env });
  relays.push(a);
  const another = async () => {
    const b = await startFullRelay({ env, slack: a.slack });
    relays.push(b);
    return b;
  };
  return { a, another, receiver: rx };
}

/** Closes `relay` as SIGTERM does (drain, then stop), and forgets it. */
async function shutDown(relay: FullRelay): Promise<void> {
  relays.splice(relays.indexOf(relay), 1);
  await relay.close();
}

/** A request with a callback created on `relay` and cancelled there at once: its callback is due. */
async function endedWithCallback(relay: FullRelay, url: string): Promise<string> {
  const created = await agentCall(relay.url, "/v1/requests", {
    body: { kind: "step_gate", toolName: "Bash", input: { command: "make deploy" }, callbackUrl: url },
  });
  expect(created.status).toBe(201);
  const id = String(created.body!.id);
  expect((await agentCall(relay.url, `/v1/requests/${id}`, { method: "DELETE" })).status).toBe(200);
  return id;
}

const ids = (hits: Receiver["hits"]) => hits.map((hit) => hit.headers["x-relay-request-id"]);

it("a callback in flight when its instance drains is delivered by it, once, not stopped and made again by the other", { timeout: 30_000 }, async () => {
  const { a, another, receiver } = await oneRelay(() => ({ status: 200, delayMs: 1000 }));
  const id = await endedWithCallback(a, `${receiver.url}/cb`);
  await until(() => receiver.hits.length > 0, 5000, "the callback to reach the receiver");
  await another();
  await shutDown(a);
  // Time for the one that stays to have made it again, had it been handed back.
  await new Promise((resolve) => setTimeout(resolve, 2500));
  expect(ids(receiver.hits)).toStrictEqual([id]);
});

it("a callback still in flight once the stop grace has passed is handed back and delivered by the instance that stays", { timeout: 30_000 }, async () => {
  const { a, another, receiver } = await oneRelay((index) => (index === 0 ? "hang" : { status: 200 }));
  const id = await endedWithCallback(a, `${receiver.url}/cb`);
  await until(() => receiver.hits.length > 0, 5000, "the callback to reach the receiver");
  await another();
  await shutDown(a);
  await until(() => receiver.hits.length > 1, 5000, "the callback to be made again by the relay that stays");
  expect(ids(receiver.hits)).toStrictEqual([id, id]);
});
