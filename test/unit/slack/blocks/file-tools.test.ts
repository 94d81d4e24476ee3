import type { KnownBlock } from "@slack/types";
import { describe, expect, it } from "vitest";
import { inputModal, inputPageCount, requestMessage, type SlackMessage } from "../../../../src/slack/blocks/index.js";
import { checkMessageLimits } from "../../../helpers/block-kit-limits.js";
import { NEW_FILE, NOT_COMPARED, WHOLE_FILE } from "../../../../src/slack/blocks/file-tools.js";
import type { RequestRecord } from "../../../../src/requests/model.js";
import type { JsonObject } from "../../../../src/protocol/request-body.js";
import { Action, encodeButton } from "../../../../src/slack/ids.js";
import { permissionRecord, stepGateRecord } from "../../../fixtures/records.js";
import { buttons, decodeCode, sectionText, unescapedMarkup } from "../../../helpers/blocks.js";

const KINDS: Array<[string, (toolName: string, input: JsonObject) => RequestRecord]> = [
  ["permission request", (toolName, input) => permissionRecord({ toolName, input })],
  ["step gate", (toolName, input) => stepGateRecord({ toolName, input })],
];

/** The code the message shows, across its sections, unescaped (without the note that ends a cut one). */
function shownCode(message: SlackMessage): string {
  return message.blocks
    .filter((b) => /^tool_code_\d+$/.test(b.block_id ?? ""))
    .map((b) => decodeCode(sectionText(message, b.block_id!)!.replace(/\n… _\(\d+ more characters\)_$/, "")))
    .join("");
}

const edit = { file_path: "/src/a.ts", old_string: "const a = 1;\nconst b = 2;\n", new_string: "const a = 1;\nconst b = 3;\n", replace_all: true };
const multiEdit = {
  file_path: "/src/a.ts",
  edits: [
    { old_string: "let x = 1;", new_string: "let x = 2;" },
    { old_string: "foo", new_string: "bar", replace_all: true, note: "<!channel>" },
  ],
  dry_run: false,
};
const write = { file_path: "/src/new.ts", content: "export const a = 1;\nexport const b = 2;\n", mode: "0644" };

