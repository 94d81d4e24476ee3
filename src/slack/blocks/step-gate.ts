/**
 * A step gate: the proposed tool call with its parameters as JSON (Edit,
 * MultiEdit and Write as a diff of the file), and Yes / Allow for 15 min /
 * No / Stop buttons (a thread reply of y, n or q answers too).
 */
import type { RequestRecord } from "../../requests/model.js";
import type { StepGateBody } from "../../protocol/request-body.js";
import { Action, encodeButton } from "../ids.js";
import { actions, button, context } from "./elements.js";
import type { KindViewOf } from "./kind.js";
import { cutShort } from "./text.js";
import { toolBlocks, toolLeaves, toolShape, toolSummary } from "./tool-view.js";
import { ruleButtons } from "./rules.js";

function bodyOf(record: RequestRecord): StepGateBody {
  if (record.body.kind !== "step_gate") throw new Error(`not a step gate: ${record.body.kind}`);
  return record.body;
}

export const stepGateView: KindViewOf = (record) => {
  const body = bodyOf(record);
  const shape = toolShape(body.toolName, body.input, false);
  return {
    leaves: toolLeaves(shape),
    content: (fit) => toolBlocks(shape, cutShort(body.toolName, 200), fit),
    controls() {
      const value = encodeButton({ r: record.id });
      return [
        actions("actions", [
          button("Yes", Action.stepYes, value, { style: "primary" }),
          ...ruleButtons(record, value),
          button("No", Action.stepNo, value, { style: "danger" }),
          button("Stop", Action.stepStop, value),
        ]),
        context("reply_hint", ["Or reply in this thread with *y*, *n* or *q*."]),
      ];
    },
    summary: toolSummary(body.toolName, shape),
  };
};
