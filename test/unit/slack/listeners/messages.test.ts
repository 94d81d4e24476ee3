import { describe, expect, it } from "vitest";
import { parseStepReply, parseThreadReply } from "../../../../src/slack/listeners/messages.js";
import { recordOf } from "../../../helpers/slack.js";

const stepGate = recordOf({ kind: "step_gate", toolName: "Bash", input: { command: "rm -rf build" } });

describe("thread replies to a step gate", () => {
  it.each([
    ["y", "y"],
    ["yes", "y"],
    ["Y", "y"],
    ["  YES \n", "y"],
    ["n", "n"],
    ["no", "n"],
    ["No", "n"],
    ["q", "q"],
    [" Q ", "q"],
  ])("%j answers %s", (text, reply) => {
    expect(parseStepReply(text)).toBe(reply);
    expect(parseThreadReply(stepGate, text)).toEqual({ reply });
  });

  it.each([["nope"], ["yes please"], ["quit"], ["y?"], [""], ["lgtm"], ["n o"]])("%j is chatter, never taken as an answer (not even No)", (text) => {
    expect(parseStepReply(text)).toBeUndefined();
    expect(parseThreadReply(stepGate, text)).toBeUndefined();
  });
});

describe("thread replies to an AskUserQuestion", () => {
  const ask = recordOf({
    kind: "ask_user_question",
    questions: [
      { question: "Which colour?", header: "Colour", options: [{ label: "Red" }, { label: "Blue" }] },
      { question: "Which size?", header: "Size", options: [{ label: "S" }, { label: "L" }] },
    ],
  });

  it("any text answers every question in free text and is kept as the response", () => {
    expect(parseThreadReply(ask, "  Red, and make it large  ")).toEqual({
      answers: { "Which colour?": "Red, and make it large", "Which size?": "Red, and make it large" },
      response: "Red, and make it large",
    });
  });

  it("an empty reply answers nothing", () => {
    expect(parseThreadReply(ask, "   ")).toBeUndefined();
  });
});

describe("thread replies to other kinds", () => {
  it("a permission request is never answered from its thread", () => {
    const permission = recordOf({ kind: "permission", toolName: "Bash", input: { command: "ls" } });
    expect(parseThreadReply(permission, "yes")).toBeUndefined();
  });

  it("interactive questions are never answered from their thread", () => {
    const interactive = recordOf({ kind: "interactive_questions", questions: [{ id: "ok", question: "OK?", type: "confirm" }] });
    expect(parseThreadReply(interactive, "yes")).toBeUndefined();
  });
});
