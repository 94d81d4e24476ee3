import { describe, expect, it } from "vitest";
import { anyHidden, hasHidden, visibleJson, visibleText } from "../../../src/protocol/visible-text.js";

describe("visibleText", () => {
  it("marks a bidi override, so the command reads in the order bash runs it", () => {
    expect(visibleText("echo cleanup \u202E; rm -rf ~ #")).toBe("echo cleanup ⟨U+202E⟩; rm -rf ~ #");
  });

  it("marks every bidi control and isolate, zero-width character, CR and ESC", () => {
    const hidden = [0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069, 0x200e, 0x200f, 0x061c];
    const zeroWidth = [0x200b, 0x200c, 0x200d, 0x2060, 0xfeff];
    for (const code of [...hidden, ...zeroWidth, 0x0d, 0x1b, 0x00, 0x7f, 0x85, 0x2028, 0x2029, 0x3164]) {
      const expected = `⟨U+${code.toString(16).toUpperCase().padStart(4, "0")}⟩`;
      expect(visibleText(`a${String.fromCodePoint(code)}b`)).toBe(`a${expected}b`);
    }
  });

  it("marks tag characters outside the BMP and lone surrogates as one code point each", () => {
    expect(visibleText("ok\u{E0072}\u{E006D}")).toBe("ok⟨U+E0072⟩⟨U+E006D⟩");
    expect(visibleText("a\ud800b")).toBe("a⟨U+D800⟩b");
  });

  it("leaves ordinary text, line feeds, tabs, accents and emoji as they are", () => {
    const text = "ls -la\n\tcd café && echo 😀 ✅ ΑΒΓ";
    expect(visibleText(text)).toBe(text);
    expect(hasHidden(text)).toBe(false);
  });
});

describe("anyHidden", () => {
  it("finds a hidden character in a nested string or an object key", () => {
    expect(anyHidden({ input: { list: [1, "ok", { deep: "x\u200by" }] } })).toBe(true);
    expect(anyHidden({ input: { ["key\u2066"]: "value" } })).toBe(true);
    expect(anyHidden({ input: { command: "ls" }, labels: { env: "prod" } })).toBe(false);
  });

  it("walks input nested 100,000 deep without overflowing the stack", () => {
    const deep = JSON.parse(`${"[".repeat(100_000)}"\u202e"${"]".repeat(100_000)}`) as unknown;
    expect(anyHidden(deep)).toBe(true);
  });
});

describe("visibleJson", () => {
  it("writes hidden characters as \\u escapes that parse back to the same value", () => {
    const input = { command: "echo cleanup \u202E; rm -rf ~ #", tag: "\u{E0041}" };
    const json = visibleJson(JSON.stringify(input, null, 2));
    expect(json).toContain("echo cleanup \\u202e; rm -rf ~ #");
    expect(hasHidden(json)).toBe(false);
    expect(JSON.parse(json)).toEqual(input);
  });
});
