/**
 * Writes a run's tables into bench/RESULTS.md: one dated entry at the top of
 * each measured scenario's section (`## <scenario> …`), above the earlier
 * entries, with the machine, the load and the exact command, so the file is a
 * history kept by the bench rather than by hand. The file is written as the
 * project's prettier formats it, so `npm run lint` passes after a run.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { format, resolveConfig } from "prettier";

export interface ResultsEntry {
  /** e.g. "2026-12-02 — default run, Node 24.22.3". */
  heading: string;
  /** Bullet lines (without the "- "): command, machine, configuration. */
  facts: string[];
  /** The markdown of each measured scenario. */
  tables: Map<string, string>;
}

/** `text` (the file's content) with the entry inserted under each of its scenarios' sections. */
export function withEntry(text: string, entry: ResultsEntry): string {
  const lines = text.split("\n");
  for (const [scenario, tables] of entry.tables) {
    const section = lines.findIndex((line) => line.startsWith(`## ${scenario}`));
    if (section < 0) throw new Error(`bench/RESULTS.md has no "## ${scenario}" section`);
    let at = lines.findIndex((line, i) => i > section && (line.startsWith("### ") || line.startsWith("## ")));
    if (at < 0) at = lines.length;
    const block = [`### ${entry.heading}`, "", ...entry.facts.map((fact) => `- ${fact}`), "", ...tables.split("\n"), ""];
    lines.splice(at, 0, ...block);
  }
  return lines.join("\n");
}

export async function recordResults(path: string, entry: ResultsEntry): Promise<void> {
  const text = withEntry(readFileSync(path, "utf8"), entry);
  writeFileSync(path, await format(text, { ...(await resolveConfig(path)), filepath: path }));
}
