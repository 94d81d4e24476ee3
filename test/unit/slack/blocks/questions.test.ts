import { describe, expect, it } from "vitest";
import { isOneTap, requestMessage } from "../../../../src/slack/blocks/index.js";
import { checkMessageLimits } from "../../../helpers/block-kit-limits.js";
import { Action, encodeButton } from "../../../../src/slack/ids.js";
import { askRecord, interactiveRecord } from "../../../fixtures/records.js";
import { actionIds, block, buttons, decodeCode, moreTimeButton, sectionText } from "../../../helpers/blocks.js";

const option = (label: string, description = "") => ({ label, description });

describe("AskUserQuestion message", () => {
  it("answers one single-select question in one tap: a button per option, then Other…", () => {
    const record = askRecord();
    const message = requestMessage(record);
    expect(message.text).toBe("Question from the agent: Which database should the service use?");
    expect(sectionText(message, "q0")).toBe("_The agent asks:_\n> *Database*\n> Which database should the service use?");
    expect(block(message, "q0_o0")).toEqual({
      type: "section",
      block_id: "q0_o0",
      text: { type: "mrkdwn", verbatim: true, text: "> *PostgreSQL*\n> Relational, already in production" },
      accessory: {
        type: "button",
        action_id: Action.option,
        text: { type: "plain_text", text: "PostgreSQL" },
        value: encodeButton({ r: record.id, q: 0, o: 0 }),
      },
    });
    expect(buttons(message).map((b) => [b.action_id, b.text, b.value])).toEqual([
      [Action.option, "PostgreSQL", encodeButton({ r: record.id, q: 0, o: 0 })],
      [Action.option, "SQLite", encodeButton({ r: record.id, q: 0, o: 1 })],
      [Action.other, "Other…", encodeButton({ r: record.id, q: 0 })],
      [Action.moreTime, "+30 min", encodeButton({ r: record.id })],
    ]);
    expect(isOneTap(record)).toBe(true);
    expect(checkMessageLimits(message)).toEqual([]);
  });

  it("cuts option button texts to 75 characters", () => {
    const long = "L".repeat(200);
    const message = requestMessage(askRecord({ questions: [{ question: "Pick", header: "", options: [option(long), option("short")] }] }));
    const first = buttons(message)[0]!;
    expect(first.text).toBe(`${"L".repeat(74)}…`);
  });

  it("opens the modal from Answer… for a multi-select question", () => {
    const record = askRecord({
      questions: [{ question: "Which checks?", header: "Checks", multiSelect: true, options: [option("lint"), option("test")] }],
    });
    const message = requestMessage(record);
    expect(buttons(message)).toEqual([
      { blockId: "actions", action_id: Action.answer, text: "Answer…", value: encodeButton({ r: record.id }), style: "primary" },
      moreTimeButton(record.id),
    ]);
    expect(sectionText(message, "q0")).toBe("_The agent asks:_\n> *Checks*\n> Which checks?\n_Choose one or more._");
    expect(isOneTap(record)).toBe(false);
  });

  it("opens the modal from Answer… when there are several questions, under a plural header", () => {
    const questions = [
      { question: "First?", header: "One", options: [option("a"), option("b")] },
      { question: "Second?", header: "Two", options: [option("c"), option("d")] },
    ];
    const record = askRecord({ questions });
    const message = requestMessage(record);
    expect(message.blocks[0]).toMatchObject({ type: "header", text: { text: "Questions from the agent" } });
    expect(actionIds(message)).toEqual([Action.answer, Action.moreTime]);
    expect(sectionText(message, "q1")).toBe("_The agent asks:_\n> *Two*\n> Second?");
    expect(sectionText(message, "q1_o1")).toBe("> *d*");
    expect(isOneTap(record)).toBe(false);
  });

  it("cuts a long header chip for display", () => {
    const message = requestMessage(askRecord({ questions: [{ question: "Q?", header: "H".repeat(40), options: [option("a"), option("b")] }] }));
    expect(sectionText(message, "q0")).toBe(`_The agent asks:_\n> *${"H".repeat(29)}…*\n> Q?`);
  });

  it("shows an option's preview in a code block", () => {
    const questions = [{ question: "Layout?", options: [{ label: "Grid", description: "", preview: "<div class=grid>" }, option("List")] }];
    const message = requestMessage(askRecord({ questions }));
    const [, code] = sectionText(message, "q0_o0")!.split("\n");
    expect(decodeCode(code!)).toBe("<div class=grid>");
  });
});

