import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { bodies, DEFAULT_CHANNEL, startApiRelay, type ApiRelay } from "../../helpers/api-relay.js";
import { ALICE } from "../../fixtures/people.js";
import { until } from "../../helpers/until.js";

let relay: ApiRelay;
beforeEach(async () => {
  relay = await startApiRelay();
});
afterEach(async () => {
  await relay.close();
});

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

async function create(body: unknown, query = "") {
  const response = await relay.call(`/v1/requests${query}`, { json: body });
  return response;
}

/** Resolves once the relay holds `count` long-polls. */
async function waitersHeld(count: number) {
  await until(
    () => relay.service.waiting === count,
    2000,
    () => `${count} waiters (have ${relay.service.waiting})`,
  );
}

describe("creating requests", () => {
  it("a Bash permission request is posted once and the agent gets 201 with its id, pending and the deadline", async () => {
    const before = Date.now();
    const { status, body } = await create(bodies.bashPermission());
    expect(status).toBe(201);
    expect(Object.keys(body).sort()).toEqual(["expiresAt", "id", "status"]);
    expect(body.status).toBe("pending");
    const expiresAt = Date.parse(body.expiresAt);
    expect(expiresAt).toBeGreaterThanOrEqual(before + 300_000);
    expect(expiresAt).toBeLessThanOrEqual(Date.now() + 300_000);
    await relay.service.idle();
    expect(relay.messenger.posts).toHaveLength(1);
    expect(relay.messenger.posts[0]).toMatchObject({
      id: body.id,
      tokenName: "ci-bot",
      channel: DEFAULT_CHANNEL,
      body: { toolName: "Bash", suggestions: bodies.bashPermission().suggestions, input: bodies.bashPermission().input },
    });
  });

  it("a step gate is shown by GET with its kind, times and the Slack message it was posted as", async () => {
    const { body: created } = await create(bodies.stepGate({ channel: "C0DEPLOYS99" }));
    await relay.service.idle();
    const { status, body } = await relay.call(`/v1/requests/${created.id}`);
    expect(status).toBe(200);
    expect(body).toEqual({
      id: created.id,
      kind: "step_gate",
      status: "pending",
      createdAt: expect.stringMatching(ISO),
      expiresAt: created.expiresAt,
      slack: { channel: "C0DEPLOYS99", ts: relay.messenger.refs[0]!.ts },
    });
  });

  it("an AskUserQuestion long-poll returns the answers as soon as the person answers in Slack", async () => {
    const { body: created } = await create(bodies.askUserQuestion());
    const started = Date.now();
    const polling = relay.call(`/v1/requests/${created.id}?wait=10`);
    await waitersHeld(1);
    const answers = { "Which database should the new service use?": "PostgreSQL", "Which environments should get it first?": "staging, canary" };
    await relay.service.answer(created.id, { answers }, ALICE);
    const { status, body } = await polling;
    expect(Date.now() - started).toBeLessThan(2000);
    expect(status).toBe(200);
    expect(body).toMatchObject({ id: created.id, kind: "ask_user_question", status: "answered", decision: { answers }, answeredBy: ALICE });
    expect(body.answeredAt).toMatch(ISO);
    expect(relay.service.waiting).toBe(0);
  });

  it("interactive questions in autonomous mode with a default for everything are answered at once and never posted", async () => {
    const questions = bodies.interactive().questions.slice(0, 2);
    const { status, body } = await create(bodies.interactive({ questions, autonomous: true }));
    expect(status).toBe(201);
    expect(body).toMatchObject({
      kind: "interactive_questions",
      status: "answered",
      decision: { answers: { region: "eu-west-1", notify: true } },
      answeredBy: { id: "relay" },
    });
    await relay.service.idle();
    expect(relay.messenger.posts).toHaveLength(0);
  });

  it("interactive questions in autonomous mode with one question left for a person stay pending and are posted", async () => {
    const { status, body } = await create(bodies.interactive({ autonomous: true }));
    expect(status).toBe(201);
    expect(body.status).toBe("pending");
    await relay.service.idle();
    expect(relay.messenger.posts.map((r) => r.id)).toEqual([body.id]);
  });

  it("POST with ?wait holds until the answer and returns the request as GET shows it, still 201", async () => {
    const polling = create(bodies.bashPermission(), "?wait=10");
    await waitersHeld(1);
    const [record] = relay.stored;
    const decision = { behavior: "allow" as const, updatedInput: bodies.bashPermission().input };
    await relay.service.answer(record!.id, decision, ALICE);
    const { status, body } = await polling;
    expect(status).toBe(201);
    expect(body).toMatchObject({ id: record!.id, kind: "permission", status: "answered", decision });
  });

  it("POST with ?wait=0 returns the full view at once", async () => {
    const { status, body } = await create(bodies.stepGate(), "?wait=0");
    expect(status).toBe(201);
    expect(body).toMatchObject({ kind: "step_gate", status: "pending", createdAt: expect.stringMatching(ISO) });
  });
});

