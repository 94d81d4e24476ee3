/**
 * What the relay makes of a person's answer: whether it fits the request's
 * kind, the deny message when no reason was given, and the short summary the
 * updated Slack message shows. The decision shapes themselves are wire
 * contract (src/protocol/decisions.ts).
 */
import { DecisionOfKind, type Decision } from "../protocol/decisions.js";
import type { RequestKind } from "../protocol/request-body.js";

/** Checks that a decision has the shape its request kind promises. */
export function decisionMatchesKind(kind: RequestKind, decision: unknown): boolean {
  return DecisionOfKind[kind].safeParse(decision).success;
}

/** The deny message when the person gave no reason. */
export function defaultDenyMessage(name: string): string {
  return `Denied by ${name} in Slack.`;
}

const DEFAULT_DENY = /^Denied by .+ in Slack\.$/s;

/** True when `message` is one defaultDenyMessage wrote (no reason from the person). */
export function isDefaultDenyMessage(message: string): boolean {
  return DEFAULT_DENY.test(message);
}

/** Short human summary of a decision, for the updated Slack message and logs. */
export function describeDecision(decision: Decision): { emoji: string; verb: string } {
  if ("behavior" in decision) {
    if (decision.behavior === "allow") {
      return { emoji: "✅", verb: decision.updatedPermissions ? "Always allowed" : "Allowed" };
    }
    return { emoji: "❌", verb: decision.interrupt ? "Denied and stopped" : "Denied" };
  }
  if ("reply" in decision) {
    if (decision.reply === "y") return { emoji: "✅", verb: "Approved" };
    if (decision.reply === "n") return { emoji: "❌", verb: "Rejected" };
    return { emoji: "🛑", verb: "Stopped" };
  }
  return { emoji: "✅", verb: "Answered" };
}
