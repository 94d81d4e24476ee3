import { describe, expect, it } from "vitest";
import { alwaysAllowModal, canEditInput, requestMessage } from "../../../../src/slack/blocks/index.js";
import { checkMessageLimits } from "../../../helpers/block-kit-limits.js";
import { Action, encodeButton, View } from "../../../../src/slack/ids.js";
import { permissionRecord } from "../../../fixtures/records.js";
import { actionIds, blocksOf, buttons, sectionText, unescapeMrkdwn } from "../../../helpers/blocks.js";

const suggestions = [{ type: "addRules", rules: [{ toolName: "Bash", ruleContent: "npm test:*" }], behavior: "allow", destination: "session" }];
const value = encodeButton({ r: "req-0001" });

describe("permission request message", () => {
  it("shows the request's labels in a small context line under who asks, escaped", () => {
    const message = requestMessage(permissionRecord({ labels: { env: "prod", "team/owner": "<!channel> & *payments*" } }));
    const index = message.blocks.findIndex((b) => b.block_id === "labels");
    expect(message.blocks[index - 1]?.block_id).toBe("requester");
    expect(message.blocks[index]).toEqual({
      type: "context",
      block_id: "labels",
      elements: [{ type: "mrkdwn", verbatim: true, text: "Labels: env=prod, team/owner=&lt;!channel&gt; &amp; *payments*" }],
    });
  });

  it("cuts long label values short in the message and counts the labels past the line's room", () => {
    const labels = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`${i}`.padStart(64, "k"), "v".repeat(256)]));
    const text = JSON.stringify(requestMessage(permissionRecord({ labels })).blocks.find((b) => b.block_id === "labels"));
    expect(text).toContain(`${"k".repeat(63)}0=${"v".repeat(59)}…`);
    expect(text).toMatch(/ and \d+ more"/);
    expect(text.length).toBeLessThan(2000);
  });

  it("shows no labels line when the request has none", () => {
    expect(requestMessage(permissionRecord()).blocks.some((b) => b.block_id === "labels")).toBe(false);
  });

  it("shows a Bash call as its command in a code block, with who asks and every button", () => {
    const message = requestMessage(permissionRecord({ suggestions, context: "Running the *tests* before merging." }));
    expect(message.text).toBe("Permission request: Bash: npm test");
    expect(message.blocks).toEqual([
      { type: "header", block_id: "header", text: { type: "plain_text", text: "Permission request" } },
      {
        type: "context",
        block_id: "requester",
        elements: [
          { type: "mrkdwn", verbatim: true, text: "Requested by *ci-bot*" },
          { type: "mrkdwn", verbatim: true, text: "Agent *claude*" },
          { type: "mrkdwn", verbatim: true, text: "Session sess-1" },
          { type: "mrkdwn", verbatim: true, text: "Expires <!date^1700000600^{date_short_pretty} {time}|2023-11-14 22:23 UTC>" },
        ],
      },
      { type: "section", block_id: "context", text: { type: "mrkdwn", verbatim: true, text: "_The agent says:_\n> Running the *tests* before merging." } },
      { type: "section", block_id: "tool", text: { type: "mrkdwn", verbatim: true, text: "*Tool:* Bash\nRun the unit tests\n*Command:*" } },
      { type: "section", block_id: "tool_code_0", text: { type: "mrkdwn", verbatim: true, text: "```npm test```" } },
      {
        type: "actions",
        block_id: "actions",
        elements: [
          { type: "button", action_id: Action.allow, text: { type: "plain_text", text: "Allow" }, value, style: "primary" },
          { type: "button", action_id: Action.allowForAWhile, text: { type: "plain_text", text: "Allow for 15 min" }, value },
          { type: "button", action_id: Action.alwaysAllow, text: { type: "plain_text", text: "Always allow" }, value },
          { type: "button", action_id: Action.edit, text: { type: "plain_text", text: "Edit…" }, value },
          { type: "button", action_id: Action.deny, text: { type: "plain_text", text: "Deny" }, value, style: "danger" },
          { type: "button", action_id: Action.denyWithReason, text: { type: "plain_text", text: "Deny with reason…" }, value },
          {
            type: "button",
            action_id: Action.denyAndStop,
            text: { type: "plain_text", text: "Deny & stop" },
            value,
            style: "danger",
            confirm: {
              title: { type: "plain_text", text: "Deny and stop the agent?" },
              text: { type: "plain_text", text: "The Bash call is denied and the agent stops its turn." },
              confirm: { type: "plain_text", text: "Deny & stop" },
              deny: { type: "plain_text", text: "Cancel" },
              style: "danger",
            },
          },
        ],
      },
      {
        type: "context",
        block_id: "always_allow",
        elements: [{ type: "mrkdwn", verbatim: true, text: "_Always allow_ also saves: allow Bash(npm test:*) (session)" }],
      },
      {
        type: "actions",
        block_id: "more_time",
        elements: [{ type: "button", action_id: Action.moreTime, text: { type: "plain_text", text: "+30 min" }, value }],
      },
    ]);
    expect(checkMessageLimits(message)).toEqual([]);
  });

  it("offers Always allow only when there are suggestions", () => {
    expect(actionIds(requestMessage(permissionRecord()))).toEqual([
      Action.allow,
      Action.allowForAWhile,
      Action.edit,
      Action.deny,
      Action.denyWithReason,
      Action.denyAndStop,
      Action.moreTime,
    ]);
    expect(actionIds(requestMessage(permissionRecord({ suggestions: [] })))).not.toContain(Action.alwaysAllow);
  });

  it("hides Always allow when suppressAlwaysAllowRule is set", () => {
    const message = requestMessage(permissionRecord({ suggestions, suppressAlwaysAllowRule: true }));
    expect(actionIds(message)).not.toContain(Action.alwaysAllow);
    expect(sectionText(message, "always_allow")).toBeUndefined();
  });

  it("puts a confirm dialog on Allow and Always allow when the agent defaults to No", () => {
    const plainAllow = buttons(requestMessage(permissionRecord({ suggestions })));
    expect(plainAllow.find((b) => b.action_id === Action.allow)?.confirm).toBeUndefined();
    const risky = buttons(requestMessage(permissionRecord({ suggestions, defaultToNo: true })));
    for (const id of [Action.allow, Action.alwaysAllow]) {
      expect(risky.find((b) => b.action_id === id)?.confirm).toMatchObject({
        text: { type: "plain_text", text: expect.stringContaining("suggests answering No to this Bash call") },
        deny: { text: "Cancel" },
      });
    }
  });

  it("hides Edit… when the input's JSON does not fit a text box (3000 characters)", () => {
    const fits = permissionRecord({ input: { command: "x".repeat(2900) } });
    const tooBig = permissionRecord({ input: { command: "x".repeat(3000) } });
    expect(canEditInput(fits)).toBe(true);
    expect(canEditInput(tooBig)).toBe(false);
    expect(actionIds(requestMessage(fits))).toContain(Action.edit);
    expect(actionIds(requestMessage(tooBig))).not.toContain(Action.edit);
    // Text that fits while its JSON does not: the quotes and indent, or the escapes of hidden characters, take it over.
    expect(canEditInput(permissionRecord({ input: { command: "x".repeat(2985) } }))).toBe(false);
    expect(canEditInput(permissionRecord({ input: { command: "\u200b".repeat(450) } }))).toBe(true);
    expect(canEditInput(permissionRecord({ input: { command: "\u200b".repeat(500) } }))).toBe(false);
  });

  it("never offers Edit… for input nested too deeply to show as pretty JSON", () => {
    const deep = JSON.parse(`{"a":${"[".repeat(100)}${"]".repeat(100)}}`) as Record<string, unknown>;
    expect(canEditInput(permissionRecord({ input: deep }))).toBe(false);
  });

  it("shows Bash flags beyond the command, so a sandbox override is not hidden", () => {
    const message = requestMessage(permissionRecord({ input: { command: "make", dangerouslyDisableSandbox: true } }));
    expect(sectionText(message, "tool_rest")).toContain('"dangerouslyDisableSandbox": true');
  });

  it("shows any other tool's input as pretty JSON", () => {
    const input = { url: "https://example.com", prompt: "Summarise <this>" };
    const message = requestMessage(permissionRecord({ toolName: "WebFetch", input }));
    expect(sectionText(message, "tool")).toBe("*Tool:* WebFetch\n*Input:*");
    expect(sectionText(message, "tool_code_0")).toBe('```{\n  "url": "https://example.com",\n  "prompt": "Summarise &lt;this&gt;"\n}```');
    expect(message.text).toBe("Permission request: WebFetch");
  });

  it("falls back to JSON when a known tool's input lacks its usual fields", () => {
    const message = requestMessage(permissionRecord({ toolName: "Bash", input: { command: 42 } }));
    expect(sectionText(message, "tool_code_0")).toBe('```{\n  "command": 42\n}```');
  });

  it("shows the title, display name, description, reason and blocked path the SDK passes", () => {
    const message = requestMessage(
      permissionRecord({
        title: "Claude wants to read outside the project",
        displayName: "Read file",
        toolName: "Read",
        input: { file_path: "/etc/passwd" },
        description: "Reads a file",
        decisionReason: "Path is outside allowed directories",
        blockedPath: "/etc/passwd",
      }),
    );
    expect(sectionText(message, "title")).toBe("> Claude wants to read outside the project");
    expect(sectionText(message, "meta")).toBe("*Description:* Reads a file\n*Why it asks:* Path is outside allowed directories\n*Blocked path:* /etc/passwd");
    expect(sectionText(message, "tool")).toBe("*Tool:* Read file (Read)\n*Input:*");
  });

  it("names the agent's host and working directory when it gives them", () => {
    const message = requestMessage(permissionRecord({ agent: { name: "claude", host: "build-7", cwd: "/home/ci/repo" } }));
    const requester = message.blocks.find((b) => b.block_id === "requester");
    expect(JSON.stringify(requester)).toContain("Host build-7");
    expect(JSON.stringify(requester)).toContain("In /home/ci/repo");
  });

  it("cuts a huge command visibly and offers the full input", () => {
    const message = requestMessage(permissionRecord({ input: { command: "y".repeat(100_000) } }));
    const texts = message.blocks.filter((b) => b.block_id?.startsWith("tool_code_")).map((b) => sectionText(message, b.block_id!)!);
    expect(texts.at(-1)).toMatch(/\n… _\(\d+ more characters\)_$/);
    const full = buttons(message).find((b) => b.action_id === Action.viewInput);
    expect(full).toMatchObject({ blockId: "full_input", text: "View full input", value: encodeButton({ r: "req-0001", p: 0 }) });
    expect(checkMessageLimits(message)).toEqual([]);
  });

  it("offers no full-input button when nothing was cut", () => {
    expect(actionIds(requestMessage(permissionRecord()))).not.toContain(Action.viewInput);
  });
});

