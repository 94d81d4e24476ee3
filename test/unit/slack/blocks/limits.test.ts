import type { KnownBlock, ModalView } from "@slack/types";
import { describe, expect, it } from "vitest";
import { type SlackMessage } from "../../../../src/slack/blocks/index.js";
import { checkMessageLimits, checkViewLimits } from "../../../helpers/block-kit-limits.js";

const plain = (text: string) => ({ type: "plain_text" as const, text });
const mrkdwn = (text: string) => ({ type: "mrkdwn" as const, text });
const section = (id: string, text: string): KnownBlock => ({ type: "section", block_id: id, text: mrkdwn(text) });
const btn = (text: string, action_id = "a", value = "v") => ({ type: "button" as const, text: plain(text), action_id, value });
const message = (blocks: KnownBlock[], text = "fallback"): SlackMessage => ({ text, blocks });

function only(problems: string[]): string {
  expect(problems).toHaveLength(1);
  return problems[0]!;
}

describe("checkMessageLimits", () => {
  it("accepts a message within every limit", () => {
    const ok = message([
      { type: "header", block_id: "h", text: plain("Title") },
      section("s", "x".repeat(3000)),
      { type: "context", block_id: "c", elements: [mrkdwn("who")] },
      { type: "actions", block_id: "a", elements: [btn("Allow", "allow"), btn("Deny", "deny")] },
    ]);
    expect(checkMessageLimits(ok)).toEqual([]);
  });

  it("reports more than 50 blocks", () => {
    const blocks = Array.from({ length: 51 }, (_, i) => section(`s${i}`, "x"));
    expect(only(checkMessageLimits(message(blocks)))).toMatch(/^blocks: 51 blocks/);
  });

  it("reports a section text over 3000 characters", () => {
    expect(only(checkMessageLimits(message([section("s", "x".repeat(3001))])))).toMatch(/blocks\[0\]\.text: 3001/);
  });

  it("reports a header over 150 characters", () => {
    const header: KnownBlock = { type: "header", block_id: "h", text: plain("x".repeat(151)) };
    expect(only(checkMessageLimits(message([header])))).toMatch(/blocks\[0\]\.text: 151/);
  });

  it("reports a context element over 2000 characters and more than 10 elements", () => {
    const long: KnownBlock = { type: "context", block_id: "c", elements: [mrkdwn("x".repeat(2001))] };
    expect(only(checkMessageLimits(message([long])))).toMatch(/elements\[0\]: 2001/);
    const many: KnownBlock = { type: "context", block_id: "c", elements: Array.from({ length: 11 }, () => mrkdwn("x")) };
    expect(only(checkMessageLimits(message([many])))).toMatch(/elements: 11/);
  });

  it("reports a button text over 75 and a button value over 2000 characters", () => {
    const actions: KnownBlock = { type: "actions", block_id: "a", elements: [btn("x".repeat(76), "a", "v".repeat(2001))] };
    const problems = checkMessageLimits(message([actions]));
    expect(problems).toHaveLength(2);
    expect(problems[0]).toMatch(/text: 76/);
    expect(problems[1]).toMatch(/value: 2001/);
  });

  it("reports a button accessory that breaks a limit", () => {
    const block: KnownBlock = { type: "section", block_id: "s", text: mrkdwn("x"), accessory: btn("x".repeat(76)) };
    expect(only(checkMessageLimits(message([block])))).toMatch(/accessory\.text: 76/);
  });

  it("reports a confirm dialog whose texts are too long", () => {
    const confirm = { title: plain("t".repeat(101)), text: plain("x".repeat(301)), confirm: plain("c".repeat(31)), deny: plain("d".repeat(31)) };
    const actions: KnownBlock = { type: "actions", block_id: "a", elements: [{ ...btn("Go"), confirm }] };
    expect(checkMessageLimits(message([actions]))).toHaveLength(4);
  });

  it("reports block ids that repeat", () => {
    expect(only(checkMessageLimits(message([section("same", "a"), section("same", "b")])))).toMatch(/"same" is not unique/);
  });

  it("reports action ids that repeat within one block", () => {
    const actions: KnownBlock = { type: "actions", block_id: "a", elements: [btn("A", "dup"), btn("B", "dup")] };
    expect(only(checkMessageLimits(message([actions])))).toMatch(/"dup" is not unique in its block/);
  });

  it("allows the same action id in different blocks", () => {
    const one: KnownBlock = { type: "actions", block_id: "a", elements: [btn("A", "same")] };
    const two: KnownBlock = { type: "actions", block_id: "b", elements: [btn("B", "same")] };
    expect(checkMessageLimits(message([one, two]))).toEqual([]);
  });

  it("reports more than 11,000 characters of text in all, fallback included", () => {
    const blocks = [section("a", "x".repeat(3000)), section("b", "x".repeat(3000)), section("c", "x".repeat(3000))];
    expect(only(checkMessageLimits(message([...blocks, section("d", "x".repeat(1999))], "f".repeat(2))))).toMatch(/^message: 11001 characters/);
  });

  it("reports a fallback text over 3000 characters, and an empty one", () => {
    expect(checkMessageLimits(message([], "x".repeat(3001)))[0]).toMatch(/^text: 3001/);
    expect(only(checkMessageLimits(message([], "")))).toBe("text: empty");
  });

  it("reports empty texts, which Slack refuses", () => {
    expect(only(checkMessageLimits(message([section("s", "")])))).toMatch(/text: empty/);
  });

  it("reports option texts and values over their limits, and too many radio buttons", () => {
    const options = Array.from({ length: 11 }, (_, i) => ({ text: plain(i === 0 ? "x".repeat(76) : `o${i}`), value: i === 1 ? "v".repeat(151) : `v${i}` }));
    const actions: KnownBlock = { type: "actions", block_id: "a", elements: [{ type: "radio_buttons", action_id: "r", options }] };
    const problems = checkMessageLimits(message([actions]));
    expect(problems).toHaveLength(3);
    expect(problems.join("\n")).toMatch(/options: 11/);
    expect(problems.join("\n")).toMatch(/options\[0\]\.text: 76/);
    expect(problems.join("\n")).toMatch(/options\[1\]\.value: 151/);
  });
});