describe("long-polls", () => {
  it("GET ?wait=0.3 with no answer returns pending after about 0.3 s", async () => {
    const { body: created } = await create(bodies.stepGate());
    const started = Date.now();
    const { status, body } = await relay.call(`/v1/requests/${created.id}?wait=0.3`);
    const elapsed = Date.now() - started;
    expect(status).toBe(200);
    expect(body.status).toBe("pending");
    expect(elapsed).toBeGreaterThanOrEqual(280);
    expect(elapsed).toBeLessThan(1500);
    expect(relay.service.waiting).toBe(0);
  });

  it.each([
    ["a long-poll (GET ?wait=)", "get"],
    ["a create with ?wait=", "create"],
  ] as const)("%s whose client disconnects frees its waiter at once", async (_name, how) => {
    const abort = new AbortController();
    const url = how === "get" ? `/v1/requests/${(await create(bodies.stepGate())).body.id}?wait=30` : "/v1/requests?wait=30";
    const polling = relay.call(url, { signal: abort.signal, ...(how === "create" ? { json: bodies.stepGate() } : {}) }).catch((error: unknown) => error);
    await waitersHeld(1);
    const dropped = Date.now();
    abort.abort();
    await polling;
    await waitersHeld(0);
    expect(Date.now() - dropped).toBeLessThan(1000);
  });

  it("a request past its timeout shows expired", async () => {
    const { body: created } = await create(bodies.stepGate({ timeoutSeconds: 1 }));
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const { body } = await relay.call(`/v1/requests/${created.id}`);
    expect(body).toMatchObject({ id: created.id, status: "expired" });
  });

  it("a long-poll ends with expired when the request's timeout passes first", async () => {
    const { body: created } = await create(bodies.stepGate({ timeoutSeconds: 1 }));
    const started = Date.now();
    const { body } = await relay.call(`/v1/requests/${created.id}?wait=10`);
    expect(body.status).toBe("expired");
    expect(Date.now() - started).toBeLessThan(3000);
  });
});

describe("cancelling", () => {
  it("DELETE cancels: the waiting agent receives cancelled, GET shows it and the Slack message is updated", async () => {
    const { body: created } = await create(bodies.bashPermission());
    await relay.service.idle();
    const polling = relay.call(`/v1/requests/${created.id}?wait=10`, { as: "ci-bot" });
    await waitersHeld(1);
    const cancelled = await relay.call(`/v1/requests/${created.id}`, { method: "DELETE" });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({ id: created.id, status: "cancelled" });
    expect((await polling).body).toMatchObject({ id: created.id, status: "cancelled" });
    expect((await relay.call(`/v1/requests/${created.id}`)).body.status).toBe("cancelled");
    await relay.service.idle();
    expect(relay.messenger.ended).toMatchObject([{ id: created.id, status: "cancelled", cancelledBy: "agent:ci-bot" }]);
  });

  it("DELETE of a request already cancelled answers 200 again and changes nothing", async () => {
    const { body: created } = await create(bodies.stepGate());
    await relay.call(`/v1/requests/${created.id}`, { method: "DELETE" });
    const again = await relay.call(`/v1/requests/${created.id}`, { method: "DELETE" });
    expect(again.status).toBe(200);
    expect(again.body.status).toBe("cancelled");
    await relay.service.idle();
    expect(relay.messenger.ended).toHaveLength(1);
  });

  it("DELETE after the answer is 409 relay_already_answered with the decision", async () => {
    const { body: created } = await create(bodies.stepGate());
    await relay.service.answer(created.id, { reply: "y" }, ALICE);
    const { status, body } = await relay.call(`/v1/requests/${created.id}`, { method: "DELETE" });
    expect(status).toBe(409);
    expect(body.error).toMatchObject({
      code: "relay_already_answered",
      details: { id: created.id, status: "answered", decision: { reply: "y" }, answeredBy: ALICE },
    });
    expect((await relay.call(`/v1/requests/${created.id}`)).body.status).toBe("answered");
  });

  it("DELETE after expiry is 409 relay_already_ended with the request", async () => {
    const { body: created } = await create(bodies.stepGate({ timeoutSeconds: 1 }));
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const { status, body } = await relay.call(`/v1/requests/${created.id}`, { method: "DELETE" });
    expect(status).toBe(409);
    expect(body.error).toMatchObject({ code: "relay_already_ended", details: { id: created.id, status: "expired" } });
  });

  it("DELETE of a request Slack refused is 409 relay_already_ended with Slack's error", async () => {
    relay.messenger.refuseWith = "channel_not_found";
    const { body: created } = await create(bodies.stepGate());
    await relay.service.idle();
    const { status, body } = await relay.call(`/v1/requests/${created.id}`, { method: "DELETE" });
    expect(status).toBe(409);
    expect(body.error).toMatchObject({ code: "relay_already_ended", details: { status: "failed", error: "channel_not_found" } });
  });
});

describe("idempotency", () => {
  it("the same key from the same token returns the same request, 200 the second time, and posts once", async () => {
    const first = await create(bodies.bashPermission({ idempotencyKey: "deploy-1234" }));
    const second = await relay.call("/v1/requests", { json: bodies.bashPermission(), headers: { "Idempotency-Key": "deploy-1234" } });
    expect(first.status).toBe(201);
    expect(second.status).toBe(200);
    expect(second.body).toMatchObject({ id: first.body.id, kind: "permission", status: "pending", expiresAt: first.body.expiresAt });
    await relay.service.idle();
    expect(relay.messenger.posts).toHaveLength(1);
  });

  it("a repeat after the answer gets the answer", async () => {
    const first = await create(bodies.stepGate({ idempotencyKey: "gate-7" }));
    await relay.service.answer(first.body.id, { reply: "n" }, ALICE);
    const second = await create(bodies.stepGate({ idempotencyKey: "gate-7" }));
    expect(second.status).toBe(200);
    expect(second.body).toMatchObject({ id: first.body.id, status: "answered", decision: { reply: "n" } });
  });

  it("the same key from another token makes another request", async () => {
    const first = await create(bodies.stepGate({ idempotencyKey: "shared-key" }));
    const second = await relay.call("/v1/requests", { json: bodies.stepGate({ idempotencyKey: "shared-key" }), as: "laptop" });
    expect(second.status).toBe(201);
    expect(second.body.id).not.toBe(first.body.id);
    await relay.service.idle();
    expect(relay.messenger.posts.map((r) => r.tokenName)).toEqual(["ci-bot", "laptop"]);
  });
});
