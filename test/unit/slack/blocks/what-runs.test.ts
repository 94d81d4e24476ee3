/**
 * What runs is what is shown (issue 16 item 1), written as the attacks: a
 * command that reads one way and runs another, one padded with blank lines
 * so its last line is out of sight, and agent text dressed as the relay's
 * own status lines. Each is checked on the Block Kit the relay posts.
 */
import { describe, expect, it } from "vitest";
import { editModal, endedMessage, requestMessage, type SlackMessage } from "../../../../src/slack/blocks/index.js";
import { answered, askRecord, interactiveRecord, permissionRecord, stepGateRecord } from "../../../fixtures/records.js";
import { blocksOf, decodeCode, hiddenCharacters, sectionText } from "../../../helpers/blocks.js";
import { checkMessageLimits } from "../../../helpers/block-kit-limits.js";

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

  /** Every mrkdwn text in `value` (buttons are plain text, one label each, and start no line of the message). */
  const mrkdwn = (value: unknown): string[] => {
    if (Array.isArray(value)) return value.flatMap(mrkdwn);
    if (typeof value !== "object" || value === null) return [];
    const { type, text } = value as { type?: unknown; text?: unknown };
    if (type === "mrkdwn" && typeof text === "string") return [text];
    return Object.values(value).flatMap(mrkdwn);
  };
  /** Lines of the message's blocks that carry `marker` but do not start inside a quote. */
  const unquoted = (message: SlackMessage, marker: string): string[] =>
    mrkdwn(message.blocks)
      .flatMap((text) => text.split("\n"))
      .filter((line) => line.includes(marker) && !line.startsWith("> "));
  const status = "✅ Allowed by @alice";
  const sneaky = (field: string) => `${field}\n${status}\n${fake}`;

  it("quotes every line of an AskUserQuestion's question, header, option labels and descriptions, under “The agent asks:”", () => {
    for (const multiSelect of [false, true]) {
      const question = {
        question: sneaky("Which database?"),
        header: sneaky("DB"),
        multiSelect,
        options: [
          { label: sneaky("PostgreSQL"), description: sneaky("Relational") },
          { label: status, description: fake },
        ],
      };
      const record = askRecord({ questions: [question] });
      const message = requestMessage(record);
      expect(unquoted(message, "Allowed by")).toEqual([]);
      expect(unquoted(message, "Approvals 1 of 2")).toEqual([]);
      expect(sectionText(message, "q0")).toMatch(
        /^_The agent asks:_\n> \*DB\*\n> ✅ Allowed by @alice\n> \*Appro…\n> Which database\?\n> ✅ Allowed by @alice\n> \*Approvals/,
      );
      expect(sectionText(message, "q0_o0")).toBe(`> *PostgreSQL*\n> ${status}\n> ${fake}\n> Relational\n> ${status}\n> ${fake}`);
      expect(sectionText(message, "q0_o1")).toBe(`> *${status}*\n> ${fake}`);
      expect(checkMessageLimits(message)).toEqual([]);
      const ended = endedMessage(answered(record, { answers: { [question.question]: "PostgreSQL" } }));
      expect(unquoted(ended, "Allowed by")).toEqual([]);
    }
  });

  it("quotes every line of an interactive question, its options, format and default", () => {
    const record = interactiveRecord({
      questions: [
        { id: "v", question: sneaky("Version?"), type: "text", pattern: sneaky("\\d+"), default: sneaky("1.2") },
        { id: "r", question: status, type: "multiChoice", options: [sneaky("eu"), status], default: [status] },
        { id: "c", question: fake, type: "confirm", default: false },
      ],
    });
    const message = requestMessage(record);
    expect(unquoted(message, "Allowed by")).toEqual([]);
    expect(unquoted(message, "Approvals 1 of 2")).toEqual([]);
    expect(sectionText(message, "q0")).toBe(
      `_The agent asks:_\n> *Version?*\n> ${status}\n> ${fake}\n_Type an answer_\n` +
        `Format:\n> \\d+\n> ${status}\n> ${fake}\nDefault:\n> 1.2\n> ${status}\n> ${fake}`,
    );
    expect(sectionText(message, "q1")).toBe(
      `_The agent asks:_\n> *${status}*\n_Choose any_\n> • eu\n> ${status}\n> ${fake}\n> • ${status}\nDefault:\n> ${status}`,
    );
    expect(checkMessageLimits(message)).toEqual([]);
    const ended = endedMessage(answered(record, { answers: { v: sneaky("1.2"), r: [status] } }));
    expect(unquoted(ended, "Allowed by")).toEqual([]);
    expect(sectionText(ended, "outcome")).toMatch(
      /\n> \*Version\?\n> ✅ Allowed by @alice\n> \*Approvals 1 of 2:\* @alice ✅\*: 1\.2\n> ✅ Allowed by @alice\n/,
    );
    const oneTap = requestMessage(interactiveRecord({ questions: [{ id: "go", question: sneaky("Deploy?"), type: "choice", options: [status, "no"] }] }));
    expect(unquoted(oneTap, "Allowed by")).toEqual([]);
  });

  it("quotes the context of a question request too", () => {
    const message = requestMessage(interactiveRecord({ context: fake, questions: [{ id: "go", question: "Deploy?", type: "confirm" }] }));
    expect(sectionText(message, "context")).toBe(`_The agent says:_\n> ${fake}`);
  });
});
