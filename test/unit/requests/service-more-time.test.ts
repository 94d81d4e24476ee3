/**
 * More time (issue 9) through RequestService, on the memory store with the
 * fake messenger and fake time: an extended request outlives its old
 * deadline and expires at the new one, a long-poll held across the old
 * deadline keeps waiting (without spinning) and gets the answer, the message
 * is shown again with the new deadline, and every rule that says no changes
 * nothing: who may answer, the caller that gives up at its deadline, the
 * longest wait.
 */
import { describe, expect, it, vi } from "vitest";
import { Route } from "../../../src/requests/route-schema.js";
import { MAX_TIMEOUT_SECONDS } from "../../../src/protocol/request-body.js";
import type { AuditEntry } from "../../../src/requests/audit.js";
import { EXTENSION_MS } from "../../../src/requests/more-time.js";
import { createMemoryStore } from "../../../src/store/memory-store.js";
import { ALICE, BOB } from "../../fixtures/people.js";
import { ALLOW, bodyOf, DEFAULT_CHANNEL, flush, T0, useHarness, watch } from "../../helpers/service-harness.js";

const TEN_MINUTES = 600_000;
const ONLY_ALICE = { match: { token: "deploy-bot" }, approvers: { users: [ALICE.id] } };

let audited: AuditEntry[];
const h = useHarness(() => {
  audited = [];
  return { routes: [Route.parse(ONLY_ALICE)], audit: { record: (entry) => audited.push(entry) } };
});

async function create(fields: Record<string, unknown> = {}, tokenName = "ci-bot") {
  const { record } = await h.service.create({ tokenName, body: bodyOf(fields) });
  await h.service.idle();
  return record;
}

/** A fresh harness whose store counts its reads, and fails once there are too many: a poll spinning on the old deadline reads without end (and fake time never moves on). */
function countReads(): { readonly count: number } {
  const store = createMemoryStore({ now: () => Date.now() });
  const reads = { count: 0 };
  const get = (id: string) => {
    if ((reads.count += 1) > 50) throw new Error("the long-poll keeps reading: it spins");
    return store.get(id);
  };
  h.replace({ store: { ...store, get } });
  return reads;
}

