/**
 * What RequestService hands its audit recorder (docs/architecture.md §7), on the memory
 * store with the fake messenger: every event of a request's life, in the
 * order it happened, each naming the request the same way and saying who
 * and why where a person or a reason is behind it.
 */
import { describe, expect, it, vi } from "vitest";
import { Route } from "../../../src/requests/route-schema.js";
import type { AuditEntry } from "../../../src/requests/audit.js";
import { RELAY_PERSON } from "../../../src/requests/service.js";
import { ALICE, BOB, CAROL, DAVE } from "../../fixtures/people.js";
import { bodyOf, DEFAULT_CHANNEL, T0, useHarness } from "../../helpers/service-harness.js";

const input = { command: "make deploy" };
const DEPLOY_ROUTE = {
  match: { token: "deploy-bot" },
  approvers: { users: [ALICE.id, CAROL.id] },
  quorum: 2,
  reminders: [60],
  escalate: [{ after: 120, users: [DAVE.id] }],
};

let audited: AuditEntry[];
const h = useHarness(() => {
  audited = [];
  return { routes: [Route.parse(DEPLOY_ROUTE)], audit: { record: (entry) => audited.push(entry) } };
});

/** The fields every event of request `id` carries. */
const about = (id: string, tokenName: string, route: string) => ({ requestId: id, token: tokenName, kind: "permission", channel: DEFAULT_CHANNEL, route });

async function create(tokenName: string, fields: Record<string, unknown> = {}): Promise<string> {
  const { record } = await h.service.create({ tokenName, body: bodyOf({ input, ...fields }) });
  await h.service.idle();
  return record.id;
}

const at = (ms: number) => vi.setSystemTime(T0 + ms);

describe("the audit trail of a request", () => {
  it("under a quorum: created, posted, refused (who and why), each approval with the count, then answered by the last approver", async () => {
    const id = await create("deploy-bot", { requestedBy: { slackUserId: BOB.id } });
    at(1_000);
    await h.service.answer(id, { behavior: "allow", updatedInput: input }, DAVE);
    at(2_000);
    await h.service.answer(id, { behavior: "allow", updatedInput: input }, ALICE);
    await h.service.answer(id, { behavior: "allow", updatedInput: input }, ALICE);
    at(3_000);
    await h.service.answer(id, { behavior: "allow", updatedInput: input }, CAROL);
    const common = about(id, "deploy-bot", "routes.0");
    expect(audited).toStrictEqual([
      { ...common, type: "created", at: T0, person: { id: BOB.id } },
      { ...common, type: "posted", at: T0, reason: "message 1700000000.000101" },
      { ...common, type: "refused", at: T0 + 1_000, person: DAVE, reason: "not an approver of this request" },
      { ...common, type: "approval", at: T0 + 2_000, person: ALICE, approvals: { count: 1, quorum: 2 } },
      { ...common, type: "approval", at: T0 + 3_000, person: CAROL, approvals: { count: 2, quorum: 2 } },
      { ...common, type: "answered", at: T0 + 3_000, status: "answered", person: CAROL, reason: "Allowed", approvals: { count: 2, quorum: 2 } },
    ]);
  });

  it("reminded and escalated when they are sent, and a veto answers the request with the approvals so far", async () => {
    const id = await create("deploy-bot");
    await h.service.answer(id, { behavior: "allow", updatedInput: input }, ALICE);
    at(130_000);
    await h.service.sweepReminders();
    await h.service.answer(id, { behavior: "deny", message: "not now" }, CAROL);
    expect(audited.map(({ type, at: when, person, reason, approvals }) => ({ type, at: when - T0, person, reason, approvals }))).toEqual([
      { type: "created", at: 0 },
      { type: "posted", at: 0, reason: "message 1700000000.000101" },
      { type: "approval", at: 0, person: ALICE, approvals: { count: 1, quorum: 2 } },
      { type: "reminded", at: 130_000, reason: "after 60 s" },
      { type: "escalated", at: 130_000, reason: `after 120 s, to ${DAVE.id}` },
      { type: "answered", at: 130_000, person: CAROL, reason: "Denied", approvals: { count: 1, quorum: 2 } },
    ]);
  });

  it("expired: created, posted, then expired at the deadline", async () => {
    const id = await create("ci-bot", { timeoutSeconds: 30 });
    at(31_000);
    expect(await h.service.expireDue()).toBe(1);
    expect(audited.map(({ type, at: when, status }) => [type, when - T0, status])).toEqual([
      ["created", 0, undefined],
      ["posted", 0, undefined],
      ["expired", 31_000, "expired"],
    ]);
    expect(audited.at(-1)).toMatchObject(about(id, "ci-bot", "default"));
  });

  it("cancelled: says by whom and why", async () => {
    const id = await create("ci-bot");
    at(5_000);
    await h.service.cancel(id, "agent", "the build was aborted");
    expect(audited.at(-1)).toStrictEqual({
      ...about(id, "ci-bot", "default"),
      type: "cancelled",
      at: T0 + 5_000,
      status: "cancelled",
      reason: "agent: the build was aborted",
    });
    expect(audited.map((entry) => entry.type)).toEqual(["created", "posted", "cancelled"]);
  });

  it("failed: Slack refused the post for good, so it was never posted; the reason is Slack's", async () => {
    h.messenger.refuseWith = "channel_not_found";
    const id = await create("ci-bot");
    expect(audited.map((entry) => entry.type)).toEqual(["created", "failed"]);
    expect(audited.at(-1)).toMatchObject({ ...about(id, "ci-bot", "default"), status: "failed", reason: expect.stringContaining("channel_not_found") });
  });

  it("an autonomous request answered at create: created, then answered by the relay, and never posted", async () => {
    const body = bodyOf({
      kind: "interactive_questions",
      autonomous: true,
      questions: [{ id: "env", question: "Env?", type: "choice", options: ["staging", "production"], default: "staging" }],
    });
    const { record } = await h.service.create({ tokenName: "ci-bot", body });
    await h.service.idle();
    expect(audited.map(({ type, requestId, kind, person }) => ({ type, requestId, kind, person }))).toEqual([
      { type: "created", requestId: record.id, kind: "interactive_questions", person: undefined },
      { type: "answered", requestId: record.id, kind: "interactive_questions", person: RELAY_PERSON },
    ]);
  });
});
