/**
 * Answering from a Slack message (RequestService.answerFromMessage, the rule
 * in src/requests/from-message.ts): one call that reads the request once,
 * counts a click only on the request's own message (or a copy Slack confirms),
 * reads the click on the record as stored and answers it; and `get`, a read
 * that writes nothing, beside `getExpiringIfOverdue`, which expires an
 * overdue request first.
 */
import { describe, expect, it, vi } from "vitest";
import type { Reading } from "../../../src/requests/from-message.js";
import type { RequestRecord } from "../../../src/requests/model.js";
import { ALLOW, bodyOf, DEFAULT_CHANNEL, T0, useHarness } from "../../helpers/service-harness.js";
import { ALICE } from "../../fixtures/people.js";

const h = useHarness();

/** A pending Bash request whose message the fake messenger posted; resolves its record. */
async function posted(fields: Record<string, unknown> = {}): Promise<RequestRecord> {
  const { record } = await h.service.create({ tokenName: "ci-bot", body: bodyOf(fields) });
  await h.service.idle();
  return (await h.service.get(record.id))!;
}

const allow = (): Reading<string> => ({ decision: ALLOW });

describe("answerFromMessage", () => {
  it("a click on the request's own message is answered, with one read of the store", async () => {
    const record = await posted();
    const get = vi.spyOn(h.store, "get");
    const result = await h.service.answerFromMessage({ id: record.id, message: record.slack!, person: ALICE, read: allow });
    expect(result).toMatchObject({ outcome: "applied", record: { status: "answered", decision: ALLOW, answeredBy: ALICE } });
    expect(get).toHaveBeenCalledTimes(1);
  });

  it("a click on another message (another channel, or a ts the relay never posted) answers nothing", async () => {
    const record = await posted();
    const read = vi.fn(allow);
    for (const message of [
      { channel: "C0OTHER0001", ts: record.slack!.ts },
      { channel: record.slack!.channel, ts: "1700000000.999999" },
      { channel: record.slack!.channel },
    ]) {
      expect(await h.service.answerFromMessage({ id: record.id, message, person: ALICE, read })).toEqual({ outcome: "not_found" });
    }
    expect(read).not.toHaveBeenCalled();
    expect(await h.service.get(record.id)).toMatchObject({ status: "pending" });
  });

  it("a copy in the request's channel counts once Slack confirms it is the relay's own, and is recorded; one Slack denies answers nothing", async () => {
    const confirmed = { channel: DEFAULT_CHANNEL, ts: "1700000000.555555" };
    const asked: unknown[] = [];
    h.replace({ messageCopies: { isRequestMessage: async (ref, id) => (asked.push([ref, id]), ref.ts === confirmed.ts) } });
    const record = await posted();
    const denied = { channel: DEFAULT_CHANNEL, ts: "1700000000.666666" };
    expect(await h.service.answerFromMessage({ id: record.id, message: denied, person: ALICE, read: allow })).toEqual({ outcome: "not_found" });
    expect(await h.service.answerFromMessage({ id: record.id, message: confirmed, person: ALICE, read: allow })).toMatchObject({ outcome: "applied" });
    expect(asked).toEqual([
      [denied, record.id],
      [confirmed, record.id],
    ]);
    expect(await h.service.get(record.id)).toMatchObject({ status: "answered", otherMessages: [confirmed] });
  });

  it("a thread reply names no id: its request is the one whose message it replies to", async () => {
    const record = await posted();
    expect(await h.service.answerFromMessage({ message: record.slack!, person: ALICE, read: allow })).toMatchObject({
      outcome: "applied",
      record: { id: record.id },
    });
  });

  it("reads the click on the record as stored; a reading without a decision answers nothing and hands back the record", async () => {
    const record = await posted();
    const result = await h.service.answerFromMessage({ id: record.id, message: record.slack!, person: ALICE, read: (stored) => ({ none: stored.status }) });
    expect(result).toEqual({ outcome: "no_answer", record, none: "pending" });
    expect(await h.service.get(record.id)).toMatchObject({ status: "pending" });
  });

  it("a click after the deadline expires the request instead of answering it", async () => {
    const record = await posted({ timeoutSeconds: 60 });
    vi.setSystemTime(T0 + 61_000);
    const result = await h.service.answerFromMessage({ id: record.id, message: record.slack!, person: ALICE, read: allow });
    expect(result).toMatchObject({ outcome: "already_ended", record: { status: "expired" } });
  });

  it("a click on a request that has since ended is told it ended, and changes nothing", async () => {
    const record = await posted();
    await h.service.cancel(record.id, "agent");
    const result = await h.service.answerFromMessage({ id: record.id, message: record.slack!, person: ALICE, read: allow });
    expect(result).toMatchObject({ outcome: "already_ended", record: { status: "cancelled" } });
  });
});

describe("get and getExpiringIfOverdue", () => {
  it("get reads a request past its deadline as stored, still pending, and writes nothing", async () => {
    const record = await posted({ timeoutSeconds: 60 });
    vi.setSystemTime(T0 + 61_000);
    const transition = vi.spyOn(h.store, "transition");
    expect(await h.service.get(record.id)).toMatchObject({ status: "pending" });
    expect(transition).not.toHaveBeenCalled();
  });

  it("getExpiringIfOverdue expires it first, so the caller sees it ended at its deadline", async () => {
    const record = await posted({ timeoutSeconds: 60 });
    vi.setSystemTime(T0 + 61_000);
    expect(await h.service.getExpiringIfOverdue(record.id)).toMatchObject({ status: "expired" });
    expect(await h.service.get(record.id)).toMatchObject({ status: "expired" });
  });
});
