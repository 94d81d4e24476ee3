/**
 * RequestService under the operator's routes (docs/architecture.md §7), on the memory
 * store with the fake messenger: a request takes its route's policy at
 * create; posting records when the message went out and queues its
 * reminders, which the sweep sends in order and never after the request
 * ended; answers go through the policy: a refused person changes nothing,
 * approvals count towards the quorum (the message shows each), the last one
 * answers the waiting agent, a deny is a veto, and one person counts once.
 */
import { describe, expect, it, vi } from "vitest";
import { Route } from "../../../src/requests/route-schema.js";
import type { Decision } from "../../../src/protocol/decisions.js";
import type { Answerer } from "../../../src/requests/policy.js";
import { ALICE, BOB, CAROL, DAVE, LEAD } from "../../fixtures/people.js";
import { bodyOf, T0, useHarness } from "../../helpers/service-harness.js";

const input = { command: "make deploy" };
const DEPLOY_ROUTE = {
  match: { labels: { env: "prod" } },
  approvers: { users: [ALICE.id, CAROL.id] },
  quorum: 2,
  selfApproval: "deny",
  reminders: [60, 120],
  escalate: [{ after: 180, users: [LEAD.id] }],
};

const h = useHarness(() => ({ routes: [Route.parse(DEPLOY_ROUTE)] }));

/** A production deploy, made for Bob, posted before it returns. */
async function deploy(): Promise<string> {
  const body = bodyOf({ input, labels: { env: "prod" }, requestedBy: { slackUserId: BOB.id } });
  const { record } = await h.service.create({ tokenName: "deploy-bot", body });
  await h.service.idle();
  return record.id;
}

const allow: Decision = { behavior: "allow", updatedInput: input };
const deny: Decision = { behavior: "deny", message: "Denied by carol in Slack." };
const answer = (id: string, decision: Decision, person: Answerer) => h.service.answer(id, decision, person);

describe("create under a route", () => {
  it("keeps the matched route's policy on the record, with the person it is for", async () => {
    const record = await h.service.get(await deploy());
    expect(record?.policy).toEqual({
      alwaysAllow: "tool",
      route: "routes.0",
      approvers: { users: [ALICE.id, CAROL.id] },
      quorum: 2,
      selfApproval: "deny",
      requestedBy: { id: BOB.id },
      reminders: [60, 120],
      escalate: [{ after: 180, users: [LEAD.id] }],
    });
  });

  it("gives a request no route matches the default route's policy: anyone answers, once", async () => {
    const { record } = await h.service.create({ tokenName: "ci-bot", body: bodyOf({ labels: { env: "staging" } }) });
    expect(record.policy).toEqual({ alwaysAllow: "tool", route: "default" });
  });
});

describe("reminders", () => {
  it("records when the message was posted and sends each reminder, then the escalation, once they are due", async () => {
    vi.setSystemTime(T0 + 5_000);
    const id = await deploy();
    expect((await h.service.get(id))?.postedAt).toBe(T0 + 5_000);

    const sweepAt = async (ms: number) => {
      vi.setSystemTime(T0 + 5_000 + ms);
      return h.service.sweepReminders();
    };
    expect(await sweepAt(59_999)).toBe(0);
    expect(await sweepAt(60_000)).toBe(1);
    expect(await sweepAt(60_000)).toBe(0);
    expect(await sweepAt(200_000)).toBe(2);
    expect(h.messenger.reminders.map(({ record, entry, now }) => [record.id, entry.index, entry.type, now - T0])).toEqual([
      [id, 0, "reminder", 65_000],
      [id, 1, "reminder", 205_000],
      [id, 2, "escalation", 205_000],
    ]);
  });

  it("sends none once the request has ended", async () => {
    const id = await deploy();
    await h.service.cancel(id, "deploy-bot", "no longer needed");
    vi.setSystemTime(T0 + 500_000);
    expect(await h.service.sweepReminders()).toBe(0);
    expect(h.messenger.reminders).toEqual([]);
  });
});

describe("answers under a quorum of two", () => {
  it("refuses someone who is not an approver, and the person it is for: nothing changes, nothing is shown", async () => {
    const id = await deploy();
    const before = await h.service.get(id);
    expect(await answer(id, allow, DAVE)).toMatchObject({ outcome: "refused", refusal: { reason: "not_approver" } });
    expect(await answer(id, allow, BOB)).toMatchObject({ outcome: "refused", refusal: { reason: "self_approval" } });
    await h.service.idle();
    expect(await h.service.get(id)).toStrictEqual(before);
    expect(h.messenger.ended).toEqual([]);
  });

  it("counts the first approval and shows the pending request with it in the message", async () => {
    const id = await deploy();
    vi.setSystemTime(T0 + 1_000);
    expect(await answer(id, allow, ALICE)).toMatchObject({ outcome: "counted", record: { status: "pending", approvals: [{ person: ALICE, at: T0 + 1_000 }] } });
    await h.service.idle();
    expect(h.messenger.ended.map((record) => [record.status, record.approvals?.length])).toEqual([["pending", 1]]);
  });

  it("the second approver's approval answers the request and wakes the waiting agent with allow", async () => {
    const id = await deploy();
    const waiting = h.service.wait(id, 60_000);
    await answer(id, allow, ALICE);
    expect(await answer(id, allow, CAROL)).toMatchObject({ outcome: "applied" });
    const answered = await waiting;
    expect(answered).toMatchObject({ status: "answered", decision: allow, answeredBy: CAROL });
    expect(answered?.approvals?.map((approval) => approval.person)).toEqual([ALICE, CAROL]);
    await h.service.idle();
    expect(h.messenger.ended[0]).toMatchObject({ status: "pending", approvals: [{ person: ALICE }] });
    expect(h.messenger.ended.at(-1)).toMatchObject({ status: "answered", approvals: [{ person: ALICE }, { person: CAROL }] });
  });

  it("a deny ends the request at once, whatever was approved before: a veto", async () => {
    const id = await deploy();
    const waiting = h.service.wait(id, 60_000);
    await answer(id, allow, ALICE);
    expect(await answer(id, deny, CAROL)).toMatchObject({ outcome: "applied" });
    expect(await waiting).toMatchObject({ status: "answered", decision: deny, answeredBy: CAROL, approvals: [{ person: ALICE }] });
  });

  it("the same person's second approval is a duplicate: not counted, not shown again, the request waits on", async () => {
    const id = await deploy();
    await answer(id, allow, ALICE);
    await h.service.idle();
    expect(await answer(id, allow, ALICE)).toMatchObject({ outcome: "duplicate", record: { status: "pending", approvals: [{ person: ALICE }] } });
    await h.service.idle();
    expect(h.messenger.ended).toHaveLength(1);
    expect((await h.service.get(id))?.approvals).toHaveLength(1);
  });
});
