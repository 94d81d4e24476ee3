import type { KnownBlock } from "@slack/types";
import { describe, expect, it } from "vitest";
import { inputModal, inputPageCount } from "../../../../src/slack/blocks/index.js";
import { checkViewLimits } from "../../../helpers/block-kit-limits.js";
import { prettyJson } from "../../../../src/slack/blocks/json.js";
import type { RequestRecord } from "../../../../src/requests/model.js";
import { Action, decodeMetadata, encodeButton, View } from "../../../../src/slack/ids.js";
import { askRecord, permissionRecord, stepGateRecord } from "../../../fixtures/records.js";
import { buttons, decodeCode, sectionText, unescapeMrkdwn } from "../../../helpers/blocks.js";

function allViews(record: RequestRecord) {
  return Array.from({ length: inputPageCount(record) }, (_, page) => inputModal(record, page));
}

function allPages(record: RequestRecord): KnownBlock[][] {
  return allViews(record).map((view) => view.blocks as KnownBlock[]);
}

function textOf(block: KnownBlock): string {
  return (block as { text: { text: string } }).text.text;
}

/** The tool input as the viewer shows it, across every page, unescaped. */
function shownInput(record: RequestRecord, pages = allPages(record)): string {
  return pages
    .flat()
    .filter((b) => b.block_id?.startsWith("input_"))
    .map((b) => decodeCode(textOf(b)))
    .join("");
}

const hostile = "<!channel> <@U123> <http://evil.example|click> & ``` `` `\n😀";

describe("full input viewer", () => {
  it("shows a small input on one page, read-only, with no page buttons", () => {
    const record = permissionRecord();
    const view = inputModal(record, 0);
    expect(view).toMatchObject({ type: "modal", callback_id: View.input, title: { text: "Full input" }, close: { text: "Close" } });
    expect(view.submit).toBeUndefined();
    expect(decodeMetadata(view.private_metadata)).toEqual({ r: record.id });
    expect(sectionText(view, "head_input")).toBe("*Tool input* (Bash)");
    expect(shownInput(record)).toBe(JSON.stringify(record.body.input, null, 2));
    expect(buttons(view)).toEqual([]);
    expect(checkViewLimits(view)).toEqual([]);
  });

  it("gives back a 1 MB hostile input exactly, across pages that each fit Slack's limits", () => {
    const record = permissionRecord({ input: { command: hostile.repeat(Math.ceil(1_000_000 / hostile.length)) } });
    const views = allViews(record);
    expect(views.length).toBeGreaterThan(1);
    expect(
      shownInput(
        record,
        views.map((view) => view.blocks as KnownBlock[]),
      ),
    ).toBe(JSON.stringify(record.body.input, null, 2));
    for (const view of views) {
      expect(checkViewLimits(view)).toEqual([]);
      expect(view.blocks.filter((b) => b.block_id?.startsWith("input_")).length).toBeLessThanOrEqual(90);
      for (const b of view.blocks.filter((b) => b.block_id?.startsWith("input_"))) {
        expect(textOf(b as KnownBlock).length).toBeLessThanOrEqual(2900);
        expect(textOf(b as KnownBlock)).not.toMatch(/[<>]/);
      }
    }
  });

  it("pages with Previous and Next buttons that name the page they open", () => {
    const record = permissionRecord({ input: { command: "&".repeat(1_000_000) } });
    const count = inputPageCount(record);
    expect(buttons(inputModal(record, 0))).toEqual([
      { blockId: "page_next", action_id: Action.viewPage, text: "Next", value: encodeButton({ r: record.id, p: 1 }) },
    ]);
    expect(buttons(inputModal(record, 1)).map((b) => [b.text, b.value])).toEqual([
      ["Previous", encodeButton({ r: record.id, p: 0 })],
      ["Next", encodeButton({ r: record.id, p: 2 })],
    ]);
    expect(buttons(inputModal(record, count - 1)).map((b) => b.text)).toEqual(["Previous"]);
    expect(inputModal(record, 1).title).toEqual({ type: "plain_text", text: `Full input 2/${count}` });
  });

  it("shows the last page for a page number past the end", () => {
    const record = permissionRecord({ input: { command: "&".repeat(1_000_000) } });
    const count = inputPageCount(record);
    expect(inputModal(record, 10_000)).toEqual(inputModal(record, count - 1));
    expect(inputModal(record, -3)).toEqual(inputModal(record, 0));
  });

  it("shows a 10,000-key object and a deeply nested input in full", () => {
    const wide = Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`key${i}`, `<v${i}>`]));
    const wideRecord = stepGateRecord({ input: wide });
    expect(shownInput(wideRecord)).toBe(JSON.stringify(wide, null, 2));
    const deep = JSON.parse(`{"a":${"[".repeat(50_000)}"x"${"]".repeat(50_000)}}`) as Record<string, unknown>;
    const deepRecord = stepGateRecord({ input: deep });
    expect(shownInput(deepRecord)).toBe(prettyJson(deep));
    expect(checkViewLimits(inputModal(deepRecord, 0))).toEqual([]);
  });

  it("shows the full questions of a question request, and the agent's long context", () => {
    const context = `Context ${hostile}`.repeat(1500).slice(0, 20_000);
    const record = askRecord({ context });
    expect(shownInput(record)).toBe(JSON.stringify(record.body.questions, null, 2));
    const contextText = allPages(record)
      .flat()
      .filter((b) => /^context_\d+$/.test(b.block_id ?? ""))
      .map((b) => unescapeMrkdwn(textOf(b)))
      .join("");
    expect(contextText).toBe(context);
  });
});