describe("Always allow shows everything it grants", () => {
  const toolRule = suggestions[0]!;
  const setMode = { type: "setMode", mode: "bypassPermissions", destination: "session" };
  const wildcard = { type: "addRules", rules: [{ toolName: "Bash", ruleContent: "*" }], behavior: "allow", destination: "userSettings" };
  const notes = (message: ReturnType<typeof requestMessage>) =>
    (blocksOf(message).find((b) => b.block_id === "always_allow") as { elements: Array<{ text: string }> } | undefined)?.elements.map((e) => e.text);
  const meta = { r: "req-0001", c: "C0123456789", ts: "1700000000.000100" };

  it("lists the granted rules in full, however long, and says what the agent suggested that is not passed back", () => {
    const long = { ...toolRule, rules: [{ toolName: "Bash", ruleContent: `${"npm run build && ".repeat(40)}npm test:*` }] };
    const message = requestMessage(permissionRecord({ suggestions: [long, setMode, wildcard] }));
    expect(actionIds(message)).toContain(Action.alwaysAllow);
    const [saves, withheld] = notes(message)!;
    expect(saves).toBe(`_Always allow_ also saves: allow Bash(${"npm run build &amp;&amp; ".repeat(40)}npm test:*) (session)`);
    expect(withheld).toBe(
      "_Not offered:_ 2 more suggestions (mode changes, directories, wildcard rules or rules for other tools); the relay passes back only rules for Bash.",
    );
    expect(checkMessageLimits(message)).toEqual([]);
  });

  it("offers no Always allow when only a mode change or a wildcard rule is suggested, and says so", () => {
    const message = requestMessage(permissionRecord({ suggestions: [setMode, wildcard] }));
    expect(actionIds(message)).not.toContain(Action.alwaysAllow);
    expect(notes(message)).toEqual([expect.stringContaining("_Not offered:_ 2 more suggestions")]);
  });

  it("under alwaysAllow: all offers every suggestion and lists each one, mode changes included", () => {
    const message = requestMessage(permissionRecord({ suggestions: [toolRule, setMode, wildcard] }, { policy: { alwaysAllow: "all" } }));
    expect(notes(message)).toEqual([
      "_Always allow_ also saves: allow Bash(npm test:*) (session); mode bypassPermissions (session); allow Bash(*) (userSettings)",
    ]);
  });

  it("escapes agent markup in the rules it lists", () => {
    const hostile = { ...toolRule, rules: [{ toolName: "Bash", ruleContent: "<!channel> echo:*" }] };
    expect(notes(requestMessage(permissionRecord({ suggestions: [hostile] })))![0]).toContain("&lt;!channel&gt; echo:*");
  });

  it("when the rules are too long for the message, says the button shows them all, and the modal lists every one in full", () => {
    const rules = Array.from({ length: 6 }, (_, i) => ({ ...toolRule, rules: [{ toolName: "Bash", ruleContent: `${"x".repeat(700)}<${i}>:*` }] }));
    const record = permissionRecord({ suggestions: rules });
    const message = requestMessage(record);
    expect(actionIds(message)).toContain(Action.alwaysAllow);
    expect(notes(message)).toEqual(["_Always allow_ also saves 6 rules, too long to list here: the button shows every one before anything is saved."]);
    const modal = alwaysAllowModal(record, meta);
    expect(modal.callback_id).toBe(View.alwaysAllow);
    expect(modal.submit).toEqual({ type: "plain_text", text: "Always allow" });
    const listed = blocksOf(modal)
      .filter((b) => b.block_id?.startsWith("rule_"))
      .map((b) => unescapeMrkdwn((b as { text: { text: string } }).text.text));
    expect(listed).toEqual(rules.map((_, i) => `• allow Bash(${"x".repeat(700)}<${i}>:*) (session)`));
  });

  it("splits one rule longer than a modal section across sections without losing a character", () => {
    const huge = { ...toolRule, rules: [{ toolName: "Bash", ruleContent: `${"&".repeat(3000)}:*` }] };
    const modal = alwaysAllowModal(permissionRecord({ suggestions: [huge] }), meta);
    const texts = blocksOf(modal)
      .filter((b) => b.block_id?.startsWith("rule_"))
      .map((b) => (b as { text: { text: string } }).text.text);
    expect(texts.length).toBeGreaterThan(1);
    expect(texts.every((t) => t.length <= 3000)).toBe(true);
    expect(unescapeMrkdwn(texts.join(""))).toBe(`• allow Bash(${"&".repeat(3000)}:*) (session)`);
  });

  it("offers no Always allow when its rules are too long to show anywhere (fail closed)", () => {
    const enormous = Array.from({ length: 50 }, (_, i) => ({ ...toolRule, rules: [{ toolName: "Bash", ruleContent: `${"y".repeat(6000)}${i}:*` }] }));
    const message = requestMessage(permissionRecord({ suggestions: enormous }));
    expect(actionIds(message)).not.toContain(Action.alwaysAllow);
    expect(notes(message)).toEqual(["_Always allow_ is not offered: its 50 rules are too long to show in full."]);
  });
});
