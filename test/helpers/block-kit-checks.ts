/**
 * Per-block and per-element checks behind checkMessageLimits and
 * checkViewLimits (block-kit-limits.ts). Reads blocks as unknown JSON so
 * broken input is reported, never thrown on.
 */
import { LIMITS } from "../../src/slack/blocks/limits.js";

export type Problems = string[];
type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function list(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

function textOf(value: unknown): string | undefined {
  return isObject(value) && typeof value.text === "string" ? value.text : undefined;
}

function checkText(value: unknown, path: string, max: number, problems: Problems, required = true): void {
  if (value === undefined) {
    if (required) problems.push(`${path}: missing`);
    return;
  }
  const text = textOf(value);
  if (text === undefined) return void problems.push(`${path}: not a text object`);
  if (text.length === 0) problems.push(`${path}: empty`);
  if (text.length > max) problems.push(`${path}: ${text.length} characters (max ${max})`);
}

function checkLength(value: unknown, path: string, max: number, problems: Problems): void {
  if (typeof value === "string" && value.length > max) problems.push(`${path}: ${value.length} characters (max ${max})`);
}

export function checkBlock(block: unknown, path: string, ids: Set<string>, problems: Problems): void {
  if (!isObject(block)) return void problems.push(`${path}: not an object`);
  if (typeof block.block_id === "string") {
    if (ids.has(block.block_id)) problems.push(`${path}.block_id: "${block.block_id}" is not unique`);
    ids.add(block.block_id);
    checkLength(block.block_id, `${path}.block_id`, LIMITS.blockId, problems);
  }
  const actionIds = new Set<string>();
  const element = (value: unknown, at: string) => checkElement(value, at, actionIds, problems);
  switch (block.type) {
    case "header":
      return checkText(block.text, `${path}.text`, LIMITS.headerText, problems);
    case "section": {
      const fields = list(block.fields);
      if (block.text === undefined && fields.length === 0) problems.push(`${path}: needs text or fields`);
      checkText(block.text, `${path}.text`, LIMITS.sectionText, problems, false);
      if (fields.length > LIMITS.sectionFields) problems.push(`${path}.fields: ${fields.length} (max ${LIMITS.sectionFields})`);
      fields.forEach((field, i) => checkText(field, `${path}.fields[${i}]`, LIMITS.fieldText, problems));
      if (block.accessory !== undefined) element(block.accessory, `${path}.accessory`);
      return;
    }
    case "context": {
      const elements = list(block.elements);
      if (elements.length === 0 || elements.length > LIMITS.contextElements) {
        problems.push(`${path}.elements: ${elements.length} (1 to ${LIMITS.contextElements})`);
      }
      elements.forEach((item, i) => {
        if (isObject(item) && item.type !== "image") checkText(item, `${path}.elements[${i}]`, LIMITS.contextText, problems);
      });
      return;
    }
    case "actions": {
      const elements = list(block.elements);
      if (elements.length === 0 || elements.length > LIMITS.actionsElements) {
        problems.push(`${path}.elements: ${elements.length} (1 to ${LIMITS.actionsElements})`);
      }
      elements.forEach((item, i) => element(item, `${path}.elements[${i}]`));
      return;
    }
    case "input":
      checkText(block.label, `${path}.label`, LIMITS.inputLabel, problems);
      checkText(block.hint, `${path}.hint`, LIMITS.inputHint, problems, false);
      return element(block.element, `${path}.element`);
    case "divider":
      return;
    default:
      problems.push(`${path}: block type ${String(block.type)} is not checked`);
  }
}

function checkElement(value: unknown, path: string, actionIds: Set<string>, problems: Problems): void {
  if (!isObject(value)) return void problems.push(`${path}: not an object`);
  if (typeof value.action_id === "string") {
    if (actionIds.has(value.action_id)) problems.push(`${path}.action_id: "${value.action_id}" is not unique in its block`);
    actionIds.add(value.action_id);
    checkLength(value.action_id, `${path}.action_id`, LIMITS.actionId, problems);
  }
  if (value.confirm !== undefined) checkConfirm(value.confirm, `${path}.confirm`, problems);
  checkText(value.placeholder, `${path}.placeholder`, LIMITS.placeholder, problems, false);
  switch (value.type) {
    case "button":
      checkText(value.text, `${path}.text`, LIMITS.buttonText, problems);
      return checkLength(value.value, `${path}.value`, LIMITS.buttonValue, problems);
    case "radio_buttons":
    case "checkboxes":
      return checkOptions(value, path, LIMITS.choiceOptions, problems);
    case "static_select":
    case "multi_static_select":
      return checkOptions(value, path, LIMITS.selectOptions, problems);
    case "plain_text_input":
      checkLength(value.initial_value, `${path}.initial_value`, LIMITS.initialValue, problems);
      if (typeof value.max_length === "number" && value.max_length > LIMITS.initialValue) {
        problems.push(`${path}.max_length: ${value.max_length} (max ${LIMITS.initialValue})`);
      }
      return;
    default:
      problems.push(`${path}: element type ${String(value.type)} is not checked`);
  }
}

function checkOptions(element: Json, path: string, max: number, problems: Problems): void {
  const options = list(element.options);
  if (options.length === 0 || options.length > max) problems.push(`${path}.options: ${options.length} (1 to ${max})`);
  const values = new Set<string>();
  options.forEach((option, i) => {
    const at = `${path}.options[${i}]`;
    if (!isObject(option)) return void problems.push(`${at}: not an object`);
    checkText(option.text, `${at}.text`, LIMITS.optionText, problems);
    checkText(option.description, `${at}.description`, LIMITS.optionDescription, problems, false);
    if (typeof option.value !== "string" || option.value.length === 0) problems.push(`${at}.value: missing`);
    else {
      if (values.has(option.value)) problems.push(`${at}.value: "${option.value}" is not unique`);
      values.add(option.value);
    }
    checkLength(option.value, `${at}.value`, LIMITS.optionValue, problems);
  });
  const initial = [element.initial_option, ...list(element.initial_options)].filter((o) => o !== undefined);
  for (const chosen of initial) {
    if (!options.some((option) => JSON.stringify(option) === JSON.stringify(chosen))) {
      problems.push(`${path}: an initial option is not one of the options`);
    }
  }
}

function checkConfirm(value: unknown, path: string, problems: Problems): void {
  if (!isObject(value)) return void problems.push(`${path}: not an object`);
  checkText(value.title, `${path}.title`, LIMITS.confirmTitle, problems, false);
  checkText(value.text, `${path}.text`, LIMITS.confirmText, problems);
  checkText(value.confirm, `${path}.confirm`, LIMITS.confirmButton, problems, false);
  checkText(value.deny, `${path}.deny`, LIMITS.confirmButton, problems, false);
}
