/**
 * Admin tokens (RELAY_ADMIN_TOKENS) on the agent API: read-only operator
 * tokens. They read any agent's request; creating, cancelling and the Claude
 * Code hook endpoint are 403 relay_forbidden, refused before the body is
 * read, and change nothing. Agent tokens keep seeing only their own requests.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { hookFixture } from "../../fixtures/claude-code.js";
import { bodies, startApiRelay, type ApiRelay } from "../../helpers/api-relay.js";
import { ALICE } from "../../fixtures/people.js";

let relay: ApiRelay;
beforeEach(async () => {
  relay = await startApiRelay();
});
afterEach(async () => {
  await relay.close();
});

const admin = { as: "ops" } as const;

async function agentRequest(): Promise<string> {
  const created = await relay.call("/v1/requests", { json: bodies.stepGate(), as: "ci-bot" });
  expect(created.status).toBe(201);
  await relay.service.idle();
  return created.body.id as string;
}

function expectForbidden(response: { status: number; body: { error: { code: string; message: string } } }): void {
  expect(response.status).toBe(403);
  expect(response.body.error.code).toBe("relay_forbidden");
  expect(response.body.error.message).toContain("RELAY_TOKENS");
}

describe("an admin token is refused where an agent acts", () => {
  it("creating a request → 403, nothing created or posted", async () => {
    expectForbidden(await relay.call("/v1/requests", { json: bodies.bashPermission(), ...admin }));
    await relay.service.idle();
    expect(relay.stored).toEqual([]);
    expect(relay.messenger.posts).toEqual([]);
  });

  it("creating is refused before the body is read: an invalid body is still a 403", async () => {
    expectForbidden(await relay.call("/v1/requests", { body: "{not json", ...admin }));
  });

  it("cancelling an agent's request → 403, and the request stays pending", async () => {
    const id = await agentRequest();
    expectForbidden(await relay.call(`/v1/requests/${id}`, { method: "DELETE", ...admin }));
    expect((await relay.call(`/v1/requests/${id}`, { as: "ci-bot" })).body.status).toBe("pending");
  });

  it("the Claude Code hook endpoint → 403 at once, nothing created", async () => {
    const started = Date.now();
    expectForbidden(await relay.call("/v1/hooks/claude-code", { json: hookFixture("pre-tool-use"), ...admin }));
    expect(Date.now() - started).toBeLessThan(1000);
    await relay.service.idle();
    expect(relay.stored).toEqual([]);
  });
});

describe("an admin token reads every request", () => {
  it("reads an agent's request by id, as the agent sees it", async () => {
    const id = await agentRequest();
    const asAgent = await relay.call(`/v1/requests/${id}`, { as: "ci-bot" });
    const asAdmin = await relay.call(`/v1/requests/${id}`, admin);
    expect(asAdmin.status).toBe(200);
    expect(asAdmin.body).toStrictEqual(asAgent.body);
  });

  it("long-polls an agent's request until a person answers it", async () => {
    const id = await agentRequest();
    const held = relay.call(`/v1/requests/${id}?wait=5`, admin);
    await new Promise((resolve) => setTimeout(resolve, 50));
    await relay.service.answer(id, { reply: "y" }, ALICE);
    expect((await held).body).toMatchObject({ id, status: "answered", decision: { reply: "y" } });
  });

  it("an unknown id is still 404", async () => {
    expect((await relay.call("/v1/requests/no-such-request", admin)).status).toBe(404);
  });

  it("another agent token still does not see the request (404, as an unknown id)", async () => {
    const id = await agentRequest();
    expect((await relay.call(`/v1/requests/${id}`, { as: "laptop" })).status).toBe(404);
  });
});
