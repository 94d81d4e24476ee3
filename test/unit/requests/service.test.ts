/**
 * RequestService on the memory store: create (channel, timeout, autonomous,
 * idempotency), lazy expiry, answer, cancel, the expiry sweep and what
 * happens when Slack refuses or answers late.
 */
import { describe, expect, it, vi } from "vitest";
import { statusOf } from "../../../src/http/errors.js";
import { RelayError } from "../../../src/requests/errors.js";
import { EXPIRY_SWEEP_MS, PermanentDeliveryError, RELAY_PERSON } from "../../../src/requests/service.js";
import { ALLOW, bodyOf, DEFAULT_CHANNEL, deferred, T0, useHarness } from "../../helpers/service-harness.js";
import { ALICE, BOB } from "../../fixtures/people.js";

const h = useHarness();

const create = (fields: Record<string, unknown> = {}, tokenName = "ci-bot", idempotencyKey?: string) =>
  h.service.create({ tokenName, body: bodyOf(fields), ...(idempotencyKey === undefined ? {} : { idempotencyKey }) });

describe("create", () => {
  it("posts a request that names no channel to the default channel and stores its Slack message", async () => {
    const { record, created } = await create();
    expect(created).toBe(true);
    expect(record).toMatchObject({ id: "req-1", status: "pending", tokenName: "ci-bot", channel: DEFAULT_CHANNEL, createdAt: T0 });
    await h.service.idle();
    expect(h.messenger.posts.map((r) => r.id)).toEqual(["req-1"]);
    expect((await h.service.get("req-1"))?.slack).toEqual({ channel: DEFAULT_CHANNEL, ts: "1700000000.000101" });
  });

  it("posts to the channel the request names, not the default", async () => {
    const { record } = await create({ channel: "C0OTHER001" });
    await h.service.idle();
    expect(record.channel).toBe("C0OTHER001");
    expect(h.messenger.posts[0]?.channel).toBe("C0OTHER001");
  });

  it("refuses a request with no channel when no default is configured: 400 at path channel, nothing stored or posted", async () => {
    h.replace({ defaultChannel: undefined });
    expect(await refusalOf(create())).toMatchObject({ status: 400, code: "relay_invalid_request", details: [{ path: "channel" }] });
    await h.service.idle();
    expect(h.messenger.posts).toEqual([]);
    expect(await h.store.get("req-1")).toBeUndefined();
  });

  it("refuses a callbackUrl whose host RELAY_CALLBACK_HOSTS does not list: 400 at path callbackUrl", async () => {
    h.replace({ callbackHosts: ["hooks.example.com"] });
    expect(await refusalOf(create({ callbackUrl: "https://evil.example.org/cb" }))).toMatchObject({
      status: 400,
      details: [{ path: "callbackUrl" }],
    });
    await expect(create({ callbackUrl: "https://hooks.example.com/cb" })).resolves.toMatchObject({ created: true });
  });

  it("expires after the configured default timeout when the request names none", async () => {
    expect((await create()).record.expiresAt).toBe(T0 + 600_000);
  });

  it("expires after the request's own timeoutSeconds when given", async () => {
    expect((await create({ timeoutSeconds: 30 })).record.expiresAt).toBe(T0 + 30_000);
  });

  it("answers an autonomous request at once, by the relay, and never posts it", async () => {
    const { record } = await h.service.create({
      tokenName: "ci-bot",
      body: bodyOf({
        kind: "interactive_questions",
        autonomous: true,
        questions: [
          { id: "env", question: "Env?", type: "choice", options: ["staging", "production"], default: "staging" },
          { id: "notes", question: "Notes?", type: "text", required: false },
        ],
      }),
    });
    expect(record).toMatchObject({ status: "answered", decision: { answers: { env: "staging" } }, answeredBy: RELAY_PERSON, endedAt: T0 });
    await h.service.idle();
    expect(h.messenger.posts).toEqual([]);
    expect(h.messenger.ended).toEqual([]);
    expect((await h.service.get(record.id))?.status).toBe("answered");
  });

  it("posts an autonomous request that still has a question for a person", async () => {
    const { record } = await h.service.create({
      tokenName: "ci-bot",
      body: bodyOf({ kind: "interactive_questions", autonomous: true, questions: [{ id: "go", question: "Go?", type: "confirm" }] }),
    });
    await h.service.idle();
    expect(record.status).toBe("pending");
    expect(h.messenger.posts).toHaveLength(1);
  });

  it("returns the first request for a repeated idempotency key with the same body and posts it once", async () => {
    const first = await create({}, "ci-bot", "deploy-42");
    const second = await create({}, "ci-bot", "deploy-42");
    await h.service.idle();
    // As it is now: its message may have been recorded in between.
    expect(second).toMatchObject({ record: first.record, created: false });
    expect(h.messenger.posts).toHaveLength(1);
  });

  it("refuses a repeated idempotency key with another body (409 relay_idempotency_mismatch) and posts nothing more", async () => {
    const first = await create({}, "ci-bot", "deploy-44");
    expect(await refusalOf(create({ toolName: "Write" }, "ci-bot", "deploy-44"))).toMatchObject({
      code: "relay_idempotency_mismatch",
      status: 409,
      details: { id: first.record.id },
    });
    await h.service.idle();
    expect(h.messenger.posts).toHaveLength(1);
  });

  it("keeps idempotency keys apart per agent token", async () => {
    const first = await create({}, "ci-bot", "same-key");
    const other = await create({}, "deploy-bot", "same-key");
    await h.service.idle();
    expect(other.created).toBe(true);
    expect(other.record.id).not.toBe(first.record.id);
    expect(h.messenger.posts).toHaveLength(2);
  });
});