describe("checkViewLimits", () => {
  const view = (patch: Partial<ModalView>): ModalView => ({ type: "modal", title: plain("Title"), close: plain("Cancel"), blocks: [], ...patch });
  const input = (id: string, element: Record<string, unknown>, label = "Label"): KnownBlock =>
    ({ type: "input", block_id: id, label: plain(label), element }) as unknown as KnownBlock;

  it("accepts a modal within every limit", () => {
    const blocks = [input("i", { type: "plain_text_input", action_id: "t", initial_value: "x".repeat(3000) })];
    expect(checkViewLimits(view({ blocks, submit: plain("Submit") }))).toEqual([]);
  });

  it("reports a title, submit or close over 24 characters", () => {
    expect(checkViewLimits(view({ title: plain("x".repeat(25)), submit: plain("s".repeat(25)), close: plain("c".repeat(25)) }))).toHaveLength(3);
  });

  it("reports more than 100 blocks", () => {
    const blocks = Array.from({ length: 101 }, (_, i) => section(`s${i}`, "x"));
    expect(only(checkViewLimits(view({ blocks })))).toMatch(/^blocks: 101 blocks/);
  });

  it("reports private_metadata over 3000 characters", () => {
    expect(only(checkViewLimits(view({ private_metadata: "x".repeat(3001) })))).toMatch(/^private_metadata: 3001/);
  });

  it("reports an input label over 2000 characters and a missing submit button", () => {
    const blocks = [input("i", { type: "plain_text_input", action_id: "t" }, "x".repeat(2001))];
    const problems = checkViewLimits(view({ blocks }));
    expect(problems).toHaveLength(2);
    expect(problems.join("\n")).toMatch(/submit: required/);
    expect(problems.join("\n")).toMatch(/label: 2001/);
  });

  it("reports an initial_value over 3000 characters", () => {
    const blocks = [input("i", { type: "plain_text_input", action_id: "t", initial_value: "x".repeat(3001) })];
    expect(only(checkViewLimits(view({ blocks, submit: plain("OK") })))).toMatch(/initial_value: 3001/);
  });

  it("reports more than 100 select options, and an initial option that is not an option", () => {
    const options = Array.from({ length: 101 }, (_, i) => ({ text: plain(`o${i}`), value: String(i) }));
    const select = { type: "static_select", action_id: "s", options, initial_option: { text: plain("nope"), value: "x" } };
    const problems = checkViewLimits(view({ blocks: [input("i", select)], submit: plain("OK") }));
    expect(problems).toHaveLength(2);
    expect(problems.join("\n")).toMatch(/options: 101/);
    expect(problems.join("\n")).toMatch(/initial option is not one of the options/);
  });

  it("reports more than 10 checkboxes", () => {
    const options = Array.from({ length: 11 }, (_, i) => ({ text: plain(`o${i}`), value: String(i) }));
    const problems = checkViewLimits(view({ blocks: [input("i", { type: "checkboxes", action_id: "c", options })], submit: plain("OK") }));
    expect(only(problems)).toMatch(/options: 11/);
  });
});
