/**
 * toView: the request as the HTTP API shows it (docs/architecture.md §3) — ISO times,
 * answeredAt only for answered requests, nothing internal leaked.
 */
import { describe, expect, it } from "vitest";
import { RequestView } from "../../../src/protocol/request-view.js";
import { RequestRecord, toView } from "../../../src/requests/model.js";
import { answered, cancelled, CREATED_AT, ENDED_AT, expired, failed, interactiveRecord, permissionRecord, stepGateRecord } from "../../fixtures/records.js";
import { ALICE } from "../../fixtures/people.js";

const iso = (ms: number) => new Date(ms).toISOString();

describe("toView", () => {
  it("shows a pending request with ISO times and its Slack message", () => {
    expect(toView(permissionRecord())).toEqual({
      id: "req-0001",
      kind: "permission",
      status: "pending",
      createdAt: "2023-11-14T22:13:20.000Z",
      expiresAt: iso(CREATED_AT + 600_000),
      slack: { channel: "C0123456789", ts: "1700000000.000100" },
    });
  });

  it("leaves slack out before the message is posted", () => {
    expect(toView(permissionRecord({}, { slack: undefined }))).not.toHaveProperty("slack");
  });

  it("shows an answered request with its decision, who answered and when", () => {
    const decision = { behavior: "allow" as const, updatedInput: { command: "npm test" } };
    expect(toView(answered(permissionRecord(), decision))).toEqual({
      id: "req-0001",
      kind: "permission",
      status: "answered",
      createdAt: iso(CREATED_AT),
      expiresAt: iso(CREATED_AT + 600_000),
      decision,
      answeredBy: ALICE,
      answeredAt: iso(ENDED_AT),
      slack: { channel: "C0123456789", ts: "1700000000.000100" },
    });
  });

  it.each([
    ["expired", expired(stepGateRecord())],
    ["cancelled", cancelled(stepGateRecord(), "hook disconnected", "agent")],
    ["failed", failed(stepGateRecord(), "channel_not_found")],
  ])("gives a %s request no answeredAt", (status, record) => {
    const view = toView(record);
    expect(view.status).toBe(status);
    expect(view).not.toHaveProperty("answeredAt");
    expect(view).not.toHaveProperty("decision");
  });

  it("says why a request failed or was cancelled", () => {
    expect(toView(failed(stepGateRecord(), "channel_not_found")).error).toBe("channel_not_found");
    expect(toView(cancelled(stepGateRecord(), "hook disconnected")).error).toBe("hook disconnected");
  });

  it("never shows internal fields: the token name, the body, the channel field, endedAt or cancelledBy", () => {
    const view = toView(cancelled(permissionRecord({ input: { command: "cat secrets" } }), "gone", "agent"));
    expect(Object.keys(view).sort()).toEqual(["createdAt", "error", "expiresAt", "id", "kind", "slack", "status"]);
    expect(JSON.stringify(view)).not.toContain("ci-bot");
    expect(JSON.stringify(view)).not.toContain("cat secrets");
  });
});

describe("the view and the protocol", () => {
  it("every view the relay shows parses, unchanged, with the RequestView schema the client library reads it with", () => {
    const records = [
      permissionRecord(),
      answered(permissionRecord(), { behavior: "allow", updatedInput: { command: "ls" } }),
      answered(stepGateRecord(), { reply: "q" }, ALICE),
      expired(stepGateRecord()),
      cancelled(permissionRecord(), "Claude Code closed the connection", "claude-code"),
      failed(permissionRecord(), "channel_not_found"),
    ];
    for (const record of records) {
      const view = JSON.parse(JSON.stringify(toView(record))) as unknown;
      expect(RequestView.parse(view)).toEqual(view);
    }
  });
});

describe("RequestRecord (a stored request read back)", () => {
  const patterned = (i: number, pattern: string, value: string) => ({ id: `q${i}`, question: `Q${i}?`, type: "text", pattern, default: value, required: true });

  it("reads a stored request without running its patterns again: 20 slow patterns cost no pattern time", () => {
    const stored = {
      ...interactiveRecord(),
      body: { kind: "interactive_questions", questions: Array.from({ length: 20 }, (_, i) => patterned(i, "(a+)+", `${"a".repeat(40)}b`)) },
    };
    const started = performance.now();
    const record = RequestRecord.parse(stored);
    // Checked again, each default would take a full pattern time limit (20 × 50 ms) and fail under load.
    expect(performance.now() - started).toBeLessThan(250);
    expect(record.body.kind === "interactive_questions" && record.body.questions).toHaveLength(20);
  });

  it("still refuses a stored body of the wrong shape", () => {
    const stored = { ...interactiveRecord(), body: { kind: "interactive_questions", questions: [{ id: "a", question: "Q?", type: "nope" }] } };
    expect(RequestRecord.safeParse(stored).success).toBe(false);
  });
});
