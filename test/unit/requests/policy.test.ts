import { describe, expect, it } from "vitest";
import { DirectoryUnavailableError, type PeopleDirectory } from "../../../src/requests/directory.js";
import type { RequestPolicy } from "../../../src/requests/model.js";
import { approversAt, isApproval, quorumOf, refusalFor, reminderSchedule, takesQuorum } from "../../../src/requests/policy.js";
import { ALICE, BOB, CAROL, OTHER_TEAM } from "../../fixtures/people.js";
import { askRecord, CREATED_AT, interactiveRecord, permissionRecord, stepGateRecord } from "../../fixtures/records.js";

const HOME = "T0HOME001";
const ONCALL = "S0ONCALL1";
const LEADS = "S0LEADS01";
const POSTED_AT = CREATED_AT + 1000;

function directory(groups: Record<string, string[]> = {}, overrides: Partial<PeopleDirectory> = {}): PeopleDirectory & { asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    usergroupMembers: async (group) => {
      asked.push(group);
      return new Set(groups[group] ?? []);
    },
    userIdByEmail: async () => undefined,
    homeTeamId: async () => HOME,
    ...overrides,
  };
}

const policy = (fields: Partial<RequestPolicy>): RequestPolicy => ({ alwaysAllow: "tool", ...fields });
const withPolicy = (fields: Partial<RequestPolicy>) => permissionRecord({}, { policy: policy(fields), postedAt: POSTED_AT });

describe("who may answer", () => {
  it("anyone of the relay's workspace may answer a request whose policy names no approvers", async () => {
    expect(await refusalFor(permissionRecord(), { ...ALICE, teamId: HOME }, POSTED_AT, directory())).toBeUndefined();
    expect(await refusalFor(permissionRecord(), ALICE, POSTED_AT, directory())).toBeUndefined();
  });

  it("a listed user may answer without any user group being looked up", async () => {
    const people = directory({ [ONCALL]: [] });
    const record = withPolicy({ approvers: { users: [ALICE.id], usergroups: [ONCALL] } });
    expect(await refusalFor(record, ALICE, POSTED_AT, people)).toBeUndefined();
    expect(people.asked).toEqual([]);
  });

  it("a member of a listed user group may answer; someone in neither list is refused with who may", async () => {
    const record = withPolicy({ approvers: { users: [ALICE.id], usergroups: [ONCALL] } });
    const people = directory({ [ONCALL]: [BOB.id] });
    expect(await refusalFor(record, BOB, POSTED_AT, people)).toBeUndefined();
    expect(await refusalFor(record, CAROL, POSTED_AT, people)).toEqual({
      reason: "not_approver",
      approvers: { users: [ALICE.id], usergroups: [ONCALL] },
    });
  });

  it("people are matched by Slack user id, never by name", async () => {
    const record = withPolicy({ approvers: { users: [ALICE.id] } });
    expect(await refusalFor(record, { id: "U0OTHER01", name: ALICE.name }, POSTED_AT, directory())).toMatchObject({ reason: "not_approver" });
  });

  it("with selfApproval deny the person the request is made for is refused, even when listed", async () => {
    const record = withPolicy({ approvers: { users: [ALICE.id, BOB.id] }, selfApproval: "deny", requestedBy: { id: ALICE.id } });
    expect(await refusalFor(record, ALICE, POSTED_AT, directory())).toMatchObject({ reason: "self_approval" });
    expect(await refusalFor(record, BOB, POSTED_AT, directory())).toBeUndefined();
  });

  it("with selfApproval allow (the default) the requester may answer like anyone listed", async () => {
    const record = withPolicy({ approvers: { users: [ALICE.id] }, requestedBy: { id: ALICE.id } });
    expect(await refusalFor(record, ALICE, POSTED_AT, directory())).toBeUndefined();
  });

  it("a guest from another workspace answers only where listed by id: not through a group, not under approvers any", async () => {
    const guest = { ...BOB, teamId: OTHER_TEAM };
    const groups = directory({ [ONCALL]: [BOB.id] });
    expect(await refusalFor(withPolicy({ approvers: { usergroups: [ONCALL] } }), guest, POSTED_AT, groups)).toMatchObject({ reason: "other_workspace" });
    expect(await refusalFor(permissionRecord(), guest, POSTED_AT, groups)).toEqual({ reason: "other_workspace" });
    expect(await refusalFor(withPolicy({ approvers: { users: [BOB.id] } }), guest, POSTED_AT, groups)).toBeUndefined();
  });

  it("fails closed when the relay's workspace is not known yet and the person names one", async () => {
    const unknownHome = directory({}, { homeTeamId: async () => undefined });
    expect(await refusalFor(permissionRecord(), { ...ALICE, teamId: HOME }, POSTED_AT, unknownHome)).toEqual({ reason: "unverified" });
  });

  it("fails closed when a user group cannot be checked", async () => {
    const down = directory(
      {},
      {
        usergroupMembers: async () => {
          throw new DirectoryUnavailableError("timeout");
        },
      },
    );
    const record = withPolicy({ approvers: { usergroups: [ONCALL] } });
    expect(await refusalFor(record, BOB, POSTED_AT, down)).toMatchObject({ reason: "unverified" });
  });

  it("an escalation's users and groups may answer from its time on, not before", async () => {
    const record = withPolicy({
      approvers: { users: [ALICE.id] },
      escalate: [{ after: 600, users: [CAROL.id], usergroups: [LEADS] }],
    });
    const people = directory({ [LEADS]: [BOB.id] });
    const before = POSTED_AT + 599_000;
    const after = POSTED_AT + 600_000;
    expect(await refusalFor(record, CAROL, before, people)).toMatchObject({ reason: "not_approver" });
    expect(await refusalFor(record, BOB, before, people)).toMatchObject({ reason: "not_approver" });
    expect(await refusalFor(record, CAROL, after, people)).toBeUndefined();
    expect(await refusalFor(record, BOB, after, people)).toBeUndefined();
    expect(approversAt(record, after)).toEqual({ users: [ALICE.id, CAROL.id], usergroups: [LEADS] });
  });

  it("escalations do not widen a request that was never posted", () => {
    const record = permissionRecord({}, { policy: policy({ approvers: { users: [ALICE.id] }, escalate: [{ after: 1, users: [BOB.id] }] }) });
    expect(approversAt(record, CREATED_AT + 3_600_000)).toEqual({ users: [ALICE.id], usergroups: [] });
  });
});

