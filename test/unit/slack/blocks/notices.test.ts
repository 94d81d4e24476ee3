/**
 * What a person is told, only to them, when their answer is refused (and
 * why, and who may answer instead) or counted towards a quorum.
 */
import { describe, expect, it } from "vitest";
import { approvalCountedNotice, duplicateApprovalNotice, refusalNotice } from "../../../../src/slack/blocks/index.js";
import { ALICE, BOB } from "../../../fixtures/people.js";
import { deployPolicy } from "../../../fixtures/policies.js";
import { CREATED_AT, permissionRecord } from "../../../fixtures/records.js";

const policy = deployPolicy();
const approvers = policy.approvers!;
const record = permissionRecord({}, { policy });

describe("a refused answer", () => {
  it("tells a non-approver who can answer, and how many approvals it needs", () => {
    expect(refusalNotice({ reason: "not_approver", approvers }, record)).toBe(
      "Only <@U0ALICE01>, <@U0CAROL01>, <!subteam^S0ONCALL1> can answer this request. It needs 2 approvals.",
    );
  });

  it("leaves the quorum out where one answer decides", () => {
    const single = permissionRecord({}, { policy: deployPolicy({ quorum: 1 }) });
    expect(refusalNotice({ reason: "not_approver", approvers }, single)).toBe("Only <@U0ALICE01>, <@U0CAROL01>, <!subteam^S0ONCALL1> can answer this request.");
  });

  it("says so plainly when no approver can be mentioned", () => {
    expect(refusalNotice({ reason: "not_approver", approvers: { users: [] } }, record)).toBe("You are not among the approvers of this request.");
  });

  it("tells the requester they asked for it, so they cannot answer it, and who can", () => {
    const listed = { users: [BOB.id, ALICE.id] };
    expect(refusalNotice({ reason: "self_approval", approvers: listed }, record)).toBe(
      "You asked for this request (it is for <@U0BOB0001>), so you cannot answer it yourself. Only <@U0ALICE01> can.",
    );
  });

  it("tells the requester someone else must answer where anyone may", () => {
    const anyone = permissionRecord({}, { policy: { alwaysAllow: "tool", selfApproval: "deny", requestedBy: { id: BOB.id } } });
    expect(refusalNotice({ reason: "self_approval" }, anyone)).toBe(
      "You asked for this request (it is for <@U0BOB0001>), so you cannot answer it yourself. Someone else must.",
    );
  });

  it("tells a guest from another workspace that only the people listed by id can answer from there", () => {
    expect(refusalNotice({ reason: "other_workspace", approvers }, record)).toBe(
      "You are in another workspace than the relay's: from there only <@U0ALICE01>, <@U0CAROL01> can answer this request.",
    );
  });

  it("tells a guest from another workspace when nobody is listed by id", () => {
    expect(refusalNotice({ reason: "other_workspace" }, permissionRecord())).toBe(
      "You are in another workspace than the relay's: only people of its own workspace can answer this request.",
    );
  });

  it("says nothing changed and to try again when membership could not be checked", () => {
    expect(refusalNotice({ reason: "unverified", approvers }, record)).toBe(
      "The relay could not check your user group membership (or workspace) with Slack just now, so nothing changed. Try again in a moment.",
    );
  });

  it("never mentions an id that is no Slack id", () => {
    const hostile = { users: ["<!channel>"], usergroups: ["<!here>"] };
    expect(refusalNotice({ reason: "not_approver", approvers: hostile }, record)).toBe("You are not among the approvers of this request.");
  });
});

describe("a counted approval", () => {
  const counted = permissionRecord({}, { policy, approvals: [{ person: ALICE, at: CREATED_AT }] });

  it("says it counted and how many more are needed", () => {
    expect(approvalCountedNotice(counted)).toBe("Your approval counted: 1 of 2. Waiting for 1 more.");
  });

  it("tells a person who approved already that it counts once", () => {
    expect(duplicateApprovalNotice(counted)).toBe("You already approved this request (1 of 2).");
  });
});
