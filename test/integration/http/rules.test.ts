/**
 * GET /v1/rules and DELETE /v1/rules/{id} over HTTP: an admin token sees and
 * revokes every "Allow for a while" rule, an agent token only its own
 * token's; another token's rule, an unknown, revoked or ended one is 404
 * exactly alike; 401 without a known token; a 400 naming each bad
 * parameter; a revoked rule answers no new request.
 */
import { describe, expect, it } from "vitest";
import { RuleList, RuleView } from "../../../src/protocol/operator.js";
import { ALICE, BOB } from "../../fixtures/people.js";
import { bodies, expectInvalidParameter, useApiRelay, type ApiRelay } from "../../helpers/api-relay.js";

const start = useApiRelay();

/** A rule created by `person`'s click on a new Bash request of token `as`; resolves its id. */
async function ruleOf(relay: ApiRelay, as: string, person = ALICE): Promise<string> {
  const created = await relay.call("/v1/requests", { json: bodies.bashPermission(), as });
  const grant = await relay.service.allowForAWhile(created.body.id as string, person);
  const rule = await grant.rule;
  await relay.service.idle();
  return rule!.id;
}

/** ci-bot's rule by Alice, then laptop's by Bob, 3 ms apart. */
async function withRules(): Promise<{ relay: ApiRelay; ciRule: string; laptopRule: string }> {
  const relay = await start();
  const ciRule = await ruleOf(relay, "ci-bot");
  await new Promise((resolve) => setTimeout(resolve, 3));
  const laptopRule = await ruleOf(relay, "laptop", BOB);
  return { relay, ciRule, laptopRule };
}

const idsOf = (body: { rules: Array<{ id: string }> }) => body.rules.map((rule) => rule.id);
const NOT_FOUND = { status: 404, body: { error: { code: "relay_not_found", message: "The rule was not found." } } };

describe("GET /v1/rules", () => {
  it("an admin token lists every live rule, newest first, with its scope, creator, times and uses", async () => {
    const { relay, ciRule, laptopRule } = await withRules();
    const { status, body } = await relay.call("/v1/rules", { as: "ops" });
    expect(status).toBe(200);
    expect(RuleList.parse(body)).toStrictEqual(body);
    expect(idsOf(body)).toStrictEqual([laptopRule, ciRule]);
    const [rule] = await relay.service.rules!.list({ limit: 10, token: "ci-bot" });
    expect(body.rules[1]).toStrictEqual({
      id: ciRule,
      token: "ci-bot",
      sessionId: bodies.bashPermission().agent.sessionId,
      toolName: "Bash",
      createdBy: ALICE,
      createdAt: new Date(rule!.createdAt).toISOString(),
      expiresAt: new Date(rule!.createdAt + 15 * 60_000).toISOString(),
      uses: 0,
      requestId: rule!.requestId,
    });
  });

  it("an agent token lists only its own token's rules", async () => {
    const { relay, ciRule, laptopRule } = await withRules();
    expect(idsOf((await relay.call("/v1/rules", { as: "ci-bot" })).body)).toStrictEqual([ciRule]);
    expect(idsOf((await relay.call("/v1/rules", { as: "laptop" })).body)).toStrictEqual([laptopRule]);
  });

  it("counts the uses, and lists at most `limit`", async () => {
    const { relay, laptopRule } = await withRules();
    const next = await relay.call("/v1/requests", { json: bodies.bashPermission({ input: { command: "ls" } }), as: "laptop" });
    expect(next.body).toMatchObject({ status: "answered", answeredBy: BOB, decision: { behavior: "allow", updatedInput: { command: "ls" } } });
    await relay.service.idle();
    const { body } = await relay.call("/v1/rules?limit=1", { as: "ops" });
    expect(body.rules).toMatchObject([{ id: laptopRule, uses: 1 }]);
  });

  it("no token, or an unknown one → 401", async () => {
    const relay = await start();
    expect(await relay.call("/v1/rules", { as: null })).toMatchObject({ status: 401, body: { error: { code: "relay_unauthorized" } } });
    expect(await relay.call("/v1/rules", { as: null, headers: { authorization: "Bearer tok_nobody_000000000000000" } })).toMatchObject({ status: 401 });
  });

  it("a bad or unknown parameter → 400 naming it", async () => {
    const relay = await start();
    expectInvalidParameter(await relay.call("/v1/rules?limit=0", { as: "ops" }), "limit");
    expectInvalidParameter(await relay.call("/v1/rules?limit=1001", { as: "ops" }), "limit");
    expectInvalidParameter(await relay.call("/v1/rules?token=ci-bot", { as: "ops" }), "token");
  });
});

