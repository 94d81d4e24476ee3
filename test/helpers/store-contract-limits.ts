/**
 * The store contract for a runaway agent (issue 19), run from
 * store-contract.ts against every store: an agent token's pending requests
 * are capped atomically with the create (`maxPending`), and a create that
 * asks what a pending request asks (`sameAs`) joins it.
 */
import { describe, expect, it } from "vitest";
import { TooManyPendingError } from "../../src/requests/errors.js";
import type { OpenStore } from "./store-contract.js";

const ASK = "ab".repeat(32);
const OTHER_ASK = "cd".repeat(32);

export function runLimitsContract(open: OpenStore): void {
  describe("a token's pending cap", () => {
    it("refuses the create past the cap with the count and the time the earliest pending request runs out, storing nothing", async () => {
      const { store, record, clock } = await open();
      const first = record({ id: store.newId("ci"), expiresAt: clock.t + 20_000 });
      await store.create(first, { maxPending: 2 });
      await store.create(record(), { maxPending: 2 });
      const refused = record({ id: store.newId("ci") });
      const error = await store.create(refused, { maxPending: 2 }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(TooManyPendingError);
      expect(error).toMatchObject({ code: "relay_too_many_pending", pending: 2, limit: 2, retryAfterSeconds: 20, details: { pending: 2, limit: 2 } });
      expect(await store.get(refused.id)).toBeUndefined();
      expect((await store.counts()).pending).toBe(2);
    });

    it("counts only pending requests: one that ended makes room", async () => {
      const { store, record, clock } = await open();
      const capped = { maxPending: 1 };
      const { record: first } = await store.create(record(), capped);
      await expect(store.create(record(), capped)).rejects.toBeInstanceOf(TooManyPendingError);
      await store.transition(first.id, { status: "cancelled", at: clock.t });
      expect((await store.create(record(), capped)).created).toBe(true);
      await expect(store.create(record(), capped)).rejects.toBeInstanceOf(TooManyPendingError);
    });

    it("counts each token on its own", async () => {
      const { store, record } = await open();
      await store.create(record({ tokenName: "ci" }), { maxPending: 1 });
      expect((await store.create(record({ tokenName: "deploy-bot" }), { maxPending: 1 })).created).toBe(true);
      await expect(store.create(record({ tokenName: "ci" }), { maxPending: 1 })).rejects.toBeInstanceOf(TooManyPendingError);
    });

    it("never refuses a request created already ended, nor a repeated idempotency key", async () => {
      const { store, record, clock } = await open();
      const first = record({ id: store.newId("ci") });
      await store.create(first, { maxPending: 1, idempotencyKey: "ci:again" });
      expect(await store.create(record(), { maxPending: 1, idempotencyKey: "ci:again" })).toStrictEqual({ record: first, created: false });
      const answered = record({ status: "answered", decision: { reply: "y" }, answeredBy: { id: "relay" }, endedAt: clock.t });
      expect((await store.create(answered, { maxPending: 1 })).created).toBe(true);
    });

    it("when 10 creates race for the last 3 places, 3 are created and 7 refused", async () => {
      const { store, record } = await open();
      await store.create(record(), { maxPending: 4 });
      const outcomes = await Promise.allSettled(Array.from({ length: 10 }, () => store.create(record(), { maxPending: 4 })));
      expect(outcomes.filter((o) => o.status === "fulfilled")).toHaveLength(3);
      expect(outcomes.filter((o) => o.status === "rejected" && o.reason instanceof TooManyPendingError)).toHaveLength(7);
      expect((await store.counts()).pending).toBe(4);
    });
  });

  describe("joining a pending request that asks the same", () => {
    it("a second create with the same ask returns the pending request, joined, and stores nothing", async () => {
      const { store, record } = await open();
      const first = record({ id: store.newId("ci") });
      await store.create(first, { sameAs: ASK });
      const second = record({ id: store.newId("ci") });
      expect(await store.create(second, { sameAs: ASK, maxPending: 1 })).toStrictEqual({ record: first, created: false, joined: true });
      expect(await store.get(second.id)).toBeUndefined();
      expect((await store.create(record(), { sameAs: OTHER_ASK })).created).toBe(true);
    });

    it("once the request ended, the same ask creates a new one", async () => {
      const { store, record, clock } = await open();
      const first = record({ id: store.newId("ci") });
      await store.create(first, { sameAs: ASK });
      await store.transition(first.id, { status: "answered", decision: { reply: "y" }, answeredBy: { id: "U1" }, at: clock.t });
      const again = record({ id: store.newId("ci") });
      expect(await store.create(again, { sameAs: ASK })).toStrictEqual({ record: again, created: true });
      expect((await store.create(record(), { sameAs: ASK })).record.id).toBe(again.id);
    });
  });
}
