import { describe, expect, it } from "vitest";
import { escapeMrkdwn } from "../../../../src/slack/blocks/index.js";
import { chunkAll, cutShort, fit } from "../../../../src/slack/blocks/text.js";
import { compactJson, prettyJson } from "../../../../src/slack/blocks/json.js";
import { decodeCode, unescapeMrkdwn } from "../../../helpers/blocks.js";

describe("escapeMrkdwn", () => {
  it("turns &, < and > into entities so agent text cannot mention, link or ping", () => {
    expect(escapeMrkdwn("<!channel> <@U123> <http://evil.example|docs> & <!subteam^S1>")).toBe(
      "&lt;!channel&gt; &lt;@U123&gt; &lt;http://evil.example|docs&gt; &amp; &lt;!subteam^S1&gt;",
    );
  });

  it("escapes an existing entity again, so it shows as typed", () => {
    expect(escapeMrkdwn("&lt;")).toBe("&amp;lt;");
  });
});

describe("fit", () => {
  it("keeps a text that fits whole and says nothing was cut", () => {
    expect(fit("a < b", "text", 100, 100)).toEqual({ parts: ["a &lt; b"], cut: false });
  });

  it("cuts a long text after escaping and says how many characters were left out", () => {
    const result = fit("&".repeat(100), "text", 60, 60);
    expect(result.cut).toBe(true);
    const text = result.parts[0]!;
    expect(text.length).toBeLessThanOrEqual(60);
    const kept = (text.match(/&amp;/g) ?? []).length;
    expect(text).toBe(`${"&amp;".repeat(kept)}… _(${100 - kept} more characters)_`);
  });

  it("never splits an entity or a surrogate pair", () => {
    for (let max = 30; max < 45; max += 1) {
      const text = fit("<😀".repeat(40), "text", max, max).parts[0]!;
      const body = text.slice(0, text.indexOf("…"));
      expect(body).toMatch(/^(&lt;\ud83d\ude00)*(&lt;)?$/);
    }
  });

  it("splits long code into fenced sections and ends the last one with the cut note", () => {
    const raw = "x".repeat(10_000);
    const result = fit(raw, "code", 5000, 2000);
    expect(result.cut).toBe(true);
    expect(result.parts.join("").length).toBeLessThanOrEqual(5000);
    result.parts.forEach((part) => expect(part.length).toBeLessThanOrEqual(2000 + 8 + 40));
    const last = result.parts.at(-1)!;
    const [code, note] = last.split("\n");
    const shown = [...result.parts.slice(0, -1), code!].map(decodeCode).join("");
    expect(raw.startsWith(shown)).toBe(true);
    expect(note).toBe(`… _(${raw.length - shown.length} more characters)_`);
  });

  it("cuts a text followed by characters never built, and counts them in the note", () => {
    expect(fit("short", "code", 1000, 1000, 500)).toEqual({ parts: ["```short```\n… _(500 more characters)_"], cut: true });
    const result = fit("y".repeat(100), "text", 60, 60, 1000);
    const kept = result.parts[0]!.indexOf("…");
    expect(result.parts[0]).toBe(`${"y".repeat(kept)}… _(${100 - kept + 1000} more characters)_`);
  });

  it("breaks backtick runs in code so agent text cannot close the code block", () => {
    const [part] = fit("a```b````c`", "code", 1000, 1000).parts;
    expect(part!.slice(3, -3)).not.toContain("``");
    expect(decodeCode(part!)).toBe("a```b````c`");
  });
});

describe("chunkAll", () => {
  it("splits everything into sections that give back the original text exactly", () => {
    const raw = "`&<>😀 ```\n".repeat(3000);
    const parts = chunkAll(raw, "code", 2890).map((part) => part());
    parts.forEach((part) => expect(part.length).toBeLessThanOrEqual(2900));
    expect(parts.map(decodeCode).join("")).toBe(raw);
  });

  it("splits plain text the same way", () => {
    const raw = "<b>&".repeat(5000);
    const parts = chunkAll(raw, "text", 2900).map((part) => part());
    parts.forEach((part) => expect(part.length).toBeLessThanOrEqual(2900));
    expect(parts.map(unescapeMrkdwn).join("")).toBe(raw);
  });
});

describe("cutShort", () => {
  it("escapes and cuts a label to the limit with an ellipsis", () => {
    expect(cutShort("short & sweet", 75)).toBe("short &amp; sweet");
    const cut = cutShort("<".repeat(100), 75);
    expect(cut.length).toBeLessThanOrEqual(75);
    expect(cut).toBe(`${"&lt;".repeat(18)}…`);
  });
});

describe("prettyJson", () => {
  it("is JSON.stringify with two spaces for ordinary input", () => {
    const value = { a: [1, { b: "c" }], d: null, e: true };
    expect(prettyJson(value)).toBe(JSON.stringify(value, null, 2));
  });

  it("writes input nested deeper than the stack allows as compact JSON instead of throwing", () => {
    const deep = JSON.parse("[".repeat(100_000) + "]".repeat(100_000)) as unknown;
    expect(() => JSON.stringify(deep)).toThrow(RangeError);
    expect(prettyJson(deep)).toBe("[".repeat(100_000) + "]".repeat(100_000));
  });

  it("writes compact JSON exactly as JSON.stringify does", () => {
    const value = { a: [1, "two", null, { 'k"ey': [] }], b: {}, c: -0.5, d: "é😀\n" };
    expect(compactJson(value)).toBe(JSON.stringify(value));
  });
});