describe("DELETE /v1/rules/{id}", () => {
  it("an agent token revokes its own rule: the rule as it was, gone from the list, and new requests are asked again", async () => {
    const { relay, ciRule } = await withRules();
    const { status, body } = await relay.call(`/v1/rules/${ciRule}`, { method: "DELETE", as: "ci-bot" });
    expect(status).toBe(200);
    expect(RuleView.parse(body)).toStrictEqual(body);
    expect(body).toMatchObject({ id: ciRule, token: "ci-bot", createdBy: ALICE });
    expect(idsOf((await relay.call("/v1/rules", { as: "ci-bot" })).body)).toStrictEqual([]);
    expect((await relay.call("/v1/requests", { json: bodies.bashPermission(), as: "ci-bot" })).body.status).toBe("pending");
    await relay.service.idle();
    await relay.audit.idle();
    const events = (await relay.call("/v1/audit", { as: "ops" })).body.events as Array<{ type: string; reason?: string }>;
    expect(events.filter((event) => event.type === "rule_revoked")).toMatchObject([{ reason: expect.stringContaining("revoked with token ci-bot") }]);
  });

  it("an admin token revokes any rule (no 403: revoking only takes a permission away)", async () => {
    const { relay, laptopRule } = await withRules();
    expect(await relay.call(`/v1/rules/${laptopRule}`, { method: "DELETE", as: "ops" })).toMatchObject({ status: 200, body: { id: laptopRule } });
  });

  it("another token's rule is 404 exactly as an unknown id, and stays alive", async () => {
    const { relay, laptopRule } = await withRules();
    const foreign = await relay.call(`/v1/rules/${laptopRule}`, { method: "DELETE", as: "ci-bot" });
    const unknown = await relay.call("/v1/rules/no-such-rule", { method: "DELETE", as: "ci-bot" });
    expect(foreign).toMatchObject(NOT_FOUND);
    expect(foreign.body).toStrictEqual(unknown.body);
    expect(idsOf((await relay.call("/v1/rules", { as: "laptop" })).body)).toStrictEqual([laptopRule]);
  });

  it("a rule already revoked, an id longer than any issued, or an empty id → 404", async () => {
    const { relay, ciRule } = await withRules();
    await relay.call(`/v1/rules/${ciRule}`, { method: "DELETE", as: "ci-bot" });
    expect(await relay.call(`/v1/rules/${ciRule}`, { method: "DELETE", as: "ci-bot" })).toMatchObject(NOT_FOUND);
    expect(await relay.call(`/v1/rules/${"x".repeat(201)}`, { method: "DELETE", as: "ops" })).toMatchObject(NOT_FOUND);
    expect(await relay.call("/v1/rules/", { method: "DELETE", as: "ops" })).toMatchObject({ status: 404 });
  });

  it("no token, or an unknown one → 401, and the rule stays", async () => {
    const { relay, ciRule } = await withRules();
    expect(await relay.call(`/v1/rules/${ciRule}`, { method: "DELETE", as: null })).toMatchObject({
      status: 401,
      body: { error: { code: "relay_unauthorized" } },
    });
    const stranger = { as: null, method: "DELETE", headers: { authorization: "Bearer tok_nobody_000000000000000" } };
    expect(await relay.call(`/v1/rules/${ciRule}`, stranger)).toMatchObject({ status: 401 });
    expect(idsOf((await relay.call("/v1/rules", { as: "ci-bot" })).body)).toStrictEqual([ciRule]);
  });

  it("another method on either path → 405 naming the one it takes", async () => {
    const relay = await start();
    const post = await relay.call("/v1/rules", { method: "POST", json: {}, as: "ops" });
    expect(post.status).toBe(405);
    expect(post.headers.get("allow")).toBe("GET, HEAD");
    const get = await relay.call("/v1/rules/some-id", { as: "ops" });
    expect(get.status).toBe(405);
    expect(get.headers.get("allow")).toBe("DELETE");
  });
});
