import { describe, expect, it } from "vitest";
import { denyReasonModal, editModal, otherModal } from "../../../../src/slack/blocks/index.js";
import { checkViewLimits } from "../../../helpers/block-kit-limits.js";
import { encodeMetadata, Field, View, type ModalMetadata } from "../../../../src/slack/ids.js";
import { askRecord, permissionRecord } from "../../../fixtures/records.js";
import { block } from "../../../helpers/blocks.js";

const meta: ModalMetadata = { r: "req-0001", c: "C0123456789", ts: "1700000000.000100" };
const plain = (text: string) => ({ type: "plain_text", text });
const opt = (text: string, value: string, description?: string) =>
  description === undefined ? { text: plain(text), value } : { text: plain(text), value, description: plain(description) };

describe("Edit… modal", () => {
  it("holds the tool input as pretty JSON in one text box, submitted with Allow", () => {
    const record = permissionRecord({ input: { command: "npm test", note: "<keep raw>" } });
    const view = editModal(record, meta);
    expect(view).toMatchObject({
      type: "modal",
      callback_id: View.edit,
      private_metadata: encodeMetadata(meta),
      title: plain("Edit tool input"),
      submit: plain("Allow"),
      close: plain("Cancel"),
    });
    expect(block(view, Field.editJson.block)).toEqual({
      type: "input",
      block_id: Field.editJson.block,
      dispatch_action: false,
      optional: false,
      label: plain("Tool input (JSON)"),
      element: {
        type: "plain_text_input",
        action_id: Field.editJson.action,
        multiline: true,
        initial_value: JSON.stringify(record.body.input, null, 2),
      },
    });
    expect(checkViewLimits(view)).toEqual([]);
  });

  it("explains instead of offering a text box when the input is too large to edit", () => {
    const view = editModal(permissionRecord({ input: { command: "x".repeat(5000) } }), meta);
    expect(view.submit).toBeUndefined();
    expect(block(view, Field.editJson.block)).toBeUndefined();
    expect(checkViewLimits(view)).toEqual([]);
  });
});

describe("Deny with reason… modal", () => {
  it("asks for an optional reason and an optional stop, submitted with Deny", () => {
    const view = denyReasonModal(permissionRecord(), meta);
    expect(view).toMatchObject({ callback_id: View.denyReason, submit: plain("Deny"), private_metadata: encodeMetadata(meta) });
    expect(block(view, Field.denyReason.block)).toEqual({
      type: "input",
      block_id: Field.denyReason.block,
      dispatch_action: false,
      optional: true,
      label: plain("Reason (shown to the agent)"),
      element: { type: "plain_text_input", action_id: Field.denyReason.action, multiline: true },
    });
    expect(block(view, Field.denyInterrupt.block)).toMatchObject({
      type: "input",
      optional: true,
      dispatch_action: false,
      element: { type: "checkboxes", action_id: Field.denyInterrupt.action, options: [opt("Also stop the agent", "interrupt")] },
    });
    expect(checkViewLimits(view)).toEqual([]);
  });
});

describe("Other… modal", () => {
  it("asks for required free text labelled with the question, and carries the question index", () => {
    const view = otherModal(askRecord(), 0, meta);
    expect(view).toMatchObject({
      callback_id: View.other,
      submit: plain("Answer"),
      private_metadata: encodeMetadata({ ...meta, q: 0 }),
    });
    expect(block(view, Field.otherText.block)).toEqual({
      type: "input",
      block_id: Field.otherText.block,
      dispatch_action: false,
      optional: false,
      label: plain("Which database should the service use?"),
      element: { type: "plain_text_input", action_id: Field.otherText.action, multiline: true },
    });
  });

  it("cuts a long question to the label limit", () => {
    const question = "Q".repeat(5000);
    const record = askRecord({ questions: [{ question, options: [{ label: "a" }, { label: "b" }] }] });
    const view = otherModal(record, 0, meta);
    expect((block(view, Field.otherText.block)?.label as { text: string }).text).toHaveLength(2000);
    expect(checkViewLimits(view)).toEqual([]);
  });

  it("shows a notice for a question the request does not have", () => {
    const view = otherModal(askRecord(), 3, meta);
    expect(view.submit).toBeUndefined();
    expect(checkViewLimits(view)).toEqual([]);
  });
});