describe("InteractiveQuestion message", () => {
  it("answers one confirm question with Yes / No in the message", () => {
    const record = interactiveRecord();
    const message = requestMessage(record);
    expect(message.blocks[0]).toMatchObject({ text: { text: "Questions" } });
    expect(sectionText(message, "q0")).toBe("_The agent asks:_\n> *Deploy v1.2.3 to production?*\n_Yes or no_");
    const value = encodeButton({ r: record.id, q: 0 });
    expect(buttons(message)).toEqual([
      { blockId: "actions", action_id: Action.confirmYes, text: "Yes", value, style: "primary" },
      { blockId: "actions", action_id: Action.confirmNo, text: "No", value },
      moreTimeButton(record.id),
    ]);
    expect(isOneTap(record)).toBe(true);
  });

  it("answers one choice question with a button per option, in blocks of their own", () => {
    const record = interactiveRecord({ questions: [{ id: "env", question: "Which environment?", type: "choice", options: ["staging", "production"] }] });
    const message = requestMessage(record);
    expect(buttons(message)).toEqual([
      { blockId: "q0_o0", action_id: Action.option, text: "staging", value: encodeButton({ r: record.id, q: 0, o: 0 }) },
      { blockId: "q0_o1", action_id: Action.option, text: "production", value: encodeButton({ r: record.id, q: 0, o: 1 }) },
      moreTimeButton(record.id),
    ]);
    expect(sectionText(message, "q0")).toBe("_The agent asks:_\n> *Which environment?*\n_Choose one_");
    expect(checkMessageLimits(message)).toEqual([]);
  });

  it("uses Answer… instead of buttons for a choice of more than 20 options, and lists them", () => {
    const options = Array.from({ length: 21 }, (_, i) => `opt${i}`);
    const record = interactiveRecord({ questions: [{ id: "pick", question: "Pick one", type: "choice", options }] });
    const message = requestMessage(record);
    expect(actionIds(message)).toEqual([Action.answer, Action.moreTime]);
    expect(sectionText(message, "q0")).toContain("_Choose one_\n> • opt0\n> • opt1\n");
    expect(isOneTap(record)).toBe(false);
  });

  it("uses Answer… for text, multiChoice and several questions", () => {
    const text = interactiveRecord({ questions: [{ id: "t", question: "Name?", type: "text" }] });
    const multi = interactiveRecord({ questions: [{ id: "m", question: "Which?", type: "multiChoice", options: ["a", "b"] }] });
    const two = interactiveRecord({
      questions: [
        { id: "a", question: "A?", type: "confirm" },
        { id: "b", question: "B?", type: "confirm" },
      ],
    });
    for (const record of [text, multi, two]) {
      expect(actionIds(requestMessage(record))).toEqual([Action.answer, Action.moreTime]);
      expect(isOneTap(record)).toBe(false);
    }
  });

  it("shows defaults, formats and which questions are optional", () => {
    const record = interactiveRecord({
      questions: [
        { id: "v", question: "Version?", type: "text", pattern: "\\d+\\.\\d+", default: "1.2", required: false },
        { id: "r", question: "Regions?", type: "multiChoice", options: ["eu", "us"], default: ["eu", "us"] },
        { id: "c", question: "Notify?", type: "confirm", default: false },
      ],
    });
    const message = requestMessage(record);
    expect(sectionText(message, "q0")).toBe("_The agent asks:_\n> *Version?*\n_Type an answer · optional_\nFormat:\n> \\d+\\.\\d+\nDefault:\n> 1.2");
    expect(sectionText(message, "q1")).toBe("_The agent asks:_\n> *Regions?*\n_Choose any_\n> • eu\n> • us\nDefault:\n> eu, us");
    expect(sectionText(message, "q2")).toBe("_The agent asks:_\n> *Notify?*\n_Yes or no_\nDefault:\n> No");
  });

  it("in autonomous mode shows only the required questions without a default, keeping their indexes", () => {
    const record = interactiveRecord({
      autonomous: true,
      questions: [
        { id: "withDefault", question: "Has a default", type: "confirm", default: true },
        { id: "optional", question: "Optional", type: "text", required: false },
        { id: "needed", question: "Needed?", type: "confirm" },
      ],
    });
    const message = requestMessage(record);
    expect(sectionText(message, "q0")).toBeUndefined();
    expect(sectionText(message, "q1")).toBeUndefined();
    expect(sectionText(message, "q2")).toBe("_The agent asks:_\n> *Needed?*\n_Yes or no_");
    expect(buttons(message).map((b) => b.value)).toEqual([
      encodeButton({ r: record.id, q: 2 }),
      encodeButton({ r: record.id, q: 2 }),
      encodeButton({ r: record.id }),
    ]);
    expect(message.text).toBe("Questions: Needed?");
    expect(isOneTap(record)).toBe(true);
  });

  it("cuts a very long question visibly and offers the full input", () => {
    const record = interactiveRecord({ questions: [{ id: "q", question: "Why? ".repeat(1000), type: "text" }] });
    const message = requestMessage(record);
    expect(sectionText(message, "q0")).toMatch(/… _\(\d+ more characters\)_\*\n_Type an answer_$/);
    expect(actionIds(message)).toEqual([Action.viewInput, Action.answer, Action.moreTime]);
    expect(checkMessageLimits(message)).toEqual([]);
  });

  it("in autonomous mode with nothing left for a person shows no buttons", () => {
    const record = interactiveRecord({ autonomous: true, questions: [{ id: "d", question: "D?", type: "confirm", default: true }] });
    const message = requestMessage(record);
    expect(buttons(message)).toEqual([]);
    expect(sectionText(message, "none")).toBe("_Every question was answered automatically._");
    expect(isOneTap(record)).toBe(false);
  });
});
