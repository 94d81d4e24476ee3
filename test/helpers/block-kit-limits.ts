/**
 * Slack's Block Kit limits as checkers for tests: every limit a message,
 * modal or Home tab breaks (text lengths, block, element and option counts,
 * block_id and action_id uniqueness, confirm dialogs, the 11,000 characters
 * of a whole message), listed with a path, so a test proves the builders stay
 * inside them for huge and hostile input and the Slack stand-in refuses what
 * Slack would. They read the JSON as unknown data, so they also work on
 * deliberately broken messages. The limit values themselves are the
 * builders' (src/slack/blocks/limit-values.ts).
 */
import type { View } from "@slack/types";
import { LIMITS, textObjectsLength, type SlackMessage } from "../../src/slack/blocks/limits.js";
import { checkBlock, type Problems } from "./block-kit-checks.js";

/** Every Slack limit the message breaks; empty when it may be posted. */
export function checkMessageLimits(message: SlackMessage): string[] {
  const problems: Problems = [];
  if (message.text.length === 0) problems.push("text: empty");
  if (message.text.length > LIMITS.fallbackText) {
    problems.push(`text: ${message.text.length} characters (max ${LIMITS.fallbackText})`);
  }
  if (message.blocks.length > LIMITS.messageBlocks) {
    problems.push(`blocks: ${message.blocks.length} blocks (max ${LIMITS.messageBlocks})`);
  }
  checkBlocks(message.blocks, problems);
  const total = message.text.length + textObjectsLength(message.blocks);
  if (total > LIMITS.messageText) problems.push(`message: ${total} characters of text (max ${LIMITS.messageText})`);
  return problems;
}

/** Every Slack limit the modal or Home tab view breaks; empty when it may be opened or published. */
export function checkViewLimits(view: View): string[] {
  const problems: Problems = [];
  if (view.type !== "modal" && view.type !== "home") problems.push(`type: ${view.type} is not a modal or a Home tab`);
  if (view.blocks.length > LIMITS.viewBlocks) problems.push(`blocks: ${view.blocks.length} blocks (max ${LIMITS.viewBlocks})`);
  if ((view.private_metadata ?? "").length > LIMITS.privateMetadata) {
    problems.push(`private_metadata: ${view.private_metadata?.length} characters (max ${LIMITS.privateMetadata})`);
  }
  if ((view.callback_id ?? "").length > LIMITS.callbackId) problems.push(`callback_id: longer than ${LIMITS.callbackId}`);
  if (view.type === "modal") {
    checkViewText("title", view.title?.text, true, problems);
    checkViewText("submit", view.submit?.text, false, problems);
    checkViewText("close", view.close?.text, false, problems);
    const hasInput = view.blocks.some((block) => block.type === "input");
    if (hasInput && !view.submit) problems.push("submit: required when the modal has input blocks");
  }
  checkBlocks(view.blocks, problems);
  return problems;
}

function checkViewText(path: string, text: string | undefined, required: boolean, problems: Problems): void {
  if (text === undefined) {
    if (required) problems.push(`${path}: missing`);
    return;
  }
  if (text.length === 0) problems.push(`${path}: empty`);
  if (text.length > LIMITS.viewTitle) problems.push(`${path}: ${text.length} characters (max ${LIMITS.viewTitle})`);
}

function checkBlocks(blocks: readonly unknown[], problems: Problems): void {
  const ids = new Set<string>();
  blocks.forEach((block, index) => checkBlock(block, `blocks[${index}]`, ids, problems));
}
