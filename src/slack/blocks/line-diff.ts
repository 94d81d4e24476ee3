/**
 * A line diff people can read on a phone, in a code block: "- " starts a
 * removed line, "+ " an added one, two spaces an unchanged one, and a long
 * unchanged run folds to "⋯ N unchanged lines" with three lines of context
 * kept on each side of a change.
 *
 * The diff itself is jsdiff's (`diff` on npm: maintained, no dependencies,
 * its own types, about 9 KB of it in the bundle), whose Myers diff can give
 * up early (`maxEditLength`, `timeout`). All the diffs of one message go
 * through one DiffText, which bounds the work for any input up to the 1 MB
 * body limit: it compares at most COMPARED_LINES lines within
 * COMPARE_MILLISECONDS (past that, or when two texts differ too much, it
 * writes the old text, then the new), and it builds only the first
 * SHOWN_CHARS characters of the diff, more than a message can show,
 * counting the rest so the cut note stays true.
 */
import { diffLines, type Change } from "diff";

/** Unchanged lines kept on each side of a change. */
export const CONTEXT_LINES = 3;
/** Most lines (old and new together, over all the diffs of one message) compared line by line. */
export const COMPARED_LINES = 10_000;
/** Most removed plus added lines a comparison looks for before it gives up (Myers' D). */
const MAX_EDIT_LENGTH = 500;
/** Most time (milliseconds) all the comparisons of one message may take together. */
const COMPARE_MILLISECONDS = 100;
/** Characters of diff built: a message holds at most 11,000, and escaping only adds. */
export const SHOWN_CHARS = 16_000;

/** The lines of a text; one final newline ends the last line rather than starting an empty one. */
export function linesOf(text: string): string[] {
  if (text === "") return [];
  return (text.endsWith("\n") ? text.slice(0, -1) : text).split("\n");
}

function newlines(text: string, from = 0): number {
  let count = 0;
  for (let at = text.indexOf("\n", from); at !== -1; at = text.indexOf("\n", at + 1)) count += 1;
  return count;
}

function lineCount(text: string): number {
  return text === "" || text.endsWith("\n") ? newlines(text) : newlines(text) + 1;
}

/** The rows of one message's diffs, built up to SHOWN_CHARS and counted past it. */
export class DiffText {
  private readonly rows: string[] = [];
  private room: number;
  private linesLeft = COMPARED_LINES;
  private readonly deadline: number;
  /** Characters of the diff past those built. */
  hidden = 0;

  /** `now` in milliseconds: a bound on computing, so the wall clock by default. */
  constructor(
    private readonly now: () => number = Date.now,
    cap = SHOWN_CHARS,
  ) {
    this.room = cap;
    this.deadline = now() + COMPARE_MILLISECONDS;
  }

  /** The diff as built (its first SHOWN_CHARS characters or so). */
  get text(): string {
    return this.rows.join("\n");
  }

  /** True once any row was written (built or counted): each row after the first starts with a newline. */
  private get started(): boolean {
    return this.rows.length > 0 || this.hidden > 0;
  }

  /** Writes one row, cut where the room ends (never inside a surrogate pair); past the room, only counted. */
  row(text: string): void {
    const newline = this.started ? 1 : 0;
    const cost = newline + text.length;
    if (cost <= this.room) {
      this.rows.push(text);
      this.room -= cost;
      return;
    }
    let keep = this.room - newline;
    if (keep > 0) {
      const high = text.charCodeAt(keep - 1);
      if (high >= 0xd800 && high <= 0xdbff) keep -= 1;
      this.rows.push(text.slice(0, keep));
      this.hidden += text.length - keep;
    } else {
      this.hidden += cost;
    }
    this.room = 0;
  }

  /**
   * Writes the diff from `before` to `after`, after `heading` (told whether
   * the texts were compared) when given; returns whether they were.
   */
  diff(before: string, after: string, heading?: (compared: boolean) => string): boolean {
    const oneSided = before === "" || after === "";
    const changes = oneSided ? undefined : this.compare(before, after);
    const compared = oneSided || changes !== undefined;
    if (heading) this.row(heading(compared));
    if (!changes) {
      this.marked(before, "-");
      this.marked(after, "+");
      return compared;
    }
    changes.forEach((change, index) => {
      if (change.added || change.removed) this.marked(change.value, change.added ? "+" : "-");
      else this.unchanged(change.value, index === 0, index === changes.length - 1);
    });
    if (before.endsWith("\n") !== after.endsWith("\n")) {
      this.row(`\\ No newline at the end of the ${before.endsWith("\n") ? "new" : "old"} text`);
    }
    return true;
  }

  /** The changes from `before` to `after`, or undefined when the budget or jsdiff gives up. */
  private compare(before: string, after: string): Change[] | undefined {
    const lines = lineCount(before) + lineCount(after);
    const timeout = this.deadline - this.now();
    // Past the room nothing more is shown: counting the old text, then the new, is enough.
    const fits = lines <= this.linesLeft && timeout > 0 && this.room > 0;
    this.linesLeft -= Math.min(lines, this.linesLeft);
    return fits ? diffLines(before, after, { maxEditLength: MAX_EDIT_LENGTH, timeout }) : undefined;
  }

  /** Every line of `text` marked with `sign`; past the room, only counted. */
  private marked(text: string, sign: string): void {
    if (text === "") return;
    const body = text.endsWith("\n") ? text.slice(0, -1) : text;
    let at = 0;
    while (this.room > 0) {
      const end = body.indexOf("\n", at);
      this.row(`${sign} ${body.slice(at, end === -1 ? body.length : end)}`);
      if (end === -1) return;
      at = end + 1;
    }
    // The rest as rows would be: a newline before each, the sign and a space, the line.
    const rest = newlines(body, at) + 1;
    this.hidden += body.length - at - (rest - 1) + rest * (sign.length + 2) - (this.started ? 0 : 1);
  }

  /** An unchanged run, folded to its context: none before the first change, none after the last. */
  private unchanged(text: string, first: boolean, last: boolean): void {
    const lines = linesOf(text);
    const keepBefore = first ? 0 : CONTEXT_LINES;
    const keepAfter = last ? 0 : CONTEXT_LINES;
    const hidden = lines.length - keepBefore - keepAfter;
    const context = (line: string) => this.row(`  ${line}`);
    if (hidden < 2) {
      lines.forEach(context);
      return;
    }
    lines.slice(0, keepBefore).forEach(context);
    this.row(`⋯ ${hidden} unchanged lines`);
    lines.slice(lines.length - keepAfter).forEach(context);
  }
}