describe("more time", () => {
  it("an extended request does not expire at its old deadline, and does at the new one", async () => {
    const { id, expiresAt } = await create();
    expect(expiresAt).toBe(T0 + TEN_MINUTES);
    const result = await h.service.extend(id, ALICE);
    expect(result).toMatchObject({ outcome: "applied", record: { status: "pending", expiresAt: expiresAt + EXTENSION_MS } });
    vi.setSystemTime(expiresAt);
    expect(await h.service.expireDue()).toBe(0);
    expect((await h.service.get(id))?.status).toBe("pending");
    vi.setSystemTime(expiresAt + EXTENSION_MS - 1);
    expect(await h.service.expireDue()).toBe(0);
    vi.setSystemTime(expiresAt + EXTENSION_MS);
    expect(await h.service.expireDue()).toBe(1);
    expect(await h.service.get(id)).toMatchObject({ status: "expired", endedAt: expiresAt + EXTENSION_MS });
  });

  it("a long-poll held across the old deadline keeps waiting, reading the request once there, and gets the answer", async () => {
    const reads = countReads();
    const { id, expiresAt } = await create();
    const wait = watch(h.service.wait(id, 2 * TEN_MINUTES));
    await flush();
    await h.service.extend(id, ALICE);
    const before = reads.count;
    await vi.advanceTimersByTimeAsync(TEN_MINUTES + 1000);
    expect(wait.settled).toBe(false);
    expect(reads.count - before).toBe(1);
    await vi.advanceTimersByTimeAsync(5 * 60_000);
    expect(wait.settled).toBe(false);
    expect(reads.count - before).toBe(1);
    await h.service.answer(id, ALLOW, ALICE);
    await flush();
    expect(await wait.value).toMatchObject({ status: "answered", decision: ALLOW, expiresAt: expiresAt + EXTENSION_MS });
  });

  it("a long-poll waiting past the old deadline returns the request expired at the new one", async () => {
    countReads();
    const { id, expiresAt } = await create();
    const wait = watch(h.service.wait(id, 60 * 60_000));
    await flush();
    await h.service.extend(id, ALICE);
    await vi.advanceTimersByTimeAsync(TEN_MINUTES + EXTENSION_MS);
    expect(wait.settled).toBe(true);
    expect(await wait.value).toMatchObject({ status: "expired", endedAt: expiresAt + EXTENSION_MS });
  });

  it("the message is shown again, still pending, with the new deadline", async () => {
    const { id, expiresAt } = await create();
    await h.service.extend(id, ALICE);
    await h.service.idle();
    expect(h.messenger.ended).toMatchObject([{ id, status: "pending", expiresAt: expiresAt + EXTENSION_MS }]);
  });

  it("is an audit event naming who gave the time and the new deadline", async () => {
    const { id, expiresAt } = await create();
    vi.setSystemTime(T0 + 1000);
    await h.service.extend(id, ALICE);
    expect(audited.at(-1)).toStrictEqual({
      at: T0 + 1000,
      type: "extended",
      requestId: id,
      token: "ci-bot",
      kind: "permission",
      channel: DEFAULT_CHANNEL,
      route: "default",
      person: ALICE,
      reason: `new deadline ${new Date(expiresAt + EXTENSION_MS).toISOString()}`,
    });
  });

  it("each click adds another 30 minutes", async () => {
    const { id, expiresAt } = await create();
    await h.service.extend(id, ALICE);
    expect(await h.service.extend(id, BOB)).toMatchObject({ outcome: "applied", record: { expiresAt: expiresAt + 2 * EXTENSION_MS } });
  });

  it("someone who may not answer is refused, audited as refused, and the deadline stays", async () => {
    const { id, expiresAt } = await create({}, "deploy-bot");
    const result = await h.service.extend(id, BOB);
    expect(result).toMatchObject({ outcome: "refused", refusal: { reason: "not_approver", approvers: { users: [ALICE.id] } } });
    expect((await h.service.get(id))?.expiresAt).toBe(expiresAt);
    expect(audited.at(-1)).toMatchObject({ type: "refused", requestId: id, person: BOB, reason: "not an approver of this request" });
    expect(audited.some((entry) => entry.type === "extended")).toBe(false);
    await h.service.idle();
    expect(h.messenger.ended).toEqual([]);
  });

  it("an approver of that route may", async () => {
    const { id } = await create({}, "deploy-bot");
    expect((await h.service.extend(id, ALICE)).outcome).toBe("applied");
  });

  it("a request whose caller gives up at its deadline (extendable: false) gets no more time: nothing changes", async () => {
    const { id, expiresAt } = await create({ extendable: false });
    expect(await h.service.extend(id, ALICE)).toMatchObject({ outcome: "no_more_time", reason: "not_extendable" });
    expect((await h.service.get(id))?.expiresAt).toBe(expiresAt);
    vi.setSystemTime(expiresAt);
    expect(await h.service.expireDue()).toBe(1);
    expect(audited.some((entry) => entry.type === "extended")).toBe(false);
  });

  it("never waits longer than the longest timeout from its creation: the extension that would pass it is refused", async () => {
    const { id } = await create({ timeoutSeconds: MAX_TIMEOUT_SECONDS - 2 * (EXTENSION_MS / 1000) });
    expect((await h.service.extend(id, ALICE)).outcome).toBe("applied");
    const last = await h.service.extend(id, ALICE);
    expect(last).toMatchObject({ outcome: "applied", record: { expiresAt: T0 + MAX_TIMEOUT_SECONDS * 1000 } });
    expect(await h.service.extend(id, ALICE)).toMatchObject({ outcome: "no_more_time", reason: "at_cap" });
    expect((await h.service.get(id))?.expiresAt).toBe(T0 + MAX_TIMEOUT_SECONDS * 1000);
  });

  it("an ended request is already_ended, and an unknown one not_found", async () => {
    const { id } = await create();
    await h.service.answer(id, ALLOW, ALICE);
    expect(await h.service.extend(id, ALICE)).toMatchObject({ outcome: "already_ended", record: { status: "answered" } });
    expect(await h.service.extend("req-404", ALICE)).toStrictEqual({ outcome: "not_found" });
  });

  it("a request past its deadline but not swept yet is expired on the spot, not given more time", async () => {
    const { id, expiresAt } = await create();
    vi.setSystemTime(expiresAt);
    expect(await h.service.extend(id, ALICE)).toMatchObject({ outcome: "already_ended", record: { status: "expired" } });
  });
});
