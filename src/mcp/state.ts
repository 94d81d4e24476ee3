/**
 * What ask_user and check_request return: the request's state as structured
 * content (the tools' output schema), and the same in one or two sentences
 * for the model, which states the answer or why there is none.
 */
import { z } from "zod";
import { Decision } from "../protocol/decisions.js";
import { RequestKind } from "../protocol/request-body.js";
import { RequestStatus } from "../protocol/request-view.js";

export const RequestState = z.object({
  requestId: z.string().describe("The request's id, for check_request."),
  kind: RequestKind.optional(),
  status: RequestStatus,
  expiresAt: z.string().describe("ISO 8601 time after which the request expires."),
  answer: z
    .union([z.string(), z.array(z.string()), z.boolean()])
    .optional()
    .describe("ask_user's answer: the chosen option, the chosen options (multiSelect), or the text the person wrote."),
  decision: Decision.optional().describe("The decision of a request of another kind (a permission's PermissionResult)."),
  answeredBy: z.string().optional().describe("Who answered, as Slack names them."),
  reason: z.string().optional().describe("Why no answer came (expired, cancelled, failed)."),
});
export type RequestState = z.infer<typeof RequestState>;

/** The state in words: the answer, why none came, or how to go on waiting. */
export function describeState(state: RequestState): string {
  switch (state.status) {
    case "pending":
      return `No answer yet: request ${state.requestId} is waiting for a person in Slack until ${state.expiresAt}. Call check_request with this id to get the answer.`;
    case "answered": {
      const who = state.answeredBy ?? "The person";
      if (state.answer !== undefined) return `${who} answered: ${answerText(state.answer)}`;
      return `${who} answered: ${JSON.stringify(state.decision)}`;
    }
    default:
      return state.reason ?? `The request ended with status "${state.status}" and no answer.`;
  }
}

function answerText(answer: NonNullable<RequestState["answer"]>): string {
  if (typeof answer === "boolean") return answer ? "yes" : "no";
  return Array.isArray(answer) ? answer.join(", ") : answer;
}
