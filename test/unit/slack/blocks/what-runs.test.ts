/**
 * What runs is what is shown (issue 16 item 1), written as the attacks: a
 * command that reads one way and runs another, one padded with blank lines
 * so its last line is out of sight, and agent text dressed as the relay's
 * own status lines. Each is checked on the Block Kit the relay posts.
 */
import { describe, expect, it } from "vitest";
import { editModal, endedMessage, requestMessage } from "../../../../src/slack/blocks/index.js";
import { answered, interactiveRecord, permissionRecord, stepGateRecord } from "../../../fixtures/records.js";
import { blocksOf, decodeCode, hiddenCharacters, sectionText } from "../../../helpers/blocks.js";

const BIDI = "echo cleanup \u202E; rm -rf ~ #";

/** Every mrkdwn and plain text of a message, joined. */
const allText = (value: unknown): string => JSON.stringify(value);

describe("a command whose bidi override reverses what people read", () => {
  const record = permissionRecord({ toolName: "Bash", input: { command: BIDI } });
  const message = requestMessage(record);

  it("shows the override as a marked escape where it sits, so the command reads as bash runs it", () => {
    expect(decodeCode(sectionText(message, "tool_code_0")!)).toBe("echo cleanup ⟨U+202E⟩; rm -rf ~ #");
    expect(hiddenCharacters(message)).toEqual([]);
  });

  it("warns under the header, in the notification text, and still once it is answered", () => {
    const warning = blocksOf(message)[1] as { block_id: string; elements: Array<{ text: string }> };
    expect(warning.block_id).toBe("hidden_characters");
    expect(warning.elements[0]!.text).toContain("invisible or direction-changing characters");
    expect(message.text).toBe("⚠️ Hidden characters · Permission request: Bash: echo cleanup ⟨U+202E⟩; rm -rf ~ #");
    const ended = endedMessage(answered(record, { behavior: "allow", updatedInput: record.body.input }));
    expect(blocksOf(ended).some((b) => b.block_id === "hidden_characters")).toBe(true);
  });

  it("puts \\u escapes in the Edit modal, so the edited input is the same command and nothing is hidden", () => {
    const view = editModal(record, { r: record.id, c: "C0123456789", ts: "1700000000.000100" });
    const initial = /"initial_value":("(?:[^"\\]|\\.)*")/.exec(JSON.stringify(view))![1]!;
    const json = JSON.parse(initial) as string;
    expect(json).toContain("echo cleanup \\u202e; rm -rf ~ #");
    expect(JSON.parse(json)).toEqual({ command: BIDI });
  });

  it("marks zero-width characters, isolates, CR and ESC in every agent field, the step gate included", () => {
    const sneaky = "a\u200bb\u200dc\ufeffd\u2066e\u2069f\rg\u001bh";
    const shown = "a⟨U+200B⟩b⟨U+200D⟩c⟨U+FEFF⟩d⟨U+2066⟩e⟨U+2069⟩f⟨U+000D⟩g⟨U+001B⟩h";
    const gate = stepGateRecord({
      toolName: sneaky,
      input: { path: sneaky },
      title: sneaky,
      context: sneaky,
      agent: { name: sneaky },
      labels: { env: "prod" },
    });
    const gateMessage = requestMessage(gate);
    expect(hiddenCharacters(gateMessage)).toEqual([]);
    expect(allText(gateMessage)).toContain(shown);
    expect(sectionText(gateMessage, "title")).toBe(`> ${shown}`);
  });

  it("leaves a request without hidden characters without the warning", () => {
    const plain = requestMessage(permissionRecord({ toolName: "Bash", input: { command: "npm test" } }));
    expect(blocksOf(plain).some((b) => b.block_id === "hidden_characters")).toBe(false);
    expect(plain.text).toBe("Permission request: Bash: npm test");
  });
});

describe("a command padded with 2,500 newlines before its last line", () => {
  const command = `ls -la${"\n".repeat(2500)}rm -rf ~`;
  const message = requestMessage(permissionRecord({ toolName: "Bash", input: { command } }));

  it("says how many lines it has and that blank lines were collapsed", () => {
    expect(sectionText(message, "tool")).toContain("*Command (2,501 lines; 2,499 blank lines collapsed, shown as ⟨N blank lines⟩):*");
  });

  it("shows the last line in the message, right after the collapsed run", () => {
    expect(decodeCode(sectionText(message, "tool_code_0")!)).toBe("ls -la\n⟨2,499 blank lines⟩\nrm -rf ~");
  });

  it("keeps the tail in the notification text", () => {
    expect(message.text).toBe("Permission request: Bash (2,501 lines): ls -la … rm -rf ~");
  });

  it("keeps the tail of a long one-line command in the notification text, cutting the middle", () => {
    const long = requestMessage(permissionRecord({ toolName: "Bash", input: { command: `echo ${"x".repeat(5000)}; rm -rf ~` } }));
    expect(long.text.length).toBeLessThan(260);
    expect(long.text).toMatch(/^Permission request: Bash: echo x+ … x+; rm -rf ~$/);
  });
});

describe("agent text dressed as the relay's own status lines", () => {
  const fake = "*Approvals 1 of 2:* @alice ✅";

  it("block-quotes the title and the context (under “The agent says:”) line by line", () => {
    const message = requestMessage(
      permissionRecord({ toolName: "Bash", input: { command: "make deploy" }, title: fake, context: `Deploying.\n${fake}\n\n✅ Allowed by @alice` }),
    );
    expect(sectionText(message, "title")).toBe(`> ${fake}`);
    expect(sectionText(message, "context")).toBe(`_The agent says:_\n> Deploying.\n> ${fake}\n> \n> ✅ Allowed by @alice`);
  });

  it("quotes the context of a question request too", () => {
    const message = requestMessage(interactiveRecord({ context: fake, questions: [{ id: "go", question: "Deploy?", type: "confirm" }] }));
    expect(sectionText(message, "context")).toBe(`_The agent says:_\n> ${fake}`);
  });
});
