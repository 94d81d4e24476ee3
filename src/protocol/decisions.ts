/**
 * What a request's answer looks like on the wire: one decision shape per kind
 * (docs/architecture.md §2), exactly what the agent receives, plus the fixed y / n / q texts
 * agents see for the step gate. Shared by the relay, the client library and
 * the CLI.
 */
import { z } from "zod";
import { JsonObject, PermissionUpdate } from "./request-body.js";

/** What the agent reads when the person answers n at a step gate. */
export const STEP_GATE_REJECTED = "Action rejected by the user in step-by-step mode.";
/** What the agent reads when the person answers q at a step gate; the turn stops. */
export const STEP_GATE_STOPPED = "Execution stopped manually by the user.";

/** Exactly the Claude Agent SDK's PermissionResult. */
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

export const Decision = z.union([PermissionDecision, StepGateDecision, AskUserQuestionDecision, InteractiveQuestionsDecision]);
export type Decision = z.infer<typeof Decision>;

/** The decision schema of each request kind. */
export const DecisionOfKind = {
  permission: PermissionDecision,
  step_gate: StepGateDecision,
  ask_user_question: AskUserQuestionDecision,
  interactive_questions: InteractiveQuestionsDecision,
} as const;
