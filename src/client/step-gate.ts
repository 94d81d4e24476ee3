/**
 * A PreToolUse hook for the Claude Agent SDK that asks a person y / n / q in
 * Slack before each tool call (docs/architecture.md §2, step_gate). The SDK lets the tool
 * run when a hook callback times out, so the gate answers deny by itself a
 * few seconds before the matcher's timeout; register it with
 * `onFailure: 'block'` and that same timeout.
 */
import type { HookCallback, HookJSONOutput } from "@anthropic-ai/claude-agent-sdk";
import { denyOutput, stepGateOutput, stopOutput } from "../protocol/claude-code-hook.js";
import { StepGateDecision, STEP_GATE_REJECTED, STEP_GATE_STOPPED } from "../protocol/decisions.js";
import { LIMITS } from "../protocol/request-body.js";
import type { RequestView } from "../protocol/request-view.js";
import { notAnsweredText } from "../protocol/texts.js";
import { endedReason, failureReason, haltedReason, isAbortError } from "./errors.js";
import { clip, commonFields, report, type AdapterOptions } from "./fields.js";
import type { Asker } from "./types.js";

export { STEP_GATE_REJECTED, STEP_GATE_STOPPED };

export interface StepGateOptions extends Omit<AdapterOptions, "timeoutSeconds"> {
  /** The gate asks only while this returns true (step-by-step mode on). Default: always. */
  isActive?: () => boolean;
  /** Tools that pass without asking, because they already ask a person. Default AskUserQuestion and TodoWrite. */
  skipTools?: readonly string[];
  /** The `timeout` (seconds) of the HookCallbackMatcher the gate is registered with. Default 60, the SDK's. */
  timeoutSeconds?: number;
  /** How many seconds before that timeout the gate denies by itself. Default 5. */
  marginSeconds?: number;
}

export const DEFAULT_SKIP_TOOLS = ["AskUserQuestion", "TodoWrite"] as const;

export function createStepGate(relay: Asker, options: StepGateOptions = {}): HookCallback {
  const { isActive = () => true, skipTools = DEFAULT_SKIP_TOOLS, timeoutSeconds = 60, marginSeconds = 5 } = options;
  const answerWithinMs = (timeoutSeconds - marginSeconds) * 1000;
  if (!(answerWithinMs >= 1000)) {
    throw new RangeError(`createStepGate: timeoutSeconds (${timeoutSeconds}) must exceed marginSeconds (${marginSeconds}) by at least one second`);
  }
  // The relay expires the request a second before the gate's own deadline, so Slack shows "Expired".
  const relayTimeoutSeconds = Math.max(1, Math.floor(answerWithinMs / 1000) - 1);
  const skipped = new Set(skipTools);

  return async (input, toolUseID, { signal }) => {
    if (input.hook_event_name !== "PreToolUse" || skipped.has(input.tool_name)) return {};
    try {
      if (!isActive()) return {};
      const deadline = new AbortController();
      const timer = setTimeout(() => deadline.abort(), answerWithinMs);
      try {
        const body = {
          kind: "step_gate" as const,
          ...commonFields({ ...options, timeoutSeconds: relayTimeoutSeconds }, [input.agent_id ? `Subagent: ${input.agent_id}` : undefined], {
            sessionId: clip(input.session_id, LIMITS.agentField),
            cwd: clip(input.cwd, LIMITS.cwd),
          }),
          toolName: input.tool_name,
          input: asObject(input.tool_input),
          toolUseId: clip(input.tool_use_id || toolUseID, LIMITS.toolUseId),
          // The gate denies by itself before the SDK's timeout, whatever the deadline: no "+30 min".
          extendable: false,
        };
        const view = await relay.ask(body, { signal: AbortSignal.any([signal, deadline.signal]) });
        return gateOutput(view);
      } catch (error) {
        if (deadline.signal.aborted && !signal.aborted && isAbortError(error)) {
          return deny(notAnsweredText({ status: "expired", seconds: answerWithinMs / 1000 }, STEP_NOT_RUN));
        }
        throw error;
      } finally {
        clearTimeout(timer);
      }
    } catch (error) {
      report(options, error);
      return deny(failureReason(error));
    }
  };
}

/** What the agent is told happened instead of an answer. */
const STEP_NOT_RUN = "so the step was not run";

function gateOutput(view: RequestView): HookJSONOutput {
  // Expired under the route's onTimeout: halt: the agent stops, as after a person's q.
  if (view.status === "expired" && StepGateDecision.safeParse(view.decision).data?.reply === "q") return stopOutput(haltedReason(view));
  if (view.status !== "answered") return deny(endedReason(view));
  const decision = StepGateDecision.safeParse(view.decision);
  if (!decision.success) return deny("The approval relay's answer is not y, n or q, so the step was not run.");
  return stepGateOutput(decision.data.reply);
}

function deny(reason: string): HookJSONOutput {
  return denyOutput("PreToolUse", reason);
}

/** A step gate shows the tool's input as an object; anything else is wrapped so it still shows. */
function asObject(value: unknown): Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : { input: value };
}
