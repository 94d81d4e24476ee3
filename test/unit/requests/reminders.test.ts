import { describe, expect, it } from "vitest";
import { silentLogger } from "../../../src/logger.js";
import type { AuditEntry } from "../../../src/requests/audit.js";
import { PermanentDeliveryError, TransientDeliveryError } from "../../../src/requests/delivery.js";
import type { RequestPolicy, RequestRecord } from "../../../src/requests/model.js";
import type { ScheduleEntry } from "../../../src/requests/policy.js";
import { remindersToQueue } from "../../../src/requests/policy.js";
import { Reminders } from "../../../src/requests/reminders.js";
import type { RequestStore } from "../../../src/requests/store.js";
import { onWorker } from "../../helpers/queue-worker.js";
import { entryKey, entryOfKey } from "../../../src/requests/store.js";
import { CREATED_AT, permissionRecord } from "../../fixtures/records.js";
import { LEAD } from "../../fixtures/people.js";

const NOW = CREATED_AT + 400_000;
const policy = (fields: Partial<RequestPolicy>): RequestPolicy => ({ alwaysAllow: "tool", ...fields });

const indexOf = (key: string) => Number(entryOfKey("reminders", key).detail);

/** A reminder queue of claimed entries and the record they belong to; records what the sweep did with each. */
function fakeStore(record: RequestRecord | undefined, claimed: Array<{ index: number; attempts?: number }>) {
  const done = { completed: [] as number[], retried: [] as Array<{ index: number; nextAt: number; attempts: number }> };
  const store: Pick<RequestStore, "get" | "claim" | "retry" | "complete"> = {
    get: async () => record,
    claim: async () => claimed.map(({ index, attempts = 0 }) => ({ key: entryKey("req-0001", index), id: "req-0001", attempts })),
    retry: async (_queue, key, nextAt, attempts) => {
      done.retried.push({ index: indexOf(key), nextAt, attempts });
      return true;
    },
    complete: async (_queue, key) => {
      done.completed.push(indexOf(key));
      return true;
    },
  };
  return { store, done };
}

function reminders(store: Pick<RequestStore, "get" | "claim" | "retry" | "complete">, remind: (entry: ScheduleEntry) => Promise<void> = async () => {}) {
  const sent: ScheduleEntry[] = [];
  const audit: AuditEntry[] = [];
  const messenger = {
    remind: async (_record: RequestRecord, entry: ScheduleEntry) => {
      await remind(entry);
      sent.push(entry);
    },
  };
  const worked = onWorker(
    store,
    () => NOW,
    () => new Reminders({ store, messenger, audit: { record: (entry) => audit.push(entry) }, logger: silentLogger, now: () => NOW }),
    () => 0.5,
  );
  // One sweep: how many entries were sent.
  return { sweep: { runOnce: worked.doneOnce }, sent, audit };
}

const scheduled = permissionRecord({}, { policy: policy({ reminders: [300, 900], escalate: [{ after: 1200, users: [LEAD.id] }] }), postedAt: CREATED_AT });

describe("reminders and escalations", () => {
  it("queues the entries due before the request's deadline, counted from when it was posted", () => {
    const record = { ...scheduled, expiresAt: CREATED_AT + 1_000_000 };
    expect(remindersToQueue(record, CREATED_AT)).toEqual([
      { index: 0, dueAt: CREATED_AT + 300_000 },
      { index: 1, dueAt: CREATED_AT + 900_000 },
    ]);
  });

  it("sends each claimed entry of a pending request once, audits it and takes it off the queue", async () => {
    const { store, done } = fakeStore(scheduled, [{ index: 0 }, { index: 2 }]);
    const { sweep, sent, audit } = reminders(store);
    expect(await sweep.runOnce()).toBe(2);
    expect(sent.map((entry) => entry.type)).toEqual(["reminder", "escalation"]);
    expect(done.completed).toEqual([0, 2]);
    expect(audit.map((entry) => [entry.type, entry.reason])).toEqual([
      ["reminded", "after 300 s"],
      ["escalated", `after 1200 s, to ${LEAD.id}`],
    ]);
  });

  it("sends nothing for a request that has ended, and drops the entry", async () => {
    const { store, done } = fakeStore({ ...scheduled, status: "answered", endedAt: NOW }, [{ index: 0 }]);
    const { sweep, sent } = reminders(store);
    expect(await sweep.runOnce()).toBe(0);
    expect(sent).toEqual([]);
    expect(done.completed).toEqual([0]);
  });

  it("drops an entry whose request is gone or whose schedule no longer has that index", async () => {
    for (const [record, index] of [
      [undefined, 0],
      [scheduled, 7],
    ] as const) {
      const { store, done } = fakeStore(record, [{ index }]);
      const { sweep, sent } = reminders(store);
      await sweep.runOnce();
      expect(sent).toEqual([]);
      expect(done.completed).toEqual([index]);
    }
  });

  it("retries later when Slack could not take it, honouring Retry-After", async () => {
    const { store, done } = fakeStore(scheduled, [{ index: 0, attempts: 2 }]);
    const { sweep, audit } = reminders(store, async () => {
      throw new TransientDeliveryError("ratelimited", 30_000);
    });
    expect(await sweep.runOnce()).toBe(0);
    expect(done.retried).toEqual([{ index: 0, nextAt: NOW + 30_000, attempts: 3 }]);
    expect(done.completed).toEqual([]);
    expect(audit).toEqual([]);
  });

  it("gives an entry up when Slack refuses it for good", async () => {
    const { store, done } = fakeStore(scheduled, [{ index: 1 }]);
    const { sweep } = reminders(store, async () => {
      throw new PermanentDeliveryError("channel_not_found");
    });
    await sweep.runOnce();
    expect(done.completed).toEqual([1]);
    expect(done.retried).toEqual([]);
  });
});