describe("quorum", () => {
  it("applies to permission and step_gate requests and to the yes/no gate, not to other questions", () => {
    const q = policy({ quorum: 2 });
    expect(quorumOf(permissionRecord({}, { policy: q }))).toBe(2);
    expect(quorumOf(stepGateRecord({}, { policy: q }))).toBe(2);
    const gate = interactiveRecord({ questions: [{ id: "answer", question: "Deploy?", type: "confirm" }] }, { policy: q });
    expect(takesQuorum(gate)).toBe(true);
    expect(quorumOf(gate)).toBe(2);
    expect(quorumOf(askRecord({}, { policy: q }))).toBe(1);
    const choice = interactiveRecord({ questions: [{ id: "env", question: "Where?", type: "choice", options: ["staging", "prod"] }] }, { policy: q });
    expect(quorumOf(choice)).toBe(1);
  });

  it("allow, y and Yes to the yes/no gate approve; deny, n, q and No veto", () => {
    const permission = permissionRecord();
    expect(isApproval(permission, { behavior: "allow", updatedInput: {} })).toBe(true);
    expect(isApproval(permission, { behavior: "deny", message: "no" })).toBe(false);
    const gate = stepGateRecord();
    expect(isApproval(gate, { reply: "y" })).toBe(true);
    expect(isApproval(gate, { reply: "n" })).toBe(false);
    expect(isApproval(gate, { reply: "q" })).toBe(false);
    const yesNo = interactiveRecord({ questions: [{ id: "answer", question: "Deploy?", type: "confirm" }] });
    expect(isApproval(yesNo, { answers: { answer: true } })).toBe(true);
    expect(isApproval(yesNo, { answers: { answer: false } })).toBe(false);
  });
});

describe("reminder schedule", () => {
  it("lists every reminder, then every escalation, indexed in that order", () => {
    const escalation = { after: 1200, usergroups: [LEADS] };
    expect(reminderSchedule(policy({ reminders: [300, 900], escalate: [escalation] }))).toEqual([
      { index: 0, afterSeconds: 300, type: "reminder" },
      { index: 1, afterSeconds: 900, type: "reminder" },
      { index: 2, afterSeconds: 1200, type: "escalation", escalation },
    ]);
    expect(reminderSchedule(undefined)).toEqual([]);
  });

  it("gives an escalation's channel post an entry of its own, after every reminder and escalation, due with its escalation", () => {
    const quiet = { after: 600, usergroups: [LEADS] };
    const loud = { after: 1200, usergroups: [LEADS], channel: "C0SRELEADS" };
    expect(reminderSchedule(policy({ reminders: [300], escalate: [loud, quiet] }))).toEqual([
      { index: 0, afterSeconds: 300, type: "reminder" },
      { index: 1, afterSeconds: 1200, type: "escalation", escalation: loud },
      { index: 2, afterSeconds: 600, type: "escalation", escalation: quiet },
      { index: 3, afterSeconds: 1200, type: "escalation_post", escalation: loud, channel: "C0SRELEADS" },
    ]);
  });
});
