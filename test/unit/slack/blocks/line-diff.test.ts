import { describe, expect, it } from "vitest";
import { COMPARED_LINES, DiffText, linesOf, SHOWN_CHARS } from "../../../../src/slack/blocks/line-diff.js";

/** The rows of one diff, and whether it compared the texts. */
function lineDiff(before: string, after: string, diff = new DiffText(Date.now, Number.POSITIVE_INFINITY)) {
  const compared = diff.diff(before, after);
  return { rows: diff.text === "" ? [] : diff.text.split("\n"), compared };
}

const numbered = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => `line ${from + i}`);
const text = (lines: string[]) => `${lines.join("\n")}\n`;

describe("line diff", () => {
  it("marks removed lines with -, added ones with + and unchanged ones with two spaces", () => {
    const diff = lineDiff("a\nb\nc\n", "a\nB\nc\n");
    expect(diff).toEqual({ rows: ["  a", "- b", "+ B", "  c"], compared: true });
  });

  it("keeps three lines of context around each change and folds the unchanged lines between", () => {
    const before = numbered(1, 30);
    const after = [...before];
    after[4] = "five";
    after[24] = "twenty-five";
    const diff = lineDiff(text(before), text(after));
    expect(diff.rows).toEqual([
      "  line 1",
      "  line 2",
      "  line 3",
      "  line 4",
      "- line 5",
      "+ five",
      "  line 6",
      "  line 7",
      "  line 8",
      "⋯ 13 unchanged lines",
      "  line 22",
      "  line 23",
      "  line 24",
      "- line 25",
      "+ twenty-five",
      "  line 26",
      "  line 27",
      "  line 28",
      "⋯ 2 unchanged lines",
    ]);
  });

  it("folds nothing shorter than two lines", () => {
    const diff = lineDiff("x\na\nb\nc\nd\ne\nf\ng\nx\n", "y\na\nb\nc\nd\ne\nf\ng\ny\n");
    expect(diff.rows).toEqual(["- x", "+ y", "  a", "  b", "  c", "  d", "  e", "  f", "  g", "- x", "+ y"]);
  });

  it("shows a text written from nothing as added lines only, and one removed entirely as removed lines", () => {
    expect(lineDiff("", "one\ntwo\n")).toEqual({ rows: ["+ one", "+ two"], compared: true });
    expect(lineDiff("one\ntwo", "")).toEqual({ rows: ["- one", "- two"], compared: true });
  });

  it("says which side lacks the final newline when that is the only difference", () => {
    expect(lineDiff("a\nb\n", "a\nb").rows).toEqual(["  a", "- b", "+ b", "\\ No newline at the end of the new text"]);
    expect(lineDiff("a", "a\n").rows).toEqual(["- a", "+ a", "\\ No newline at the end of the old text"]);
  });

  it("keeps empty lines as rows of their own", () => {
    expect(linesOf("\n\n")).toEqual(["", ""]);
    expect(lineDiff("", "\n\nx").rows).toEqual(["+ ", "+ ", "+ x"]);
  });

  it("does not compare texts longer than the budget's lines: it shows the old text, then the new", () => {
    const before = text(numbered(1, COMPARED_LINES / 2 + 1));
    const after = text(numbered(2, COMPARED_LINES / 2 + 2));
    const diff = lineDiff(before, after);
    expect(diff.compared).toBe(false);
    expect(diff.rows.slice(0, 2)).toEqual(["- line 1", "- line 2"]);
    expect(diff.rows.at(-1)).toBe(`+ line ${COMPARED_LINES / 2 + 2}`);
    expect(diff.rows).toHaveLength(COMPARED_LINES + 2);
  });

  it("shares one budget among the diffs of a message, so later ones fall back once it is spent", () => {
    // A clock that stands still: the line budget is what is tested, not the time one (a loaded machine could spend that first).
    const diff = new DiffText(() => 0);
    const half = text(numbered(1, COMPARED_LINES / 2 - 2));
    expect(diff.diff(half, `${half}more\n`)).toBe(true);
    expect(diff.diff("a\n", "b\n")).toBe(true);
    expect(diff.diff(half, `${half}more\n`)).toBe(false);
  });

  it("writes a heading before a diff, told whether the texts were compared", () => {
    const diff = new DiffText(() => 0);
    diff.diff("a", "b", (compared) => `heading ${compared}`);
    expect(diff.text).toBe("heading true\n- a\n+ b");
  });

  it("builds only the first characters of a huge diff and counts the rest exactly", () => {
    const content = `${"x\n".repeat(300_000)}${"😀".repeat(50_000)}\n${"\n".repeat(100_000)}`;
    const whole = new DiffText(Date.now, Number.POSITIVE_INFINITY);
    whole.diff("", content);
    for (const cap of [SHOWN_CHARS, 0, 1, 2, 3, 1000]) {
      const capped = new DiffText(Date.now, cap);
      capped.diff("", content);
      expect(capped.text.length).toBeLessThanOrEqual(cap);
      expect(whole.text.startsWith(capped.text)).toBe(true);
      expect(capped.text.length + capped.hidden).toBe(whole.text.length);
    }
  });

  it("cuts one row longer than the room, never inside an emoji", () => {
    const capped = new DiffText(Date.now, 5);
    capped.diff("", "😀😀😀😀");
    expect(capped.text).toBe("+ 😀");
    expect(capped.text.length + capped.hidden).toBe(10);
  });

  it("gives up on texts that differ on too many lines, within its time", () => {
    const before = text(Array.from({ length: 4000 }, (_, i) => `old ${i}`));
    const after = text(Array.from({ length: 4000 }, (_, i) => (i % 2 === 0 ? `new ${i}` : `old ${i}`)));
    const started = performance.now();
    const diff = lineDiff(before, after);
    expect(performance.now() - started).toBeLessThan(2000);
    expect(diff.compared).toBe(false);
  });

  it("does not compare once the budget's time is spent", () => {
    let now = 0;
    const diff = new DiffText(() => now);
    now = 1000;
    expect(lineDiff("a\n", "b\n", diff)).toEqual({ rows: ["- a", "+ b"], compared: false });
  });
});
