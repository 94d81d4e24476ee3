/**
 * What a person's answer becomes for the agent: one decision shape per kind
 * (DESIGN §2), plus the fixed texts agents see for the step gate.
 */
import { z } from "zod";
import { JsonObject, PermissionUpdate, type RequestKind } from "./schemas.js";

export const STEP_GATE_REJECTED = "Action rejected by the user in step-by-step mode.";
export const STEP_GATE_STOPPED = "Execution stopped manually by the user.";

export const PermissionDecision = z.discriminatedUnion("behavior", [
  z.object({
    behavior: z.literal("allow"),
    updatedInput: JsonObject,
    updatedPermissions: z.array(PermissionUpdate).optional(),
  }),
  z.object({
    behavior: z.literal("deny"),
    message: z.string().min(1),
    interrupt: z.boolean().optional(),
  }),
]);
export type PermissionDecision = z.infer<typeof PermissionDecision>;

export const StepReply = z.enum(["y", "n", "q"]);
export type StepReply = z.infer<typeof StepReply>;
export const StepGateDecision = z.object({ reply: StepReply });
export type StepGateDecision = z.infer<typeof StepGateDecision>;

export const AskUserQuestionDecision = z.object({
  answers: z.record(z.string(), z.string()),
  response: z.string().optional(),
});
export type AskUserQuestionDecision = z.infer<typeof AskUserQuestionDecision>;

export const InteractiveAnswer = z.union([z.string(), z.array(z.string()), z.boolean()]);
export type InteractiveAnswer = z.infer<typeof InteractiveAnswer>;
export const InteractiveQuestionsDecision = z.object({
  answers: z.record(z.string(), InteractiveAnswer),
});
export type InteractiveQuestionsDecision = z.infer<typeof InteractiveQuestionsDecision>;

export const Decision = z.union([
  PermissionDecision,
  StepGateDecision,
  AskUserQuestionDecision,
  InteractiveQuestionsDecision,
]);
export type Decision = z.infer<typeof Decision>;

const byKind = {
  permission: PermissionDecision,
  step_gate: StepGateDecision,
  ask_user_question: AskUserQuestionDecision,
  interactive_questions: InteractiveQuestionsDecision,
} as const;

/** Checks that a decision has the shape its request kind promises. */
export function decisionMatchesKind(kind: RequestKind, decision: unknown): boolean {
  return byKind[kind].safeParse(decision).success;
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
