/**
 * A tool call as people read it: Bash shows its command, Write the path and
 * a preview of the content, Edit a diff, anything else pretty JSON. Inputs
 * that carry more than the usual fields show the rest too, so nothing that
 * changes what the tool does (`replace_all`, a sandbox flag) is hidden.
 */
import type { KnownBlock } from "@slack/types";
import type { JsonObject } from "../../protocol/request-body.js";
import type { Fitter, Leaf } from "./budget.js";
import { section } from "./elements.js";
import { prettyJson } from "./json.js";

interface ToolShape {
  /** What the code block after the tool line shows. */
  label: string;
  code: string;
  /** Bash's own description of the command. */
  note?: string;
  path?: string;
  /** Input fields the rendering above does not show. */
  rest?: JsonObject;
}

function omit(input: JsonObject, keys: string[]): JsonObject | undefined {
  const rest = Object.fromEntries(Object.entries(input).filter(([key]) => !keys.includes(key)));
  return Object.keys(rest).length > 0 ? rest : undefined;
}

function diff(before: string, after: string): string {
  const lines = (text: string, sign: string) => (text === "" ? [] : text.split("\n").map((line) => `${sign} ${line}`));
  return [...lines(before, "-"), ...lines(after, "+")].join("\n");
}

/** How to show a tool call; `friendly` false always gives the JSON (the step gate shows parameters as they are). */
export function toolShape(toolName: string, input: JsonObject, friendly: boolean): ToolShape {
  const str = (key: string) => (typeof input[key] === "string" ? (input[key] as string) : undefined);
  const path = str("file_path");
  if (friendly && toolName === "Bash" && str("command") !== undefined) {
    const shape: ToolShape = { label: "Command", code: str("command")!, rest: omit(input, ["command", "description"]) };
    if (str("description")) shape.note = str("description")!;
    return shape;
  }
  if (friendly && toolName === "Write" && path && str("content") !== undefined) {
    return { label: "Content", code: str("content")!, path, rest: omit(input, ["file_path", "content"]) };
  }
  const before = str("old_string");
  const after = str("new_string");
  if (friendly && toolName === "Edit" && path && before !== undefined && after !== undefined) {
    return { label: "Changes", code: diff(before, after), path, rest: omit(input, ["file_path", "old_string", "new_string"]) };
  }
  return { label: friendly ? "Input" : "Parameters", code: prettyJson(input) };
}

export function toolLeaves(shape: ToolShape): Leaf[] {
  const leaves: Leaf[] = [{ key: "tool_code", raw: shape.code, encoding: "code", weight: 10, cap: Number.POSITIVE_INFINITY }];
  if (shape.note) leaves.push({ key: "tool_note", raw: shape.note, encoding: "text", weight: 1, cap: 800 });
  if (shape.path) leaves.push({ key: "tool_path", raw: shape.path, encoding: "text", weight: 1, cap: 600 });
  if (shape.rest) {
    leaves.push({ key: "tool_rest", raw: prettyJson(shape.rest), encoding: "code", weight: 2, cap: 1500, perChunk: 1400 });
  }
  return leaves;
}

/** `toolLabel` is escaped already (the tool's name, or its display name). */
export function toolBlocks(shape: ToolShape, toolLabel: string, fit: Fitter): KnownBlock[] {
  let text = `*Tool:* ${toolLabel}`;
  if (shape.note) text += `\n${fit.text("tool_note")}`;
  if (shape.path) text += `\n*File:* ${fit.text("tool_path")}`;
  text += `\n*${shape.label}:*`;
  const blocks: KnownBlock[] = [section("tool", text)];
  fit.code("tool_code").forEach((part, index) => blocks.push(section(`tool_code_${index}`, part)));
  if (shape.rest) blocks.push(section("tool_rest", `*Other parameters:*\n${fit.code("tool_rest")[0] ?? ""}`));
  return blocks;
}
