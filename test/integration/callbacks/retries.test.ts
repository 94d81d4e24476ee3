/**
 * What the callback worker does when a receiver fails: retries with backoff
 * on 5xx, refused connections, redirects and timeouts, keeps trying for hours
 * and then gives up with a warning; drops callbacks it may no longer send;
 * never puts the token or the signature in a log. Real receivers on
 * 127.0.0.1, the memory store, a fake clock.
 */
import { afterEach, describe, expect, it } from "vitest";
import { retryDelayMs } from "../../../src/protocol/timing.js";
import { callbackBody, instance, memoryStores, T0, TOKENS, type Clock, type Instance, type WorkerOverrides } from "../../helpers/callbacks.js";
import { closedPortUrl, startReceiver, type Hit, type Receiver, type Reply } from "../../helpers/receiver.js";
import { until } from "../../helpers/until.js";

const opened: Array<Instance | Receiver> = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((thing) => thing.close()));
});

async function setup(reply?: (hit: Hit, index: number) => Reply, overrides: WorkerOverrides = {}, retentionMs?: number) {
  const clock: Clock = { t: T0 };
  const relay = await instance(await memoryStores(clock, retentionMs), clock, overrides);
  const receiver = await startReceiver(reply);
  opened.push(relay, receiver);
  /** Creates a request whose callback goes to `url` and cancels it; returns its id. */
  const ended = async (url = `${receiver.url}/cb`) => {
    const { record } = await relay.service.create({ tokenName: TOKENS[0]!.name, body: callbackBody(url) });
    await relay.service.cancel(record.id, "agent");
    return record.id;
  };
  return { clock, relay, receiver, ended };
}

const status = (code: number) => () => ({ status: code });
const warnings = (relay: Instance) => relay.logs.map((line) => JSON.parse(line)).filter((entry) => entry.level === "warn");

describe("callback retries", () => {
  it("a receiver that answers 500 twice and then 200 gets the callback on the third attempt, and only then", async () => {
    const { clock, relay, receiver, ended } = await setup((_hit, index) => ({ status: index < 2 ? 500 : 200 }));
    await ended();
    const sentAt: number[] = [clock.t];
    expect(await relay.worker.runOnce()).toMatchObject({ retried: 1 });
    clock.t += retryDelayMs(1, 1000, 300_000, () => 0) - 1;
    expect(await relay.worker.runOnce()).toMatchObject({ retried: 0, delivered: 0 });
    clock.t += 1;
    sentAt.push(clock.t);
    expect(await relay.worker.runOnce()).toMatchObject({ retried: 1 });
    clock.t += retryDelayMs(2, 1000, 300_000, () => 0);
    sentAt.push(clock.t);
    expect(await relay.worker.runOnce()).toMatchObject({ delivered: 1 });
    clock.t += 24 * 3600_000;
    await relay.worker.drain();
    expect(receiver.hits).toHaveLength(3);
    expect(new Set(receiver.hits.map((hit) => hit.body)).size).toBe(1);
    expect(receiver.hits.map((hit) => hit.headers["x-relay-timestamp"])).toStrictEqual(sentAt.map((t) => String(Math.floor(t / 1000))));
  });

  it("when nothing listens on the callback port, the attempt is retried later", async () => {
    const { relay, ended } = await setup();
    const id = await ended(`${await closedPortUrl()}/cb`);
    expect(await relay.worker.runOnce()).toMatchObject({ retried: 1 });
    expect(relay.logs.join("\n")).toContain("ECONNREFUSED");
    expect(await relay.store.claim("callbacks", T0 + 60_000, 1000, 10)).toStrictEqual([{ key: id, id, attempts: 1 }]);
  });

  it("a redirect is never followed and counts as a failed attempt", async () => {
    const { relay, receiver, ended } = await setup((hit) => (hit.path === "/moved" ? { status: 302, headers: { location: "/elsewhere" } } : { status: 200 }));
    await ended(`${receiver.url}/moved`);
    expect(await relay.worker.runOnce()).toMatchObject({ retried: 1, delivered: 0 });
    expect(receiver.hits.map((hit) => hit.path)).toStrictEqual(["/moved"]);
    expect(relay.logs.join("\n")).toContain("redirect (HTTP 302) not followed");
  });

  it("a receiver that does not answer in time counts as a failed attempt", async () => {
    const { relay, ended } = await setup(() => "hang", { timeoutMs: 100, leaseMs: 1000 });
    await ended();
    const started = Date.now();
    expect(await relay.worker.runOnce()).toMatchObject({ retried: 1 });
    expect(Date.now() - started).toBeLessThan(2000);
    expect(relay.logs.join("\n")).toContain("no response within 100 ms");
  });

  it("keeps retrying a failing receiver for hours, doubling the wait up to the cap, then gives up with a warning", async () => {
    const { clock, relay, receiver, ended } = await setup(status(503));
    await ended();
    const nothing = { delivered: 0, retried: 0, dropped: 0, released: 0 };
    const attemptsAt: number[] = [];
    let givenUp = false;
    while (!givenUp && attemptsAt.length < 1000) {
      const round = await relay.worker.runOnce();
      expect(round.retried + round.dropped).toBe(1);
      attemptsAt.push(clock.t);
      givenUp = round.dropped === 1;
      const { retryInMs } = relay.logs.map((line) => JSON.parse(line)).at(-1);
      if (givenUp) break;
      clock.t += retryInMs - 1;
      expect(await relay.worker.runOnce()).toStrictEqual(nothing);
      clock.t += 1;
    }
    const gaps = attemptsAt.slice(1).map((t, i) => t - attemptsAt[i]!);
    expect(gaps.slice(0, 6)).toStrictEqual([500, 1000, 2000, 4000, 8000, 16_000]);
    expect(Math.max(...gaps)).toBe(150_000);
    expect(givenUp).toBe(true);
    expect(attemptsAt.at(-1)! - T0).toBeGreaterThan(5 * 3600_000);
    expect(attemptsAt.at(-1)! - T0).toBeLessThanOrEqual(6 * 3600_000);
    expect(receiver.hits).toHaveLength(attemptsAt.length);
    expect(warnings(relay)).toStrictEqual([expect.objectContaining({ msg: "callback given up", status: 503 })]);
    clock.t += 24 * 3600_000;
    expect(await relay.worker.drain()).toStrictEqual({ delivered: 0, retried: 0, dropped: 0, released: 0 });
  });

  it("never writes the token or the signature to the log", async () => {
    const { clock, relay, receiver, ended } = await setup((_hit, index) => ({ status: index === 0 ? 500 : 200 }));
    await ended();
    await relay.worker.runOnce();
    clock.t += 60_000;
    await relay.worker.runOnce();
    expect(receiver.hits).toHaveLength(2);
    const logs = relay.logs.join("\n");
    expect(logs).toContain("callback delivered");
    expect(logs).not.toContain(TOKENS[0]!.token);
    for (const hit of receiver.hits) expect(logs).not.toContain((hit.headers["x-relay-signature"] as string).slice(3));
  });
});

