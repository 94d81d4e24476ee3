/**
 * A click (an answer, or +30 min) or a modal answer while the store is down is never acked and lost:
 * the relay acks within Slack's 3 s and tells the person it was not recorded
 * (an ephemeral for a click, an error in the modal for a submission), the
 * message and its buttons stay, and once Redis is back a click counts. A
 * private redis-server (own port, own data dir) is killed and started again
 * on the same port and data; signed payloads go to the real Bolt receiver.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { NOT_RECORDED, NOT_RECORDED_FIELD } from "../../../src/slack/listeners/context.js";
import { Action, encodeButton, encodeMetadata, Field, View } from "../../../src/slack/ids.js";
import { NOT_EXTENDED } from "../../../src/slack/listeners/more-time.js";
import { connectRedisStore } from "../../../src/store/redis-store.js";
import type { RequestStore } from "../../../src/requests/store.js";
import { startRedisServer, type RedisServer } from "../../helpers/redis-server.js";
import { startSlackRelay, type SlackRelay } from "../../helpers/slack-relay.js";
import { blockAction, CHANNEL, MESSAGE_TS, state, viewSubmission } from "../../helpers/slack.js";
import { ALICE } from "../../fixtures/people.js";
import { until } from "../../helpers/until.js";

const permission = { kind: "permission", toolName: "Bash", input: { command: "make deploy" } };

let dataDir: string;
let server: RedisServer | undefined;
let store: RequestStore | undefined;
let relay: SlackRelay | undefined;

beforeEach(() => {
  dataDir = mkdtempSync(join(tmpdir(), "relay-outage-"));
});
afterEach(async () => {
  await relay?.close();
  expect(relay?.unexpected).toEqual([]);
  await store?.close();
  await server?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

it("while Redis is down a click gets 'not recorded' and the buttons stay; once it is back, a click counts", { timeout: 30_000 }, async () => {
  server = await startRedisServer(undefined, { dataDir });
  const port = server.port;
  store = connectRedisStore(server.url, { prefix: "outage" });
  await store.ready();
  relay = await startSlackRelay({ store });
  relay.api.onPost().on("chat.postEphemeral", { ok: true }, 2);
  const record = await relay.create(permission);
  const allow = blockAction({ actionId: Action.allow, value: encodeButton({ r: record.id }) });
  const moreTime = blockAction({ actionId: Action.moreTime, value: encodeButton({ r: record.id }) });

  await server.stop();
  const started = Date.now();
  const click = await relay.post(allow);
  expect(click.status).toBe(200);
  expect(Date.now() - started).toBeLessThan(3000);
  const clicked = Date.now();
  expect((await relay.post(moreTime)).status).toBe(200);
  expect(Date.now() - clicked).toBeLessThan(3000);

  const submitted = Date.now();
  const modal = await relay.post(
    viewSubmission({
      callbackId: View.denyReason,
      privateMetadata: encodeMetadata({ r: record.id, c: CHANNEL, ts: MESSAGE_TS }),
      values: { [Field.denyReason.block]: { [Field.denyReason.action]: state.text("not today") } },
    }),
  );
  expect(Date.now() - submitted).toBeLessThan(3000);
  expect(modal.status).toBe(200);
  expect(modal.json()).toEqual({ response_action: "errors", errors: { [Field.denyReason.block]: NOT_RECORDED_FIELD } });

  await relay.settle();
  expect(relay.api.callsTo("chat.postEphemeral").map((call) => call.args)).toEqual([
    { channel: CHANNEL, user: ALICE.id, text: NOT_RECORDED },
    { channel: CHANNEL, user: ALICE.id, text: NOT_EXTENDED },
  ]);
  expect(relay.api.callsTo("chat.update")).toEqual([]);

  server = await startRedisServer(undefined, { port, dataDir });
  await until(() => store!.ping(), 10_000, "the store to reconnect");
  relay.api.on("chat.update");
  const waiting = relay.service.wait(record.id, 5000);
  expect((await relay.post(allow)).status).toBe(200);
  expect(await waiting).toMatchObject({ status: "answered", decision: { behavior: "allow", updatedInput: permission.input }, answeredBy: { id: ALICE.id } });
  await relay.settle();
  expect(relay.api.callsTo("chat.postEphemeral")).toHaveLength(2);
  expect((await relay.service.get(record.id))?.expiresAt).toBe(record.expiresAt);
  relay.api.done();
});
