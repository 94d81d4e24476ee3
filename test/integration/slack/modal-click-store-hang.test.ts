/**
 * A click on a button that opens a modal (Edit…, Answer…) while the store
 * hangs: Slack's trigger_id lives 3 s, so the relay reads the request within
 * its store budget and, when the store has not answered by then, tells the
 * person that nothing opened instead of leaving them with a dead button. The
 * store here is the memory store with its reads held (never answered) from
 * a point in the test on; signed payloads go to the real Bolt receiver.
 */
import { afterEach, expect, it } from "vitest";
import type { RequestStore } from "../../../src/requests/store.js";
import { NOT_OPENED, STORE_BUDGET } from "../../../src/slack/listeners/context.js";
import { Action, encodeButton } from "../../../src/slack/ids.js";
import { createMemoryStore } from "../../../src/store/memory-store.js";
import { startSlackRelay, type SlackRelay } from "../../helpers/slack-relay.js";
import { blockAction, CHANNEL } from "../../helpers/slack.js";
import { ALICE } from "../../fixtures/people.js";

const permission = { kind: "permission", toolName: "Bash", input: { command: "make deploy" } };

let relay: SlackRelay | undefined;

afterEach(async () => {
  await relay?.close();
  expect(relay?.unexpected).toEqual([]);
});

/** The memory store, whose reads of a request (`get`, `findBySlackMessage`) never answer once `hang()` was called. */
function storeThatHangs(): { store: RequestStore; hang(): void } {
  const store = createMemoryStore();
  let hanging = false;
  const held = new Set(["get", "findBySlackMessage"]);
  const proxy = new Proxy(store, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== "function") return value;
      if (hanging && held.has(String(property))) return () => new Promise(() => {});
      return (value as (...args: unknown[]) => unknown).bind(target);
    },
  });
  return { store: proxy, hang: () => void (hanging = true) };
}

it.each([
  ["Edit…", Action.edit],
  ["Deny with reason…", Action.denyWithReason],
])(
  "when the store does not answer a click on %s, the person is told within the store budget that nothing opened, and no modal is opened",
  { timeout: 15_000 },
  async (_name, actionId) => {
    const { store, hang } = storeThatHangs();
    relay = await startSlackRelay({ store });
    relay.api.onPost().on("chat.postEphemeral");
    const record = await relay.create(permission);

    hang();
    const started = Date.now();
    const response = await relay.post(blockAction({ actionId, value: encodeButton({ r: record.id }), triggerId: "trigger-hang" }));
    expect(response.status).toBe(200);
    await relay.settle();
    // Told while the click's trigger_id would still have been valid.
    expect(Date.now() - started).toBeLessThan(STORE_BUDGET.readMs + 1000);
    expect(relay.api.callsTo("chat.postEphemeral").map((call) => call.args)).toEqual([{ channel: CHANNEL, user: ALICE.id, text: NOT_OPENED }]);
    expect(relay.api.callsTo("views.open")).toEqual([]);
    relay.api.done();
  },
);
