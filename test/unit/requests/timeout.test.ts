/**
 * What an expiry carries (src/requests/timeout.ts): nothing by default; under
 * a route's `onTimeout: halt` a step gate's q and a permission's deny with
 * interrupt; never an allow, and nothing for the question kinds.
 */
import { describe, expect, it } from "vitest";
import { toView } from "../../../src/requests/model.js";
import { expiryOf, timeoutDecision } from "../../../src/requests/timeout.js";
import { askRecord, CREATED_AT, interactiveRecord, permissionRecord, stepGateRecord } from "../../fixtures/records.js";

const HALT = { alwaysAllow: "tool", onTimeout: "halt" } as const;
const tenMinutes = { expiresAt: CREATED_AT + 600_000 };

describe("timeoutDecision", () => {
  it("under onTimeout: halt, a step gate expires with q", () => {
    expect(timeoutDecision(stepGateRecord({}, { ...tenMinutes, policy: HALT }))).toStrictEqual({ reply: "q" });
  });

  it("under onTimeout: halt, a permission request expires with a deny that interrupts and says no one answered in time", () => {
    expect(timeoutDecision(permissionRecord({}, { ...tenMinutes, policy: HALT }))).toStrictEqual({
      behavior: "deny",
      message: "No one answered in Slack within 10 minutes, so the tool call was denied and the agent was stopped.",
      interrupt: true,
    });
  });

  it("question kinds carry no decision, halt or not", () => {
    expect(timeoutDecision(askRecord({}, { policy: HALT }))).toBeUndefined();
    expect(timeoutDecision(interactiveRecord({}, { policy: HALT }))).toBeUndefined();
  });

  it("without onTimeout (deny, the default), or on a request stored before policies, nothing is carried", () => {
    expect(timeoutDecision(stepGateRecord({}, { policy: { alwaysAllow: "tool" } }))).toBeUndefined();
    expect(timeoutDecision(permissionRecord())).toBeUndefined();
  });
});

describe("expiryOf", () => {
  it("is an expiry at the given time with the route's decision and the unposted error", () => {
    const gate = stepGateRecord({}, { policy: HALT });
    expect(expiryOf(gate, 5, "never posted")).toStrictEqual({ status: "expired", at: 5, unpostedError: "never posted", decision: { reply: "q" } });
    expect(expiryOf(stepGateRecord(), 5)).toStrictEqual({ status: "expired", at: 5 });
    expect(expiryOf(undefined, 5)).toStrictEqual({ status: "expired", at: 5 });
  });

  it("the view of a request that expired with its decision shows both, as callbacks and GET deliver it", () => {
    const gate = stepGateRecord({}, { policy: HALT });
    const view = toView({ ...gate, status: "expired", endedAt: gate.expiresAt, decision: { reply: "q" } });
    expect(view).toMatchObject({ status: "expired", decision: { reply: "q" } });
    expect(view.answeredAt).toBeUndefined();
  });
});
