/**
 * A click on a button that opens a modal, on a message Slack shows while the
 * relay has not recorded it yet (the soak's "modal click 1 s after a Redis
 * restart, neither opened nor told", issue 19): the post's store write waits
 * out the outage, so the request has no recorded message when the person
 * clicks. The relay confirms with Slack that the message is the request's
 * (its history) and adopts it as a copy; the modal must then open, tied to
 * the message clicked, and its submission count from there. Before the fix
 * the listener read the request's main message (not recorded: undefined),
 * threw, and the person saw nothing at all.
 *
 * The whole relay on a redis-server of the test's own (killed and started
 * again on its port and data), the Web API stand-in holding its reply to
 * chat.postMessage, signed payloads to the real Bolt receiver.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { Action, decodeMetadata, Field, View } from "../../../src/slack/ids.js";
import { startFullRelay, type FullRelay } from "../../helpers/full-relay.js";
import { startRedisServer, type RedisServer } from "../../helpers/redis-server.js";
import { state, viewSubmission } from "../../helpers/slack.js";
import { until } from "../../helpers/until.js";
import { RELAY_BOT } from "../../fixtures/people.js";

let dataDir: string;
let redis: RedisServer | undefined;
let relay: FullRelay | undefined;
/** Lets the held reply to chat.postMessage go (the relay's close waits for its post). */
let release = () => {};

beforeEach(() => {
  dataDir = mkdtempSync(join(tmpdir(), "relay-unrecorded-post-"));
});
afterEach(async () => {
  release();
  await relay?.close();
  await redis?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

it(
  "a Deny with reason… click on a message not yet recorded, just after a Redis restart, opens the modal on that message and its reason counts",
  { timeout: 30_000 },
  async () => {
    redis = await startRedisServer(undefined, { dataDir });
    relay = await startFullRelay({ env: { REDIS_URL: redis.url, REDIS_PREFIX: "unrecorded-post" } });
    const ts = "1700000321.000001";
    const replyHeld = new Promise<void>((resolve) => (release = resolve));
    let shown!: (message: { channel: string; ts: string; blocks: unknown[] }) => void;
    const onScreen = new Promise<{ channel: string; ts: string; blocks: unknown[] }>((resolve) => (shown = resolve));
    // Slack has the message (people see it and click) while its reply to the relay, and so the relay's record of it, waits.
    relay.slack.answer("chat.postMessage", async (args) => {
      if (args.metadata === undefined) return undefined;
      const channel = String(args.channel);
      relay!.slack.messages.push({ channel, ts, bot_id: RELAY_BOT.botId, text: args.text, metadata: args.metadata });
      shown({ channel, ts, blocks: args.blocks as unknown[] });
      await replyHeld;
      return { ok: true, channel, ts };
    });
    const { record } = await relay.service.create({
      tokenName: "sdk-agent",
      body: { kind: "permission", toolName: "Bash", input: { command: "make deploy" } } as never,
    });
    const message = await onScreen;

    const port = redis.port;
    await redis.kill();
    await new Promise((resolve) => setTimeout(resolve, 500));
    redis = await startRedisServer(undefined, { port, dataDir });
    await until(
      async () =>
        await relay!.service.get(record.id).then(
          () => true,
          () => false,
        ),
      10_000,
      "the store to answer again",
    );
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect((await relay.service.get(record.id))?.slack).toBeUndefined();

    await relay.click({ ...message, text: "" }, Action.denyWithReason);
    await until(() => relay!.slack.callsTo("views.open").length > 0 || relay!.errors().length > 0, 3000, "a modal, or an error");
    expect(relay.errors()).toEqual([]);
    const modal = await relay.modal(0);
    expect(modal.callbackId).toBe(View.denyReason);
    expect(decodeMetadata(modal.privateMetadata)).toMatchObject({ r: record.id, c: message.channel, ts: message.ts });
    expect(relay.slack.callsTo("chat.postEphemeral")).toEqual([]);

    await relay.post(
      viewSubmission({
        callbackId: modal.callbackId,
        privateMetadata: modal.privateMetadata,
        values: { [Field.denyReason.block]: { [Field.denyReason.action]: state.text("not on a Friday") } },
      }),
    );
    expect(await relay.service.wait(record.id, 3000)).toMatchObject({
      status: "answered",
      decision: { behavior: "deny", message: expect.stringContaining("not on a Friday") },
    });
    release();
    await until(async () => (await relay!.service.get(record.id))?.slack?.ts === ts, 5000, "the post's reply to be recorded");
    expect(relay.errors()).toEqual([]);
  },
);
