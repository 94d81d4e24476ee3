/**
 * Claude Code's file tools as diffs, in permission requests and step gates
 * alike: Edit as its old text → new text, MultiEdit as each of its edits in
 * order under a line naming it, Write as its content, every line added.
 *
 * Whether a Write makes a new file: Claude Code does not say before the tool
 * runs. Its input is `file_path` and `content` only, in the PreToolUse and
 * PermissionRequest hook inputs and in the Agent SDK's canUseTool alike; only
 * the tool's result (PostToolUse's `tool_response`, the SDK's FileWriteOutput
 * `type: "create" | "update"`) tells, too late for the person asked. So a
 * Write is shown as the whole file and says it may replace one. An Edit (or a
 * MultiEdit's first edit) with an empty old text is how Claude Code creates a
 * file, and it refuses one on a file with content before it asks anyone, so
 * there the input itself tells, and the message says "New file".
 */
import { z } from "zod";
import type { JsonObject } from "../../protocol/request-body.js";
import { compactJson } from "./json.js";
import { DiffText } from "./line-diff.js";

/** What tool-view shows for a file tool. */
export interface FileShape {
  label: string;
  /** The diff, built only as far as a message could show it. */
  code: string;
  /** Characters of the diff past `code`, counted but never built. */
  hidden: number;
  path: string;
  /** Our own words about the change (mrkdwn, no agent text), shown under the file. */
  notice?: string;
  /** Input fields the diff does not show. */
  rest?: JsonObject;
}

const EditInput = z.looseObject({ file_path: z.string(), old_string: z.string(), new_string: z.string() });
const OneEdit = z.looseObject({ old_string: z.string(), new_string: z.string() });
const MultiEditInput = z.looseObject({ file_path: z.string(), edits: z.array(OneEdit).min(1) });
const WriteInput = z.looseObject({ file_path: z.string(), content: z.string() });

export const NEW_FILE = "_New file: the old text is empty, which Claude Code accepts only where there is no file yet (or an empty one)._";
export const WHOLE_FILE = "_The whole file as written: Claude Code does not say whether it exists already, so this may replace it._";
export const NOT_COMPARED = "_Too long to compare line by line: the old text, then the new._";

export function omit(input: JsonObject, keys: string[]): JsonObject | undefined {
  const rest = Object.fromEntries(Object.entries(input).filter(([key]) => !keys.includes(key)));
  return Object.keys(rest).length > 0 ? rest : undefined;
}

/** The diff view of an Edit, MultiEdit or Write, or undefined when the tool is another or its input lacks the usual fields. */
export function fileShape(toolName: string, input: JsonObject): FileShape | undefined {
  switch (toolName) {
    case "Edit":
      return editShape(input);
    case "MultiEdit":
      return multiEditShape(input);
    case "Write":
      return writeShape(input);
    default:
      return undefined;
  }
}

function editShape(input: JsonObject): FileShape | undefined {
  const edit = EditInput.safeParse(input);
  if (!edit.success) return undefined;
  const { file_path: path, old_string: before, new_string: after } = edit.data;
  const diff = new DiffText();
  const compared = diff.diff(before, after);
  const shape = fileOf("Changes", diff, path, omit(input, ["file_path", "old_string", "new_string"]));
  if (before === "") shape.notice = NEW_FILE;
  else if (!compared) shape.notice = NOT_COMPARED;
  return shape;
}

function multiEditShape(input: JsonObject): FileShape | undefined {
  const multi = MultiEditInput.safeParse(input);
  if (!multi.success) return undefined;
  const { file_path: path, edits } = multi.data;
  const diff = new DiffText();
  edits.forEach((edit, index) => {
    const flags = [`Edit ${index + 1} of ${edits.length}`];
    if (edit.replace_all === true) flags.push("replace all");
    const extra = omit(edit, ["old_string", "new_string", ...(typeof edit.replace_all === "boolean" ? ["replace_all"] : [])]);
    if (extra) flags.push(`also ${compactJson(extra)}`);
    diff.diff(
      edit.old_string,
      edit.new_string,
      (compared) => `── ${[...flags, ...(compared ? [] : ["old text, then new (too long to compare)"])].join(" · ")} ──`,
    );
  });
  const shape = fileOf("Changes", diff, path, omit(input, ["file_path", "edits"]));
  if (edits[0]!.old_string === "") shape.notice = NEW_FILE;
  return shape;
}

function writeShape(input: JsonObject): FileShape | undefined {
  const write = WriteInput.safeParse(input);
  if (!write.success) return undefined;
  const diff = new DiffText();
  diff.diff("", write.data.content);
  const shape = fileOf("Content", diff, write.data.file_path, omit(input, ["file_path", "content"]));
  shape.notice = WHOLE_FILE;
  return shape;
}

function fileOf(label: string, diff: DiffText, path: string, rest: JsonObject | undefined): FileShape {
  const shape: FileShape = { label, code: diff.text, hidden: diff.hidden, path };
  if (rest) shape.rest = rest;
  return shape;
}
