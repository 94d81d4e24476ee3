/**
 * The relay on Sentinel (REDIS_SENTINELS, REDIS_SENTINEL_NAME) as
 * `approval-relay serve` runs it (src/main.ts), against a group of the test's
 * own (helpers/redis-sentinel.ts: master, replica, one sentinel) and the
 * Slack stand-in. When the master dies or hangs, the sentinel promotes the
 * replica, and within seconds the relay takes and answers requests again: a
 * request made before the failover is still answerable (the test lets the
 * replica catch up first: Redis replicates asynchronously, see docs/operations.md),
 * and the "ended" notifications still cross instances (a long-poll on one
 * wakes when the click lands on the other).
 */
import { randomUUID } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { Action } from "../../../src/slack/ids.js";
import { agentCall, startFullRelay, type AgentReply, type FullRelay } from "../../helpers/full-relay.js";
import { startSentinelGroup, type SentinelGroup } from "../../helpers/redis-sentinel.js";
import { startSlackWebApi, type SlackWebApiStandIn } from "../../helpers/slack-web-api.js";
import { sleep, until } from "../../helpers/until.js";

/** From the master's end to the first request the relay creates again: the sentinel's 400 ms, its failover, the reconnect, and room for a loaded machine. */
const RECOVERY_MS = 8_000;

let group: SentinelGroup | undefined;
let slack: SlackWebApiStandIn | undefined;
const relays: FullRelay[] = [];

afterEach(async () => {
  await Promise.all(relays.splice(0).map((relay) => relay.close()));
  await slack?.close();
  await group?.stop();
  group = slack = undefined;
});

const stepGate = { kind: "step_gate", toolName: "Bash", input: { command: "make deploy" } };

async function startRelays(count: number, env: Record<string, string>): Promise<FullRelay[]> {
  slack = await startSlackWebApi();
  for (let i = 0; i < count; i += 1) relays.push(await startFullRelay({ env, slack }));
  return relays;
}

/** Creates a request on `relay`, trying again (same Idempotency-Key: one request, one message) until it is created. */
async function createWhenUp(relay: FullRelay, timeoutMs: number): Promise<AgentReply> {
  const idempotencyKey = randomUUID();
  let reply: AgentReply | undefined;
  await until(async () => (reply = await agentCall(relay.url, "/v1/requests", { body: stepGate, idempotencyKey })).status === 201, timeoutMs, "a create");
  return reply!;
}

/** Resolves once `count` instances are subscribed to the "ended" channel on the server at `port`. */
async function subscribed(port: number, prefix: string, count: number): Promise<void> {
  const admin = group!.connect(port);
  try {
    await until(async () => (await sleep(25), (await admin.pubsub("NUMSUB", `${prefix}:ended`))[1] === count), 5_000, "the subscriptions");
  } finally {
    admin.disconnect();
  }
}

describe("a Sentinel failover", () => {
  it(
    "when the master dies, the replica is promoted and within seconds a new request is created and answered, one made before is still answerable, and a long-poll on one instance wakes when the click lands on the other",
    { timeout: 60_000 },
    async () => {
      group = await startSentinelGroup();
      const [a, b] = await startRelays(2, { ...group.env, REDIS_PREFIX: "failover" });
      const before = await createWhenUp(a!, 2_000);
      const beforeMessage = await a!.message(0);
      await group.replicated();

      const oldPort = await group.masterPort();
      const killed = Date.now();
      await group.master.kill();
      const after = await createWhenUp(b!, RECOVERY_MS).catch((error: Error) => {
        throw new Error(`${error.message}; the sentinel's log:\n${group!.sentinel.log()}`);
      });
      // Each connection finds the new master on its own reconnect schedule: both instances are ready again soon after.
      await until(
        async () => (await Promise.all([a!, b!].map((relay) => agentCall(relay.url, "/readyz")))).every((r) => r.status === 200),
        3_000,
        "both ready",
      );
      expect(Date.now() - killed).toBeLessThan(RECOVERY_MS);
      const newPort = await group.masterPort();
      expect(newPort).not.toBe(oldPort);
      expect(newPort).toBe(group.replica.port);

      // A wait that started after both instances resubscribed can only be woken by the notification (it re-reads nothing by itself).
      await subscribed(newPort, "failover", 2);
      const held = agentCall(a!.url, `/v1/requests/${String(before.body!.id)}?wait=30`);
      await sleep(200);
      const clicked = Date.now();
      await b!.click(beforeMessage, Action.stepYes);
      expect(await held).toMatchObject({ status: 200, body: { id: before.body!.id, status: "answered", decision: { reply: "y" } } });
      expect(Date.now() - clicked).toBeLessThan(2_000);

      const afterMessage = await a!.message(1);
      const heldOnB = agentCall(b!.url, `/v1/requests/${String(after.body!.id)}?wait=30`);
      await sleep(200);
      await a!.click(afterMessage, Action.stepYes);
      expect(await heldOnB).toMatchObject({ status: 200, body: { id: after.body!.id, status: "answered" } });
      expect([...a!.errors(), ...b!.errors()]).toEqual([]);
    },
  );

  it(
    "when the master hangs (its connections stay open), the relay follows the sentinels' +switch-master to the new master instead of timing out on the old one",
    { timeout: 60_000 },
    async () => {
      group = await startSentinelGroup();
      const [relay] = await startRelays(1, { ...group.env, REDIS_PREFIX: "hung" });
      const before = await createWhenUp(relay!, 2_000);
      const message = await relay!.message(0);
      await group.replicated();

      const admin = group.connect(group.master.port);
      await admin.ping();
      // Longer than the whole test may take: only the failover detector ends the relay's wait on the old master.
      void admin.call("DEBUG", "SLEEP", "30").catch(() => undefined);
      const hung = Date.now();
      await sleep(100);
      expect((await agentCall(relay!.url, `/v1/requests/${String(before.body!.id)}`)).status).toBe(503);
      await createWhenUp(relay!, RECOVERY_MS);
      expect(Date.now() - hung).toBeLessThan(RECOVERY_MS);
      admin.disconnect();
      await group.master.kill();

      const held = agentCall(relay!.url, `/v1/requests/${String(before.body!.id)}?wait=30`);
      await sleep(200);
      await relay!.click(message, Action.stepYes);
      expect(await held).toMatchObject({ status: 200, body: { id: before.body!.id, status: "answered" } });
    },
  );
});
