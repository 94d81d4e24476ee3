import { describe, expect, it } from "vitest";
import { isOneTap, requestMessage } from "../../../../src/slack/blocks/index.js";
import { checkMessageLimits } from "../../../helpers/block-kit-limits.js";
import { Action, encodeButton } from "../../../../src/slack/ids.js";
import { stepGateRecord } from "../../../fixtures/records.js";
import { block, buttons, decodeCode, moreTimeButton, sectionText } from "../../../helpers/blocks.js";

describe("step gate message", () => {
  it("shows the proposed tool and its parameters as pretty JSON, with Yes, No and Stop", () => {
    const record = stepGateRecord({ toolName: "Bash", input: { command: "rm -rf build", timeout: 60 } });
    const message = requestMessage(record);
    expect(message.text).toBe("Proposed action: Bash");
    expect(message.blocks[0]).toEqual({ type: "header", block_id: "header", text: { type: "plain_text", text: "Proposed action" } });
    expect(sectionText(message, "tool")).toBe("*Tool:* Bash\n*Parameters:*");
    expect(decodeCode(sectionText(message, "tool_code_0")!)).toBe(JSON.stringify(record.body.input, null, 2));
    const value = encodeButton({ r: record.id });
    expect(buttons(message)).toEqual([
      { blockId: "actions", action_id: Action.stepYes, text: "Yes", value, style: "primary" },
      { blockId: "actions", action_id: Action.stepNo, text: "No", value, style: "danger" },
      { blockId: "actions", action_id: Action.stepStop, text: "Stop", value },
      moreTimeButton(record.id),
    ]);
    expect(block(message, "reply_hint")).toEqual({
      type: "context",
      block_id: "reply_hint",
      elements: [{ type: "mrkdwn", verbatim: true, text: "Or reply in this thread with *y*, *n* or *q*." }],
    });
    expect(isOneTap(record)).toBe(true);
    expect(checkMessageLimits(message)).toEqual([]);
  });

  it("shows Bash parameters as JSON too, not as a command: the gate shows exactly what runs", () => {
    const message = requestMessage(stepGateRecord({ input: { command: "echo <hi>" } }));
    expect(sectionText(message, "tool_code_0")).toBe('```{\n  "command": "echo &lt;hi&gt;"\n}```');
  });
});
