/**
 * The small modals a permission or a question opens: Edit… (the tool input
 * as JSON), Deny with reason…, and Other… (free text for one AskUserQuestion
 * question). Block and action ids are the listeners' contract (src/slack/ids.ts).
 */
import type { InputBlock, KnownBlock, ModalView, PlainTextInput } from "@slack/types";
import type { RequestRecord } from "../../requests/model.js";
import { encodeMetadata, Field, View, type ModalMetadata } from "../ids.js";
import { plain, section } from "./elements.js";
import { LIMITS } from "./limit-values.js";
import { alwaysAllowSections, editableJson } from "./permission.js";
import { cutShort } from "./text.js";

export interface ModalParts {
  callbackId: string;
  /** At most 24 characters. */
  title: string;
  blocks: KnownBlock[];
  submit?: string;
  close?: string;
  metadata?: ModalMetadata;
}

export function modal({ callbackId, title, blocks, submit, close = "Cancel", metadata }: ModalParts): ModalView {
  const view: ModalView = { type: "modal", callback_id: callbackId, title: plain(title), close: plain(close), blocks };
  if (submit) view.submit = plain(submit);
  if (metadata) view.private_metadata = encodeMetadata(metadata);
  return view;
}

/** A modal that only explains why there is nothing to fill in. */
export function noticeModal(callbackId: string, title: string, text: string, metadata?: ModalMetadata): ModalView {
  const parts: ModalParts = { callbackId, title, blocks: [section("notice", text)], close: "Close" };
  if (metadata) parts.metadata = metadata;
  return modal(parts);
}

export interface TextInputOptions {
  multiline: boolean;
  optional: boolean;
  /** Raw text the person edits (not escaped: it is a value, not a text object). */
  initialValue?: string;
  /** Escaped. */
  hint?: string;
}

/** An input block with a plain_text_input; dispatch_action is off (nothing happens until Submit). */
export function textInput(field: { block: string; action: string }, label: string, options: TextInputOptions): InputBlock {
  const element: PlainTextInput = { type: "plain_text_input", action_id: field.action, multiline: options.multiline };
  if (options.initialValue !== undefined) element.initial_value = options.initialValue;
  const block: InputBlock = { type: "input", block_id: field.block, dispatch_action: false, optional: options.optional, label: plain(label), element };
  if (options.hint) block.hint = plain(options.hint);
  return block;
}

function toolName(record: RequestRecord): string {
  return "toolName" in record.body ? cutShort(record.body.toolName, 200) : "this request";
}

export function editModal(record: RequestRecord, meta: ModalMetadata): ModalView {
  const json = editableJson(record);
  if (json === undefined) {
    return noticeModal(View.edit, "Edit tool input", "This input is too large to edit in Slack. Allow or deny it as it is.", meta);
  }
  const input = textInput(Field.editJson, "Tool input (JSON)", {
    multiline: true,
    optional: false,
    initialValue: json,
  });
  return modal({
    callbackId: View.edit,
    title: "Edit tool input",
    submit: "Allow",
    metadata: meta,
    blocks: [section("intro", `Change the input of *${toolName(record)}*, then *Allow*. The agent runs the tool with the edited input.`), input],
  });
}

export function denyReasonModal(record: RequestRecord, meta: ModalMetadata): ModalView {
  const interrupt: InputBlock = {
    type: "input",
    block_id: Field.denyInterrupt.block,
    dispatch_action: false,
    optional: true,
    label: plain("Stop the agent"),
    element: {
      type: "checkboxes",
      action_id: Field.denyInterrupt.action,
      options: [{ text: plain("Also stop the agent"), value: "interrupt" }],
    },
  };
  return modal({
    callbackId: View.denyReason,
    title: "Deny with reason",
    submit: "Deny",
    metadata: meta,
    blocks: [
      section("intro", `Deny *${toolName(record)}*.`),
      textInput(Field.denyReason, "Reason (shown to the agent)", { multiline: true, optional: true }),
      interrupt,
    ],
  });
}

/** Free text for question `questionIndex`; the metadata carries that index (q) back to the listener. */
export function otherModal(record: RequestRecord, questionIndex: number, meta: ModalMetadata): ModalView {
  const question = record.body.kind === "ask_user_question" ? record.body.questions[questionIndex] : undefined;
  const metadata = { ...meta, q: questionIndex };
  if (!question) return noticeModal(View.other, "Other answer", "This question is not part of the request.", metadata);
  const label = cutShort(question.question, LIMITS.inputLabel);
  return modal({
    callbackId: View.other,
    title: "Other answer",
    submit: "Answer",
    metadata,
    blocks: [textInput(Field.otherText, label, { multiline: true, optional: false })],
  });
}

/** Always allow, when the message cannot list every rule: the rules in full, and a button that saves exactly these. */
export function alwaysAllowModal(record: RequestRecord, meta: ModalMetadata): ModalView {
  const sections = alwaysAllowSections(record);
  if (sections.length === 0) return noticeModal(View.alwaysAllow, "Always allow", "This request has no rule to save.", meta);
  return modal({
    callbackId: View.alwaysAllow,
    title: "Always allow",
    submit: "Always allow",
    metadata: meta,
    blocks: [
      section("intro", `Allow *${toolName(record)}* and save these rules, every one shown in full:`),
      ...sections.map((text, i) => section(`rule_${i}`, text)),
    ],
  });
}
