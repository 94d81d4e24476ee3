/**
 * Small constructors for the Block Kit objects the builders use, so every
 * mrkdwn object is `verbatim` (Slack does not turn bare "@channel", channel
 * names or URLs in agent text into live mentions) and ids are always set.
 * Callers pass text that is already escaped.
 */
import type { ActionsBlock, Button, ConfirmationDialog, ContextBlock, HeaderBlock, MrkdwnElement, PlainTextElement, SectionBlock } from "@slack/types";

export function plain(text: string): PlainTextElement {
  return { type: "plain_text", text };
}

export function mrkdwn(text: string): MrkdwnElement {
  return { type: "mrkdwn", text, verbatim: true };
}

export function header(blockId: string, text: string): HeaderBlock {
  return { type: "header", block_id: blockId, text: plain(text) };
}

export function section(blockId: string, text: string, accessory?: Button): SectionBlock {
  const block: SectionBlock = { type: "section", block_id: blockId, text: mrkdwn(text) };
  if (accessory) block.accessory = accessory;
  return block;
}

export function context(blockId: string, texts: string[]): ContextBlock {
  return { type: "context", block_id: blockId, elements: texts.map(mrkdwn) };
}

export function actions(blockId: string, elements: Button[]): ActionsBlock {
  return { type: "actions", block_id: blockId, elements };
}

export interface ButtonOptions {
  style?: "primary" | "danger";
  confirm?: ConfirmationDialog;
}

export function button(text: string, actionId: string, value: string, options: ButtonOptions = {}): Button {
  const element: Button = { type: "button", action_id: actionId, text: plain(text), value };
  if (options.style) element.style = options.style;
  if (options.confirm) element.confirm = options.confirm;
  return element;
}

export function confirmDialog(title: string, text: string, confirm: string, style?: "primary" | "danger"): ConfirmationDialog {
  const dialog: ConfirmationDialog = { title: plain(title), text: plain(text), confirm: plain(confirm), deny: plain("Cancel") };
  if (style) dialog.style = style;
  return dialog;
}
