/**
 * A tool call as people read it: Bash shows its command, Edit, MultiEdit and
 * Write a diff of the file (file-tools.ts; in step gates too), anything else
 * pretty JSON. Inputs that carry more than the usual fields show the rest
 * too, so nothing that changes what the tool does (`replace_all`, a sandbox
 * flag) is hidden. A command says how many lines it has, and runs of blank
 * lines are collapsed into one marked line that counts them, so a command
 * padded with blank lines cannot push its last line out of sight.
 */
import type { KnownBlock } from "@slack/types";
import type { JsonObject } from "../../protocol/request-body.js";
import type { Fitter, Leaf } from "./budget.js";
import { section } from "./elements.js";
import { fileShape, omit } from "./file-tools.js";
import { prettyJson } from "./json.js";
import { collapseBlankRuns, commandLabel, lineCount, oneLine } from "./text.js";

interface ToolShape {
  /** What the code block after the tool line shows. */
  label: string;
  code: string;
  /** Characters of the code past `code`, counted but never built (a long diff). */
  hidden?: number;
  /** Bash's own description of the command. */
  note?: string;
  path?: string;
  /** Our own words about the change (mrkdwn, no agent text), shown under the file. */
  notice?: string;
  /** Input fields the rendering above does not show. */
  rest?: JsonObject;
  /** What the call does in a line (raw), for the notification text: the command, or the file. */
  summary?: string;
}

/**
 * How to show a tool call; `friendly` false gives the JSON for every tool but
 * the file tools and Bash (the step gate shows parameters as they are; a diff
 * is exactly what an edit does, and a command shown as it runs, its lines
 * counted and blank runs collapsed, is what Bash runs).
 */
export function toolShape(toolName: string, input: JsonObject, friendly: boolean): ToolShape {
  const file = fileShape(toolName, input);
  if (file) return { ...file, summary: file.path };
  const command = input.command;
  if (toolName === "Bash" && typeof command === "string") {
    const shown = collapseBlankRuns(command);
    // The step gate keeps Bash's description with the other parameters, as the agent sent them.
    const shape: ToolShape = {
      label: commandLabel(command, shown.collapsed),
      code: shown.text,
      rest: omit(input, friendly ? ["command", "description"] : ["command"]),
      summary: command,
    };
    if (friendly && typeof input.description === "string" && input.description) shape.note = input.description;
    return shape;
  }
  return { label: friendly ? "Input" : "Parameters", code: prettyJson(input) };
}

/** The call in one raw line for the notification text: "Bash: npm test", "Bash (3 lines): cd app … npm test", "Edit: /src/a.ts", or the tool's name. */
export function toolSummary(toolName: string, shape: ToolShape): string {
  if (!shape.summary) return toolName;
  const lines = lineCount(shape.summary);
  return `${toolName}${lines > 1 ? ` (${lines.toLocaleString("en-US")} lines)` : ""}: ${oneLine(shape.summary)}`;
}

export function toolLeaves(shape: ToolShape): Leaf[] {
  const code: Leaf = { key: "tool_code", raw: shape.code, encoding: "code", weight: 10, cap: Number.POSITIVE_INFINITY };
  if (shape.hidden) code.hidden = shape.hidden;
  const leaves: Leaf[] = [code];
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
  if (shape.notice) text += `\n${shape.notice}`;
  text += `\n*${shape.label}:*`;
  const blocks: KnownBlock[] = [section("tool", text)];
  fit.code("tool_code").forEach((part, index) => blocks.push(section(`tool_code_${index}`, part)));
  if (shape.rest) blocks.push(section("tool_rest", `*Other parameters:*\n${fit.code("tool_rest")[0] ?? ""}`));
  return blocks;
}