describe("callbacks that can no longer be sent", () => {
  it("a callback whose request the store has forgotten is dropped with a warning", async () => {
    const { clock, relay, receiver, ended } = await setup(undefined, {}, 1000);
    await ended();
    clock.t += 1000;
    expect(await relay.worker.runOnce()).toMatchObject({ dropped: 1 });
    expect(receiver.hits).toHaveLength(0);
    expect(warnings(relay)).toStrictEqual([expect.objectContaining({ why: "the request is no longer stored" })]);
  });

  it("a callback whose token is no longer configured is dropped, never sent unsigned", async () => {
    const { relay, receiver, ended } = await setup(undefined, { tokenSecret: () => undefined });
    await ended();
    expect(await relay.worker.runOnce()).toMatchObject({ dropped: 1 });
    expect(receiver.hits).toHaveLength(0);
  });

  it("a callback to a host taken off RELAY_CALLBACK_HOSTS is dropped", async () => {
    const { relay, receiver, ended } = await setup(undefined, { callbackHosts: ["hooks.example.com"] });
    await ended();
    expect(await relay.worker.runOnce()).toMatchObject({ dropped: 1 });
    expect(receiver.hits).toHaveLength(0);
  });
});

describe("the worker running in the background", () => {
  it("delivers as soon as a request ends, without waiting for the next poll", async () => {
    const { receiver, relay, ended } = await setup(undefined, { pollIntervalMs: 60_000 });
    relay.worker.start();
    await ended();
    await until(() => receiver.hits.length === 1, 2000, "the callback");
    await relay.worker.stop();
  });

  it("stop() lets an attempt in flight run for its stop grace, then cuts it short and hands the callback back, due at once", async () => {
    const { clock, receiver, relay, ended } = await setup(() => "hang", { pollIntervalMs: 60_000, stopGraceMs: 400 });
    relay.worker.start();
    const id = await ended();
    await until(() => receiver.hits.length === 1, 2000, "the attempt");
    const started = Date.now();
    await relay.worker.stop();
    expect(Date.now() - started).toBeGreaterThanOrEqual(390);
    expect(Date.now() - started).toBeLessThan(1400);
    expect(await relay.store.claim("callbacks", clock.t, 1000, 10)).toStrictEqual([{ key: id, id, attempts: 0 }]);
  });
});

describe("retry delays", () => {
  it("double from the base up to the cap, and jitter keeps each between half and all of it", () => {
    const delays = (random: number) => [1, 2, 3, 4, 9, 10, 30, 100].map((n) => retryDelayMs(n, 1000, 300_000, () => random));
    expect(delays(0)).toStrictEqual([500, 1000, 2000, 4000, 128_000, 150_000, 150_000, 150_000]);
    expect(delays(0.999999)).toStrictEqual([1000, 2000, 4000, 8000, 256_000, 300_000, 300_000, 300_000]);
  });
});
