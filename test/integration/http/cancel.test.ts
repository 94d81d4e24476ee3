/**
 * Cancelling is idempotent (docs/api.md, docs/architecture.md §3): a DELETE of
 * a request already cancelled — by this agent, by a retry of the same DELETE
 * whose first reply was lost, or by the relay itself — answers 200 with the
 * request as it is and changes nothing; only a request that ended otherwise
 * (answered, expired, failed) is a 409 with the request. Pinned on the memory
 * store and on a real Redis, where the cancel is a Lua transition.
 */
import { describe, expect, it } from "vitest";
import { bodies, useApiRelay, type ApiRelay } from "../../helpers/api-relay.js";
import { useTestRedis } from "../../helpers/redis.js";
import { ALICE } from "../../fixtures/people.js";
import { createMemoryStore } from "../../../src/store/memory-store.js";
import { createRedisStore } from "../../../src/store/redis-store.js";
import type { RequestStore } from "../../../src/requests/store.js";

const start = useApiRelay();
const testRedis = useTestRedis();

const stores: Array<[string, () => RequestStore]> = [
  ["memory", () => createMemoryStore()],
  ["Redis", () => createRedisStore({ redis: testRedis.redis(), prefix: testRedis.prefix() })],
];

async function created(relay: ApiRelay): Promise<string> {
  const { status, body } = await relay.call("/v1/requests", { json: bodies.stepGate() });
  expect(status).toBe(201);
  await relay.service.idle();
  return body.id as string;
}

const cancel = (relay: ApiRelay, id: string) => relay.call(`/v1/requests/${id}`, { method: "DELETE" });

/** The audit events of one request, as an operator reads them. */
async function auditTypes(relay: ApiRelay, id: string): Promise<string[]> {
  await relay.audit.idle();
  const { status, body } = await relay.call(`/v1/audit?requestId=${id}`, { as: "ops" });
  expect(status).toBe(200);
  return (body.events as Array<{ type: string }>).map((event) => event.type);
}

describe.each(stores)("cancelling twice, on the %s store", (_name, store) => {
  it("a second DELETE answers 200 with the request exactly as the first left it; one cancellation, one message update, one audit event", async () => {
    const relay = await start({ store: store() });
    const id = await created(relay);
    const first = await cancel(relay, id);
    const second = await cancel(relay, id);

    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ id, status: "cancelled" });
    expect(second.status).toBe(200);
    expect(second.body).toStrictEqual(first.body);
    await relay.service.idle();
    expect(relay.messenger.ended.map((record) => [record.id, record.status])).toStrictEqual([[id, "cancelled"]]);
    expect((await auditTypes(relay, id)).filter((type) => type === "cancelled")).toHaveLength(1);
  });

  it("two DELETEs at once both answer 200 with the cancelled request, and it is cancelled once", async () => {
    const relay = await start({ store: store() });
    const id = await created(relay);
    const replies = await Promise.all([cancel(relay, id), cancel(relay, id)]);

    expect(replies.map((reply) => reply.status)).toStrictEqual([200, 200]);
    expect(replies[0]!.body).toStrictEqual(replies[1]!.body);
    expect(replies[0]!.body).toMatchObject({ id, status: "cancelled" });
    await relay.service.idle();
    expect(relay.messenger.ended).toHaveLength(1);
    expect((await auditTypes(relay, id)).filter((type) => type === "cancelled")).toHaveLength(1);
  });

  it("a DELETE of a request the relay cancelled itself answers 200 with the relay's reason, unchanged", async () => {
    const relay = await start({ store: store() });
    const id = await created(relay);
    await relay.service.cancel(id, "relay", "Claude Code closed the connection");

    const { status, body } = await cancel(relay, id);
    expect(status).toBe(200);
    expect(body).toMatchObject({ id, status: "cancelled", error: "Claude Code closed the connection" });
    await relay.service.idle();
    expect(relay.messenger.ended).toHaveLength(1);
  });

  it("a DELETE after the answer is still 409 relay_already_answered with the request, and the answer stands", async () => {
    const relay = await start({ store: store() });
    const id = await created(relay);
    await relay.service.answer(id, { reply: "y" }, ALICE);

    const { status, body } = await cancel(relay, id);
    expect(status).toBe(409);
    expect(body.error).toMatchObject({ code: "relay_already_answered", details: { id, status: "answered", decision: { reply: "y" } } });
    expect((await relay.call(`/v1/requests/${id}`)).body).toMatchObject({ status: "answered", decision: { reply: "y" } });
  });
});