describe("get", () => {
  it("returns undefined for an unknown id", async () => {
    expect(await h.service.get("req-404")).toBeUndefined();
  });

  it("returns a pending request before its deadline", async () => {
    await create({ timeoutSeconds: 60 });
    vi.setSystemTime(T0 + 59_999);
    expect((await h.service.get("req-1"))?.status).toBe("pending");
  });

  it("getExpiringIfOverdue expires a pending request past its deadline on the spot and updates its message once", async () => {
    await create({ timeoutSeconds: 60 });
    await h.service.idle();
    vi.setSystemTime(T0 + 60_000);
    expect(await h.service.getExpiringIfOverdue("req-1")).toMatchObject({ status: "expired", endedAt: T0 + 60_000 });
    expect(await h.service.getExpiringIfOverdue("req-1")).toMatchObject({ status: "expired" });
    await h.service.idle();
    expect(h.messenger.ended.map((r) => [r.id, r.status])).toEqual([["req-1", "expired"]]);
  });
});

describe("answer", () => {
  it("records the first answer; a later one gets the stored decision back and changes nothing", async () => {
    await create();
    await h.service.idle();
    const first = await h.service.answer("req-1", ALLOW, ALICE);
    const second = await h.service.answer("req-1", { behavior: "deny", message: "no" }, BOB);
    expect(first).toMatchObject({ outcome: "applied", record: { status: "answered", decision: ALLOW, answeredBy: ALICE, endedAt: T0 } });
    expect(second).toMatchObject({ outcome: "already_ended", record: { decision: ALLOW, answeredBy: ALICE } });
    expect((await h.service.get("req-1"))?.decision).toEqual(ALLOW);
  });

  it("updates the Slack message once, with the ended record", async () => {
    await create();
    await h.service.idle();
    const result = await h.service.answer("req-1", ALLOW, ALICE);
    await h.service.answer("req-1", ALLOW, BOB);
    await h.service.idle();
    expect(h.messenger.ended).toEqual([result.outcome === "applied" ? result.record : undefined]);
    expect(h.messenger.ended[0]).toMatchObject({ status: "answered", slack: { ts: "1700000000.000101" } });
  });

  it("refuses a decision of another kind's shape with a RelayError and leaves the request pending", async () => {
    await create();
    expect(await refusalOf(h.service.answer("req-1", { reply: "y" }, ALICE))).toMatchObject({
      name: "RelayError",
      code: "relay_invalid_request",
      status: 400,
    });
    expect((await h.service.get("req-1"))?.status).toBe("pending");
  });

  it("returns the stored record of a request that already ended, whatever the decision", async () => {
    await create();
    await h.service.cancel("req-1", "agent");
    const result = await h.service.answer("req-1", { reply: "y" }, ALICE);
    expect(result).toMatchObject({ outcome: "already_ended", record: { status: "cancelled", cancelledBy: "agent" } });
  });

  it("does not let a click after the deadline win: the request expires instead", async () => {
    await create({ timeoutSeconds: 60 });
    vi.setSystemTime(T0 + 61_000);
    expect(await h.service.answer("req-1", ALLOW, ALICE)).toMatchObject({ outcome: "already_ended", record: { status: "expired" } });
  });

  it("reports not_found for an unknown id", async () => {
    expect(await h.service.answer("req-404", ALLOW, ALICE)).toEqual({ outcome: "not_found" });
  });
});

