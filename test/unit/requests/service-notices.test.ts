/**
 * Everyone told (docs/architecture.md §7), through RequestService on the memory store with
 * the fake messenger: once a request with a Slack message ends, the sweep
 * sends the reply in its thread, then the DM to the person it was made for;
 * each part once, a failed part retried on its own (a DM sent again never
 * repeats the thread reply), a refused one given up; expired requests are
 * told too, and nothing goes out while a request is pending.
 */
import { describe, expect, it, vi } from "vitest";
import { PermanentDeliveryError, TransientDeliveryError } from "../../../src/requests/service.js";
import { ALICE, BOB } from "../../fixtures/people.js";
import { ALLOW, bodyOf, T0, useHarness } from "../../helpers/service-harness.js";

const h = useHarness();

/** A posted Bash permission request, made for Bob unless `forBob` is false. */
async function create({ forBob = true } = {}): Promise<string> {
  const body = bodyOf(forBob ? { requestedBy: { slackUserId: BOB.id } } : {});
  const { record } = await h.service.create({ tokenName: "ci-bot", body });
  await h.service.idle();
  return record.id;
}

const sent = () => h.messenger.notices.map(({ record, part }) => `${record.id}/${part}/${record.status}`);

describe("outcome notices", () => {
  it("nothing is sent while the request is pending", async () => {
    await create();
    vi.setSystemTime(T0 + 60_000);
    expect(await h.service.sweepNotices()).toBe(0);
    expect(h.messenger.notices).toEqual([]);
  });

  it("after an answer, the sweep sends the thread reply, then the DM to the requester, each once", async () => {
    const id = await create();
    await h.service.answer(id, ALLOW, ALICE);
    expect(await h.service.sweepNotices()).toBe(2);
    expect(sent()).toEqual([`${id}/thread/answered`, `${id}/dm/answered`]);
    expect(h.messenger.notices[0]!.record).toMatchObject({ answeredBy: ALICE, decision: ALLOW, slack: { ts: expect.any(String) } });
    vi.setSystemTime(T0 + 10 * 60_000);
    expect(await h.service.sweepNotices()).toBe(0);
    expect(h.messenger.notices).toHaveLength(2);
  });

  it("a request without a requestedBy gets the thread reply only", async () => {
    const id = await create({ forBob: false });
    await h.service.cancel(id, "agent");
    await h.service.sweepNotices();
    expect(sent()).toEqual([`${id}/thread/cancelled`]);
  });

  it("expired requests are told too, in the thread and to the requester", async () => {
    const id = await create();
    vi.setSystemTime(T0 + 600_000);
    expect(await h.service.expireDue()).toBe(1);
    await h.service.sweepNotices();
    expect(sent()).toEqual([`${id}/thread/expired`, `${id}/dm/expired`]);
  });

  it("a DM that failed is retried after Slack's Retry-After without repeating the thread reply", async () => {
    const id = await create();
    let refusals = 1;
    h.messenger.tellOutcomeWith = async (_record, part) => {
      if (part === "dm" && refusals-- > 0) throw new TransientDeliveryError("ratelimited", 30_000);
    };
    await h.service.answer(id, ALLOW, ALICE);
    expect(await h.service.sweepNotices()).toBe(1);
    expect(sent()).toEqual([`${id}/thread/answered`]);
    vi.setSystemTime(Date.now() + 29_000);
    expect(await h.service.sweepNotices()).toBe(0);
    vi.setSystemTime(Date.now() + 1_000);
    expect(await h.service.sweepNotices()).toBe(1);
    expect(sent()).toEqual([`${id}/thread/answered`, `${id}/dm/answered`]);
  });

  it("a thread reply that failed is retried after a backoff, and the DM goes out meanwhile", async () => {
    const id = await create();
    let refusals = 1;
    h.messenger.tellOutcomeWith = async (_record, part) => {
      if (part === "thread" && refusals-- > 0) throw new TransientDeliveryError("internal_error");
    };
    await h.service.cancel(id, "agent");
    expect(await h.service.sweepNotices()).toBe(1);
    expect(sent()).toEqual([`${id}/dm/cancelled`]);
    vi.setSystemTime(Date.now() + 5 * 60_000);
    expect(await h.service.sweepNotices()).toBe(1);
    expect(sent()).toEqual([`${id}/dm/cancelled`, `${id}/thread/cancelled`]);
  });

  it("a part Slack refuses for good (the requester cannot be DMed) is given up, not retried", async () => {
    const id = await create();
    h.messenger.tellOutcomeWith = async (_record, part) => {
      if (part === "dm") throw new PermanentDeliveryError("channel_not_found");
    };
    await h.service.cancel(id, "agent");
    await h.service.sweepNotices();
    vi.setSystemTime(T0 + 24 * 3600_000 - 1);
    expect(await h.service.sweepNotices()).toBe(0);
    expect(sent()).toEqual([`${id}/thread/cancelled`]);
  });

  it("the requester who decided themselves gets no DM; the thread still records it", async () => {
    const id = await create();
    await h.service.answer(id, ALLOW, BOB);
    await h.service.sweepNotices();
    expect(sent()).toEqual([`${id}/thread/answered`]);
  });

  it("a request that ended before it was posted has no message: nobody is told", async () => {
    h.messenger.postWith = () => new Promise(() => {});
    const { record } = await h.service.create({ tokenName: "ci-bot", body: bodyOf({ requestedBy: { slackUserId: BOB.id } }) });
    await h.service.cancel(record.id, "agent");
    expect(await h.service.sweepNotices()).toBe(0);
    expect(h.messenger.notices).toEqual([]);
  });
});
