/**
 * `slack-approval-relay/client`: what an agent needs to ask people in Slack
 * through the relay. Light on purpose: zod and the wire contract
 * (src/protocol), no Slack or Redis code; the Claude Agent SDK is needed only
 * for its types.
 */
export { RelayClient, type AskOptions, type ClaudeCodeHookCall, type ClaudeCodeHookOptions, type PassedOverKey, type WaitOptions } from "./relay-client.js";
export { createCanUseTool, type CanUseToolOptions } from "./can-use-tool.js";
export { createStepGate, DEFAULT_SKIP_TOOLS, STEP_GATE_REJECTED, STEP_GATE_STOPPED, type StepGateOptions } from "./step-gate.js";
export { askInteractive, type AskInteractiveOptions, type InteractiveAnswer, type InteractiveAnswers } from "./interactive.js";
export { RelayClientError, RequestEndedError, endedReason, isAbortError } from "./errors.js";
export type { AdapterOptions } from "./fields.js";
export type {
  AskUserQuestionRequestBody,
  Asker,
  CallOptions,
  CreateOptions,
  FetchLike,
  InteractiveQuestionInput,
  InteractiveQuestionsRequestBody,
  PermissionRequestBody,
  RelayClientOptions,
  RequestBody,
  Sleep,
  StepGateRequestBody,
} from "./types.js";
export type { AgentInfo, ApproverList, Labels, RequestedBy } from "../protocol/request-body.js";
export type { CreatedRequest, EndedStatus, RequestStatus, RequestView } from "../protocol/request-view.js";
export type {
  AskUserQuestionDecision,
  Decision,
  InteractiveQuestionsDecision,
  PermissionDecision,
  StepGateDecision,
  StepReply,
} from "../protocol/decisions.js";
export type { HookEvent, HookOutput } from "../protocol/claude-code-hook.js";
export {
  verifyCallbackSignature,
  signCallback,
  CALLBACK_SIGNATURE_HEADER,
  CALLBACK_TIMESTAMP_HEADER,
  CALLBACK_REQUEST_ID_HEADER,
  DEFAULT_CALLBACK_TOLERANCE_SECONDS,
  type VerifyCallbackInput,
} from "../protocol/callback-signature.js";
