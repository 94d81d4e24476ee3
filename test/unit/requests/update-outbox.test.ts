import { describe, expect, it } from "vitest";
import { silentLogger } from "../../../src/logger.js";
import { PermanentDeliveryError, TransientDeliveryError, type RequestMessenger } from "../../../src/requests/delivery.js";
import type { RequestRecord } from "../../../src/requests/model.js";
import { UPDATE_GRACE_MS } from "../../../src/requests/store.js";
import { UpdateOutbox } from "../../../src/requests/update-outbox.js";
import { createMemoryStore } from "../../../src/store/memory-store.js";
import { recordOf } from "../../helpers/slack.js";

const T0 = 1_700_000_000_000;

/** A memory store holding one answered request with a message, its update queued; a messenger whose showEnded runs `outcomes` in turn. */
async function setUp(outcomes: Array<() => Promise<void>>) {
  const clock = { t: T0 };
  const store = createMemoryStore({ now: () => clock.t });
  const shown: RequestRecord[] = [];
  const messenger: Pick<RequestMessenger, "showEnded"> = {
    showEnded: async (record) => {
      shown.push(record);
      await (outcomes.shift() ?? (async () => {}))();
    },
  };
  const pending = recordOf({ kind: "step_gate", toolName: "Bash", input: {} }, { createdAt: T0, expiresAt: T0 + 600_000 });
  const { slack, ...unposted } = pending;
  await store.create(unposted);
  await store.setSlackMessage(pending.id, slack!);
  const result = await store.transition(pending.id, { status: "answered", decision: { reply: "y" }, answeredBy: { id: "U0ALICE" }, at: T0 });
  const record = "record" in result ? result.record : pending;
  const outbox = new UpdateOutbox({ store, messenger, logger: silentLogger, now: () => clock.t, random: () => 0 });
  return { clock, store, shown, outbox, record };
}

describe("the message-update outbox", () => {
  it("an update that succeeds at once is done: no sweep tries it again", async () => {
    const { clock, shown, outbox, record } = await setUp([]);
    outbox.show(record);
    await outbox.idle();
    clock.t += 10 * UPDATE_GRACE_MS;
    expect(await outbox.runOnce()).toBe(0);
    expect(shown).toHaveLength(1);
  });

  it("after a 429 the update is tried again only once Retry-After has passed, and then it is done", async () => {
    const { clock, shown, outbox, record } = await setUp([
      async () => {
        throw new TransientDeliveryError("ratelimited", 7000);
      },
    ]);
    outbox.show(record);
    await outbox.idle();
    clock.t += 6999;
    expect(await outbox.runOnce()).toBe(0);
    clock.t += 1;
    expect(await outbox.runOnce()).toBe(1);
    expect(shown).toHaveLength(2);
    clock.t += 10 * UPDATE_GRACE_MS;
    expect(await outbox.runOnce()).toBe(0);
  });

  it("keeps retrying transient failures with growing waits, with no limit on attempts", async () => {
    const failures = Array.from({ length: 12 }, () => async () => {
      throw new TransientDeliveryError("http_503");
    });
    const { clock, shown, outbox, record } = await setUp(failures);
    outbox.show(record);
    await outbox.idle();
    while (shown.length < 13) {
      clock.t += 60_000;
      await outbox.runOnce();
    }
    clock.t += 60_000;
    expect(await outbox.runOnce()).toBe(0);
    expect(shown).toHaveLength(13);
  });

  it("a permanent refusal (the message was deleted) drops the update", async () => {
    const { clock, shown, outbox, record } = await setUp([
      async () => {
        throw new PermanentDeliveryError("message_not_found");
      },
    ]);
    outbox.show(record);
    await outbox.idle();
    clock.t += 10 * UPDATE_GRACE_MS;
    expect(await outbox.runOnce()).toBe(0);
    expect(shown).toHaveLength(1);
  });

  it("an update left behind by another instance is made by the sweep once due, with the stored record", async () => {
    const { clock, shown, outbox, record } = await setUp([]);
    clock.t += UPDATE_GRACE_MS;
    expect(await outbox.runOnce()).toBe(1);
    expect(shown.map((r) => [r.id, r.status])).toEqual([[record.id, "answered"]]);
  });
});