describe("cancel", () => {
  it("cancels a pending request, saying by whom and why, and updates the message", async () => {
    await create();
    await h.service.idle();
    const result = await h.service.cancel("req-1", "hook disconnected", "Claude Code closed the connection");
    expect(result).toMatchObject({
      outcome: "applied",
      record: { status: "cancelled", cancelledBy: "hook disconnected", error: "Claude Code closed the connection" },
    });
    await h.service.idle();
    expect(h.messenger.ended.map((r) => r.status)).toEqual(["cancelled"]);
  });

  it("leaves an answered request answered and returns its decision", async () => {
    await create();
    await h.service.answer("req-1", ALLOW, ALICE);
    expect(await h.service.cancel("req-1", "agent")).toMatchObject({ outcome: "already_ended", record: { status: "answered", decision: ALLOW } });
  });

  it("reports not_found for an unknown id", async () => {
    expect(await h.service.cancel("req-404")).toEqual({ outcome: "not_found" });
  });
});

describe("drain and shutdown", () => {
  it("once draining, refuses a new request with relay_shutting_down (503) and stores nothing", async () => {
    h.service.drain();
    expect(await refusalOf(create())).toMatchObject({ code: "relay_shutting_down", status: 503 });
    expect(await h.service.get("req-1")).toBeUndefined();
    expect(h.service.isDraining).toBe(true);
  });

  it("once draining, still records a person's answer to a request made before", async () => {
    await create();
    h.service.drain();
    expect(await h.service.answer("req-1", ALLOW, ALICE)).toMatchObject({ outcome: "applied", record: { status: "answered" } });
  });

  it("cancelAllPending cancels every pending request, whatever its deadline, with the reason, and leaves ended ones alone", async () => {
    await create({ timeoutSeconds: 10 });
    await create({ timeoutSeconds: 3000 });
    await create();
    await h.service.answer("req-3", ALLOW, ALICE);
    expect(await h.service.cancelAllPending("relay", "gone with the process")).toBe(2);
    for (const id of ["req-1", "req-2"])
      expect(await h.service.get(id)).toMatchObject({ status: "cancelled", cancelledBy: "relay", error: "gone with the process" });
    expect(await h.service.get("req-3")).toMatchObject({ status: "answered" });
  });
});

