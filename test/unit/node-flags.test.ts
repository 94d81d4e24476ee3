/**
 * The node flags the relay is started with (docs/performance.md, "Heap
 * growth"): `npm start`, the bin's shebang and the Dockerfile's CMD must give
 * node the same ones, or the relay a user runs is not the one measured.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "..", "..");
const read = (file: string) => readFileSync(join(ROOT, file), "utf8");

/** The `--flag[=value]` words before the script, without `--import <module>` (npm start's build check). */
function nodeFlags(words: string[]): string[] {
  const flags: string[] = [];
  for (let i = 0; i < words.length && words[i]!.startsWith("--"); i += 1) {
    if (words[i] === "--import") i += 1;
    else flags.push(words[i]!);
  }
  return flags;
}

function startScriptFlags(): string[] {
  const { scripts } = JSON.parse(read("package.json")) as { scripts: Record<string, string> };
  const words = scripts.start!.trim().split(/\s+/);
  expect(words[0]).toBe("node");
  return nodeFlags(words.slice(1));
}

function shebangFlags(): string[] {
  const first = read("bin/approval-relay.mjs").split("\n")[0]!;
  const words = first.replace(/^#!\/usr\/bin\/env -S /, "").split(/\s+/);
  expect(words[0]).toBe("node");
  return nodeFlags(words.slice(1));
}

function dockerfileFlags(): string[] {
  const cmd = read("Dockerfile")
    .split("\n")
    .filter((line) => line.startsWith("CMD ["));
  expect(cmd).toHaveLength(1);
  const words = JSON.parse(cmd[0]!.slice("CMD ".length)) as string[];
  expect(words[0]).toBe("node");
  return nodeFlags(words.slice(1));
}

describe("the node flags the relay starts with", () => {
  it("are the same in npm start, the bin's shebang and the Dockerfile's CMD", () => {
    const start = startScriptFlags();
    expect(start.length).toBeGreaterThan(0);
    expect(shebangFlags()).toEqual(start);
    expect(dockerfileFlags()).toEqual(start);
  });
});
