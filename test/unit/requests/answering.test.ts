import { describe, expect, it } from "vitest";
import type { Decision } from "../../../src/protocol/decisions.js";
import { answerPending, type AnswerDeps } from "../../../src/requests/answering.js";
import type { AuditEntry } from "../../../src/requests/audit.js";
import type { PeopleDirectory } from "../../../src/requests/directory.js";
import type { RequestPolicy, RequestRecord } from "../../../src/requests/model.js";
import type { Answerer } from "../../../src/requests/policy.js";
import type { AnsweredTransition, ApproveResult } from "../../../src/requests/store.js";
import { ALICE, BOB } from "../../fixtures/people.js";
import { CREATED_AT, interactiveRecord, permissionRecord, stepGateRecord } from "../../fixtures/records.js";

const NOW = CREATED_AT + 5000;
const directory: PeopleDirectory = {
  usergroupMembers: async () => new Set(),
  userIdByEmail: async () => undefined,
  homeTeamId: async () => "T0HOME001",
};

/** The service's side of an answer, recorded: which store step ran, what was audited and shown. */
function deps(approveWith?: (record: RequestRecord, final: AnsweredTransition) => ApproveResult) {
  const calls = {
    ended: [] as AnsweredTransition[],
    approved: [] as Array<{ quorum: number; final: AnsweredTransition }>,
    audit: [] as AuditEntry[],
    shown: [] as RequestRecord[],
  };
  let current: RequestRecord | undefined;
  const answerDeps: AnswerDeps = {
    store: {
      approve: async (_id, approval, quorum, final) => {
        calls.approved.push({ quorum, final });
        const counted = { ...current!, approvals: [...(current!.approvals ?? []), approval] };
        return approveWith ? approveWith(counted, final) : { outcome: "counted", record: counted };
      },
    },
    directory,
    audit: { record: (entry) => calls.audit.push(entry) },
    now: () => NOW,
    ending: {
      end: async (_id, change, step) => {
        if (step) return step();
        calls.ended.push(change);
        return {
          outcome: "applied",
          record: { ...current!, status: "answered", decision: change.decision, answeredBy: change.answeredBy, endedAt: change.at },
        };
      },
    },
    updates: { show: (record) => void calls.shown.push(record) },
  };
  return {
    calls,
    answer: (record: RequestRecord, decision: Decision, person: Answerer = ALICE) => {
      current = record;
      return answerPending(answerDeps, record, decision, person);
    },
  };
}

const policy = (fields: Partial<RequestPolicy>): RequestPolicy => ({ alwaysAllow: "tool", ...fields });
const allow = (input: Record<string, unknown>): Decision => ({ behavior: "allow", updatedInput: input });

describe("answering a pending request", () => {
  it("without a quorum the answer is the plain transition, as before", async () => {
    const { calls, answer } = deps();
    const record = permissionRecord();
    const result = await answer(record, allow(record.body.input));
    expect(result.outcome).toBe("applied");
    expect(calls.ended).toEqual([{ status: "answered", decision: allow(record.body.input), answeredBy: ALICE, at: NOW }]);
    expect(calls.approved).toEqual([]);
  });

  it("a refused person changes nothing and the refusal is audited with who and why", async () => {
    const { calls, answer } = deps();
    const record = permissionRecord({}, { policy: policy({ approvers: { users: [BOB.id] } }) });
    const result = await answer(record, allow(record.body.input), { ...ALICE, teamId: "T0HOME001" });
    expect(result).toMatchObject({ outcome: "refused", refusal: { reason: "not_approver" } });
    expect(calls.ended).toEqual([]);
    expect(calls.approved).toEqual([]);
    expect(calls.audit).toEqual([expect.objectContaining({ type: "refused", requestId: record.id, person: ALICE, reason: "not an approver of this request" })]);
  });

  it("under a quorum an approval is counted through the store's approve step, audited and shown in the message", async () => {
    const { calls, answer } = deps();
    const record = stepGateRecord({}, { policy: policy({ quorum: 2 }) });
    const result = await answer(record, { reply: "y" });
    expect(result.outcome).toBe("counted");
    expect(calls.approved).toEqual([{ quorum: 2, final: { status: "answered", decision: { reply: "y" }, answeredBy: ALICE, at: NOW } }]);
    expect(calls.audit).toEqual([expect.objectContaining({ type: "approval", person: ALICE, approvals: { count: 1, quorum: 2 } })]);
    expect(calls.shown).toHaveLength(1);
  });

  it("under a quorum a deny is a veto: the plain transition ends the request at once", async () => {
    const { calls, answer } = deps();
    const record = stepGateRecord({}, { policy: policy({ quorum: 3 }) });
    expect((await answer(record, { reply: "n" })).outcome).toBe("applied");
    expect(calls.approved).toEqual([]);
    expect(calls.ended).toHaveLength(1);
  });

  it("under a quorum every approval approves the call as asked, never an edited input or saved rules", async () => {
    const { calls, answer } = deps();
    const record = permissionRecord({}, { policy: policy({ quorum: 2 }) });
    await answer(record, { behavior: "allow", updatedInput: { command: "rm -rf /" }, updatedPermissions: [{ type: "addRules" }] });
    expect(calls.approved[0]!.final.decision).toEqual({ behavior: "allow", updatedInput: record.body.input });
  });

  it("the yes/no gate counts Yes towards its quorum and takes No as a veto", async () => {
    const gate = interactiveRecord({ questions: [{ id: "answer", question: "Deploy?", type: "confirm" }] }, { policy: policy({ quorum: 2 }) });
    const yes = deps();
    expect((await yes.answer(gate, { answers: { answer: true } })).outcome).toBe("counted");
    const no = deps();
    expect((await no.answer(gate, { answers: { answer: false } })).outcome).toBe("applied");
    expect(no.calls.approved).toEqual([]);
  });

  it("a duplicate approval is neither audited nor shown again", async () => {
    const { calls, answer } = deps((record) => ({ outcome: "duplicate", record }));
    const record = stepGateRecord({}, { policy: policy({ quorum: 2 }) });
    expect((await answer(record, { reply: "y" })).outcome).toBe("duplicate");
    expect(calls.audit).toEqual([]);
    expect(calls.shown).toEqual([]);
  });

  it("the approval that completes the quorum is audited as an approval, and the request is not shown as still pending", async () => {
    const { calls, answer } = deps((record, final) => ({
      outcome: "applied",
      record: { ...record, status: "answered", decision: final.decision, endedAt: final.at },
    }));
    const record = stepGateRecord({}, { policy: policy({ quorum: 2 }) });
    expect((await answer(record, { reply: "y" })).outcome).toBe("applied");
    expect(calls.audit.map((entry) => entry.type)).toEqual(["approval"]);
    expect(calls.shown).toEqual([]);
  });

  it("only the answerer's id and name are kept, not their workspace", async () => {
    const { calls, answer } = deps();
    await answer(permissionRecord(), allow({}), { ...ALICE, teamId: "T0HOME001" });
    expect(calls.ended[0]!.answeredBy).toEqual(ALICE);
  });
});