describe("expireDue", () => {
  it("expires only the requests past their deadline, each exactly once", async () => {
    await create({ timeoutSeconds: 10 });
    await create({ timeoutSeconds: 20 });
    await create({ timeoutSeconds: 30 });
    await h.service.idle();
    vi.setSystemTime(T0 + 20_000);
    expect(await h.service.expireDue()).toBe(2);
    expect(await h.service.expireDue()).toBe(0);
    await h.service.idle();
    expect(h.messenger.ended.map((r) => [r.id, r.status])).toEqual([
      ["req-1", "expired"],
      ["req-2", "expired"],
    ]);
    expect((await h.service.get("req-3"))?.status).toBe("pending");
  });

  it("does not expire answered requests", async () => {
    await create({ timeoutSeconds: 10 });
    await h.service.answer("req-1", ALLOW, ALICE);
    vi.setSystemTime(T0 + 60_000);
    expect(await h.service.expireDue()).toBe(0);
    expect((await h.service.get("req-1"))?.status).toBe("answered");
  });

  it("sweeps for expiries every EXPIRY_SWEEP_MS even when the queues are looked at every second", async () => {
    const stop = h.service.startSweeper(1000);
    await vi.advanceTimersByTimeAsync(10);
    await create({ timeoutSeconds: 1 });
    const deadline = (await h.store.get("req-1"))!.expiresAt;
    await vi.advanceTimersByTimeAsync(deadline - Date.now() + EXPIRY_SWEEP_MS);
    expect((await h.store.get("req-1"))?.status).toBe("expired");
    stop();
  });

  it("runs on a timer with startSweeper until stopped", async () => {
    await create({ timeoutSeconds: 1 });
    await create({ timeoutSeconds: 5 });
    const stop = h.service.startSweeper(1000);
    await vi.advanceTimersByTimeAsync(1000);
    expect((await h.store.get("req-1"))?.status).toBe("expired");
    stop();
    await vi.advanceTimersByTimeAsync(10_000);
    expect((await h.store.get("req-2"))?.status).toBe("pending");
  });
});

describe("Slack delivery", () => {
  it("marks the request failed with Slack's reason when Slack refuses it for good", async () => {
    h.messenger.postWith = async () => {
      throw new PermanentDeliveryError("channel_not_found");
    };
    await create();
    await h.service.idle();
    expect(await h.service.get("req-1")).toMatchObject({ status: "failed", error: "channel_not_found", endedAt: T0 });
    expect(h.messenger.ended).toEqual([]);
  });

  it("marks the request failed, never pending forever, when posting throws anything else", async () => {
    h.messenger.postWith = async () => {
      throw new Error("socket hang up");
    };
    await create();
    await h.service.idle();
    const record = await h.service.get("req-1");
    expect(record?.status).toBe("failed");
    expect(record?.error).toContain("socket hang up");
  });

  it("updates the message when the request ended while it was being posted, so no live buttons remain", async () => {
    const post = deferred<{ channel: string; ts: string }>();
    h.messenger.postWith = () => post.promise;
    await create();
    await h.service.cancel("req-1", "agent");
    expect(h.messenger.ended).toEqual([]);
    post.resolve({ channel: DEFAULT_CHANNEL, ts: "1700000000.000999" });
    await h.service.idle();
    expect(h.messenger.ended).toHaveLength(1);
    expect(h.messenger.ended[0]).toMatchObject({ status: "cancelled", slack: { ts: "1700000000.000999" } });
  });

  it("keeps the answer when updating the message fails", async () => {
    h.messenger.showEndedWith = async () => {
      throw new Error("message_not_found");
    };
    await create();
    await h.service.idle();
    expect((await h.service.answer("req-1", ALLOW, ALICE)).outcome).toBe("applied");
    await h.service.idle();
    expect((await h.service.get("req-1"))?.status).toBe("answered");
  });
});

/** What `promise` is refused with (a RelayError), with the HTTP status src/http answers its code with. */
async function refusalOf(promise: Promise<unknown>): Promise<{ name: string; code: string; status: number; details: unknown }> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(RelayError);
  const { name, code, details } = error as RelayError;
  return { name, code, status: statusOf(code), details };
}
