import { describe, expect, it } from "vitest";
import { isOneTap, requestMessage } from "../../../../src/slack/blocks/index.js";
import { checkMessageLimits } from "../../../helpers/block-kit-limits.js";
import { Action, encodeButton } from "../../../../src/slack/ids.js";
import { stepGateRecord } from "../../../fixtures/records.js";
import { block, buttons, decodeCode, moreTimeButton, sectionText } from "../../../helpers/blocks.js";

describe("step gate message", () => {
  it("shows the proposed tool and its parameters as pretty JSON, with Yes, No and Stop", () => {
    const record = stepGateRecord({ toolName: "Read", input: { file_path: "/etc/hosts", limit: 60 } });
    const message = requestMessage(record);
    expect(message.text).toBe("Proposed action: Read");
    expect(message.blocks[0]).toEqual({ type: "header", block_id: "header", text: { type: "plain_text", text: "Proposed action" } });
    expect(sectionText(message, "tool")).toBe("*Tool:* Read\n*Parameters:*");
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

  it("shows a Bash command as it runs, and every other parameter (the description too) as JSON", () => {
    const record = stepGateRecord({ toolName: "Bash", input: { command: "echo <hi>", description: "Say hi", timeout: 60 } });
    const message = requestMessage(record);
    expect(message.text).toBe("Proposed action: Bash: echo &lt;hi&gt;");
    expect(sectionText(message, "tool")).toBe("*Tool:* Bash\n*Command:*");
    expect(sectionText(message, "tool_code_0")).toBe("```echo &lt;hi&gt;```");
    expect(sectionText(message, "tool_rest")).toBe('*Other parameters:*\n```{\n  "description": "Say hi",\n  "timeout": 60\n}```');
    expect(checkMessageLimits(message)).toEqual([]);
  });

  it("counts a padded command's lines, collapses its blank runs, shows its tail and keeps the tail in the notification", () => {
    const command = `ls -la${"\n".repeat(2500)}rm -rf ~`;
    const message = requestMessage(stepGateRecord({ toolName: "Bash", input: { command } }));
    expect(sectionText(message, "tool")).toBe("*Tool:* Bash\n*Command (2,501 lines; 2,499 blank lines collapsed, shown as ⟨N blank lines⟩):*");
    expect(decodeCode(sectionText(message, "tool_code_0")!)).toBe("ls -la\n⟨2,499 blank lines⟩\nrm -rf ~");
    expect(message.text).toBe("Proposed action: Bash (2,501 lines): ls -la … rm -rf ~");
    expect(checkMessageLimits(message)).toEqual([]);
  });
});
