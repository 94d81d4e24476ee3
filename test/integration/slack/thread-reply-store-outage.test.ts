/**
 * A thread reply while the store is down is never lost silently: Slack's
 * Events API is acked before the listener runs, so the relay gives the store
 * the same budget as a click and then tells the person, with an ephemeral in
 * the thread, that their reply was not recorded. The request stays pending,
 * and once Redis is back a reply counts. A private redis-server (own port,
 * own data dir) is stopped and started again on the same port and data;
 * signed message events go to the real Bolt receiver.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { NOT_RECORDED_REPLY, STORE_BUDGET } from "../../../src/slack/listeners/context.js";
import { connectRedisStore } from "../../../src/store/redis-store.js";
import type { RequestStore } from "../../../src/requests/store.js";
import { startRedisServer, type RedisServer } from "../../helpers/redis-server.js";
import { startSlackRelay, type SlackRelay } from "../../helpers/slack-relay.js";
import { CHANNEL, MESSAGE_TS, messageEvent } from "../../helpers/slack.js";
import { ALICE } from "../../fixtures/people.js";
import { until } from "../../helpers/until.js";

const stepGate = { kind: "step_gate", toolName: "Bash", input: { command: "terraform apply" } };

let dataDir: string;
let server: RedisServer | undefined;
let store: RequestStore | undefined;
let relay: SlackRelay | undefined;

beforeEach(() => {
  dataDir = mkdtempSync(join(tmpdir(), "relay-thread-outage-"));
});
afterEach(async () => {
  await relay?.close();
  expect(relay?.unexpected).toEqual([]);
  await store?.close();
  await server?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

it(
  "while Redis is down a thread reply gets 'not recorded' in its thread and the request stays pending; once it is back, a reply counts",
  { timeout: 30_000 },
  async () => {
    server = await startRedisServer(undefined, { dataDir });
    const port = server.port;
    store = connectRedisStore(server.url, { prefix: "thread-outage" });
    await store.ready();
    relay = await startSlackRelay({ store });
    relay.api.onPost().on("chat.postEphemeral");
    const record = await relay.create(stepGate);

    await server.stop();
    const started = Date.now();
    const posted = await relay.post(messageEvent({ text: "y", threadTs: MESSAGE_TS }));
    expect(posted.status).toBe(200);
    await relay.settle();
    // The person hears within the store budget, whether the store refuses at once or never answers.
    expect(Date.now() - started).toBeLessThan(STORE_BUDGET.totalMs + 1000);
    expect(relay.api.callsTo("chat.postEphemeral").map((call) => call.args)).toEqual([
      { channel: CHANNEL, user: ALICE.id, thread_ts: MESSAGE_TS, text: NOT_RECORDED_REPLY },
    ]);
    expect(relay.api.callsTo("chat.update")).toEqual([]);

    server = await startRedisServer(undefined, { port, dataDir });
    await until(() => store!.ping(), 10_000, "the store to reconnect");
    expect(await relay.service.get(record.id)).toMatchObject({ status: "pending" });
    relay.api.on("chat.update");
    const waiting = relay.service.wait(record.id, 5000);
    const again = await relay.post(messageEvent({ text: "y", threadTs: MESSAGE_TS, ts: "1700000060.000001" }));
    expect(again.status).toBe(200);
    expect(await waiting).toMatchObject({ status: "answered", decision: { reply: "y" }, answeredBy: { id: ALICE.id } });
    await relay.settle();
    expect(relay.api.callsTo("chat.postEphemeral")).toHaveLength(1);
    relay.api.done();
  },
);