describe.each(KINDS)("file tools in a %s", (kind, make) => {
  const header = kind === "permission request" ? "Permission request" : "Proposed action";

  it("shows an Edit as a diff of old_string and new_string, and replace_all among the other parameters", () => {
    const message = requestMessage(make("Edit", edit));
    expect(sectionText(message, "tool")).toBe("*Tool:* Edit\n*File:* /src/a.ts\n*Changes:*");
    expect(shownCode(message)).toBe("  const a = 1;\n- const b = 2;\n+ const b = 3;");
    expect(sectionText(message, "tool_rest")).toBe('*Other parameters:*\n```{\n  "replace_all": true\n}```');
    expect(message.text).toBe(`${header}: Edit: /src/a.ts`);
    expect(checkMessageLimits(message)).toEqual([]);
  });

  it("shows each edit of a MultiEdit in order under a line naming it, with its flags and other fields", () => {
    const message = requestMessage(make("MultiEdit", multiEdit));
    expect(sectionText(message, "tool")).toBe("*Tool:* MultiEdit\n*File:* /src/a.ts\n*Changes:*");
    expect(shownCode(message)).toBe(
      ["── Edit 1 of 2 ──", "- let x = 1;", "+ let x = 2;", '── Edit 2 of 2 · replace all · also {"note":"<!channel>"} ──', "- foo", "+ bar"].join("\n"),
    );
    expect(sectionText(message, "tool_rest")).toBe('*Other parameters:*\n```{\n  "dry_run": false\n}```');
    expect(unescapedMarkup(message)).toEqual([]);
  });

  it("shows a Write as its content, every line added, and says it writes the whole file", () => {
    const message = requestMessage(make("Write", write));
    expect(sectionText(message, "tool")).toBe(`*Tool:* Write\n*File:* /src/new.ts\n${WHOLE_FILE}\n*Content:*`);
    expect(shownCode(message)).toBe("+ export const a = 1;\n+ export const b = 2;");
    expect(sectionText(message, "tool_rest")).toBe('*Other parameters:*\n```{\n  "mode": "0644"\n}```');
    expect(message.text).toBe(`${header}: Write: /src/new.ts`);
    expect(JSON.stringify(message)).not.toContain("New file");
  });

  it("says New file where the input tells it: an Edit, or a MultiEdit's first edit, with an empty old text", () => {
    const created = requestMessage(make("Edit", { file_path: "/src/b.ts", old_string: "", new_string: "x\n" }));
    expect(sectionText(created, "tool")).toBe(`*Tool:* Edit\n*File:* /src/b.ts\n${NEW_FILE}\n*Changes:*`);
    expect(shownCode(created)).toBe("+ x");
    const multi = requestMessage(make("MultiEdit", { file_path: "/src/b.ts", edits: [{ old_string: "", new_string: "x\n" }] }));
    expect(sectionText(multi, "tool")).toContain(NEW_FILE);
    expect(sectionText(requestMessage(make("Edit", edit)), "tool")).not.toContain("New file");
  });

  it("falls back to the JSON when a MultiEdit's edits lack their usual fields", () => {
    const input = { file_path: "/src/a.ts", edits: [{ old_string: "a" }] };
    const message = requestMessage(make("MultiEdit", input));
    expect(sectionText(message, "tool")).toMatch(/\*(Input|Parameters):\*$/);
    expect(shownCode(message)).toBe(JSON.stringify(input, null, 2));
  });

  it("cuts a long diff visibly at Slack's limits and offers the full input, which gives back the whole JSON", () => {
    const content = Array.from({ length: 5000 }, (_, i) => `line ${i} <b> & \`\`\``).join("\n");
    const record = make("Write", { file_path: "/big.txt", content });
    const message = requestMessage(record);
    const codes = message.blocks.filter((b) => /^tool_code_\d+$/.test(b.block_id ?? ""));
    const note = /\n… _\((\d+) more characters\)_$/.exec(sectionText(message, codes.at(-1)!.block_id!)!);
    const diff = content
      .split("\n")
      .map((line) => `+ ${line}`)
      .join("\n");
    expect(diff.startsWith(shownCode(message))).toBe(true);
    expect(shownCode(message).length + Number(note?.[1])).toBe(diff.length);
    expect(buttons(message).find((b) => b.action_id === Action.viewInput)).toMatchObject({
      blockId: "full_input",
      text: "View full input",
      value: encodeButton({ r: record.id, p: 0 }),
    });
    expect(checkMessageLimits(message)).toEqual([]);
    const pages = Array.from({ length: inputPageCount(record) }, (_, page) => inputModal(record, page).blocks as KnownBlock[]);
    const shown = pages
      .flat()
      .filter((b) => b.block_id?.startsWith("input_"))
      .map((b) => decodeCode((b as { text: { text: string } }).text.text))
      .join("");
    expect(shown).toBe(JSON.stringify(record.body.kind === "permission" || record.body.kind === "step_gate" ? record.body.input : null, null, 2));
  });

  it("escapes agent markup and breaks backtick runs inside the diff, so nothing closes the code block", () => {
    const hostile = { file_path: "<!channel>.ts", old_string: "```\n<@U123>\n", new_string: "``` *bold* ```\n<http://evil.example|click> & done\n" };
    const message = requestMessage(make("Edit", hostile));
    expect(unescapedMarkup(message)).toEqual([]);
    const code = sectionText(message, "tool_code_0")!;
    expect(code.slice(3, -3)).not.toContain("``");
    expect(decodeCode(code)).toBe("- ```\n- <@U123>\n+ ``` *bold* ```\n+ <http://evil.example|click> & done");
    expect(sectionText(message, "tool")).toContain("*File:* &lt;!channel&gt;.ts");
  });

  it("renders huge Edit, MultiEdit and Write inputs within a time bound, falling back to the old text, then the new", () => {
    const lines = (tag: string, n: number) => Array.from({ length: n }, (_, i) => `${tag} ${i * 7919}`).join("\n");
    const bigEdit = { file_path: "/a", old_string: lines("old", 40_000), new_string: lines("new", 40_000) };
    const manyEdits = {
      file_path: "/a",
      edits: Array.from({ length: 2000 }, (_, i) => ({ old_string: lines(`o${i}`, 20), new_string: lines(`n${i}`, 20) })),
    };
    const started = performance.now();
    const edited = requestMessage(make("Edit", bigEdit));
    const multi = requestMessage(make("MultiEdit", manyEdits));
    const written = requestMessage(make("Write", { file_path: "/a", content: "x\n".repeat(500_000) }));
    expect(performance.now() - started).toBeLessThan(5000);
    expect(sectionText(edited, "tool")).toContain(NOT_COMPARED);
    expect(shownCode(edited)).toMatch(/^- old 0\n- old 7919\n/);
    expect(shownCode(multi)).toMatch(/^── Edit 1 of 2000 ──\n/);
    expect(shownCode(written)).toMatch(/^\+ x\n\+ x\n/);
    for (const message of [edited, multi, written]) expect(checkMessageLimits(message)).toEqual([]);
  });
});
