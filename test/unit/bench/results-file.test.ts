import { describe, expect, it } from "vitest";
import { withEntry } from "../../../bench/results-file.js";

const FILE = [
  "# Bench results",
  "",
  "## latency (click → agent)",
  "",
  "Intro.",
  "",
  "### 2026-12-01 — older",
  "",
  "old table",
  "",
  "## scale (many)",
  "",
  "Intro.",
  "",
].join("\n");

describe("bench/RESULTS.md entries", () => {
  it("puts a run's tables at the top of each measured scenario's section, above the older entries", () => {
    const text = withEntry(FILE, {
      heading: "2026-12-02 — default run",
      facts: ["Command: `npm run bench`"],
      tables: new Map([
        ["latency", "latency table"],
        ["scale", "scale table"],
      ]),
    });
    const lines = text.split("\n");
    const newer = lines.indexOf("### 2026-12-02 — default run");
    expect(newer).toBeGreaterThan(lines.indexOf("Intro."));
    expect(newer).toBeLessThan(lines.indexOf("### 2026-12-01 — older"));
    expect(lines.slice(newer, newer + 5)).toEqual(["### 2026-12-02 — default run", "", "- Command: `npm run bench`", "", "latency table"]);
    expect(lines.lastIndexOf("### 2026-12-02 — default run")).toBeGreaterThan(lines.indexOf("## scale (many)"));
    expect(text).toMatch(/Intro\.\n\n### 2026-12-02 — default run\n\n- Command: `npm run bench`\n\nscale table\n$/);
  });

  it("refuses a scenario the file has no section for, rather than dropping its figures", () => {
    expect(() => withEntry(FILE, { heading: "x", facts: [], tables: new Map([["hook", "t"]]) })).toThrow(/no "## hook" section/);
  });
});
