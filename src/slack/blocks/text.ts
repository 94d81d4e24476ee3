/**
 * Cutting agent text to Slack's limits. Every function measures the text
 * *after* escaping (an `&` costs five characters), never splits an entity or
 * a surrogate pair, and says how much was left out, so a cut is always
 * visible as "… (N more characters)".
 */
import { encode, encodedCost, fence, partOverhead, type Encoding } from "./escape.js";

/** Where a text was split: start index of each chunk in the raw text, and where the last one ends. */
interface Split {
  starts: number[];
  end: number;
  /** Encoded characters used, including per-chunk fence overhead for code. */
  used: number;
}

/**
 * Walks `raw` and splits it into chunks whose encoded content is at most
 * `perChunk` characters, stopping before the encoded total (with fences for
 * code) would pass `total`.
 */
function split(raw: string, encoding: Encoding, perChunk: number, total: number): Split {
  const overhead = partOverhead(encoding);
  const starts: number[] = [];
  let used = 0;
  let chunkUsed = 0;
  let prev: number | undefined;
  let i = 0;
  while (i < raw.length) {
    const code = raw.codePointAt(i)!;
    const width = code > 0xffff ? 2 : 1;
    let cost = encodedCost(code, prev, encoding);
    if (starts.length === 0 || chunkUsed + cost > perChunk) {
      cost = encodedCost(code, undefined, encoding);
      if (used + overhead + cost > total || cost > perChunk) break;
      starts.push(i);
      used += overhead;
      chunkUsed = 0;
    } else if (used + cost > total) {
      break;
    }
    used += cost;
    chunkUsed += cost;
    prev = code;
    i += width;
  }
  return { starts, end: i, used };
}

function chunksOf(raw: string, { starts, end }: Split): string[] {
  return starts.map((start, k) => raw.slice(start, starts[k + 1] ?? end));
}

/** The note that ends a cut text. */
export function moreNote(omitted: number): string {
  return `… _(${omitted} more characters)_`;
}

/** Encoded size the whole of `raw` needs, or `limit` when it needs more (stops early). */
export function encodedSize(raw: string, encoding: Encoding, perChunk: number, limit: number): number {
  const whole = split(raw, encoding, perChunk, limit);
  return whole.end === raw.length ? whole.used : limit;
}

export interface Fitted {
  /** Encoded mrkdwn, one string per section (a single one for text). */
  parts: string[];
  cut: boolean;
}

/**
 * Escapes `raw` (and fences it as code) so that all parts together, with
 * the "… (N more characters)" note when cut, take at most `max` characters;
 * each part at most `perChunk` plus the fence. `hidden` characters follow
 * `raw` unbuilt: then the text is always cut, and the note counts them.
 */
export function fit(raw: string, encoding: Encoding, max: number, perChunk: number, hidden = 0): Fitted {
  const whole = split(raw, encoding, perChunk, max);
  if (whole.end === raw.length && hidden === 0) return { parts: render(chunksOf(raw, whole), encoding), cut: false };
  const reserve = moreNote(raw.length + hidden).length + 1;
  if (reserve > max) return { parts: max >= 1 ? ["…"] : [], cut: true };
  const cut = split(raw, encoding, perChunk, max - reserve);
  const parts = render(chunksOf(raw, cut), encoding);
  const note = moreNote(raw.length - cut.end + hidden);
  if (parts.length === 0) return { parts: [note], cut: true };
  const last = parts.length - 1;
  parts[last] = encoding === "code" ? `${parts[last]}\n${note}` : `${parts[last]}${note}`;
  return { parts, cut: true };
}

function render(chunks: string[], encoding: Encoding): string[] {
  return chunks.map((chunk) => (encoding === "code" ? fence(encode(chunk, "code")) : encode(chunk, encoding)));
}

/** A part of a long text, encoded only when it is shown. */
export type LazyPart = () => string;

/**
 * Splits the whole of `raw` into parts of at most `perChunk` encoded
 * characters each (plus fences for code). Each part is encoded on demand, so
 * showing one page of a 1 MB input does not encode all of it.
 */
export function chunkAll(raw: string, encoding: Encoding, perChunk: number): LazyPart[] {
  if (raw === "") return encoding === "code" ? [() => fence("")] : [];
  const { starts, end } = split(raw, encoding, perChunk, Number.POSITIVE_INFINITY);
  return starts.map((start, k) => () => render([raw.slice(start, starts[k + 1] ?? end)], encoding)[0]!);
}

/**
 * Escapes and cuts a short text (a label, a button, a header chip) to at most
 * `max` characters, ending with "…" when cut.
 */
export function cutShort(raw: string, max: number): string {
  const whole = split(raw, "text", max, max);
  if (whole.end === raw.length) return encode(raw, "text");
  const cut = split(raw, "text", max - 1, max - 1);
  return `${encode(raw.slice(0, cut.end), "text")}…`;
}

/**
 * Escapes and cuts a text to at most `max` characters by leaving out its
 * middle ("head … tail"), for the notification text: what comes last in a
 * command is what runs last, so the cut never hides it.
 */
export function cutMiddle(raw: string, max: number): string {
  const whole = split(raw, "text", max, max);
  if (whole.end === raw.length) return encode(raw, "text");
  const room = max - MIDDLE.length;
  const head = split(raw, "text", Math.ceil(room / 2), Math.ceil(room / 2));
  let start = raw.length;
  let used = head.used;
  while (start > head.end) {
    const low = raw.charCodeAt(start - 1);
    const width = low >= 0xdc00 && low <= 0xdfff && start - 2 >= head.end && isHighSurrogate(raw.charCodeAt(start - 2)) ? 2 : 1;
    const cost = encodedCost(raw.codePointAt(start - width)!, undefined, "text");
    if (used + cost > room) break;
    used += cost;
    start -= width;
  }
  return `${encode(raw.slice(0, head.end), "text")}${MIDDLE}${encode(raw.slice(start), "text")}`;
}

const MIDDLE = " … ";

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

/** How many lines a text has. */
export function lineCount(raw: string): number {
  let count = 1;
  for (let i = raw.indexOf("\n"); i !== -1; i = raw.indexOf("\n", i + 1)) count += 1;
  return count;
}

/** A text in one line for summaries: its first and last lines that are not blank ("ls -la … rm -rf ~"), so the tail is never hidden. */
export function oneLine(raw: string): string {
  if (!raw.includes("\n")) return raw;
  const first = /^[ \t]*\S.*$/m.exec(raw)?.[0] ?? "";
  let end = raw.length;
  let last = "";
  while (end > 0) {
    const start = raw.lastIndexOf("\n", end - 1) + 1;
    const line = raw.slice(start, end);
    if (line.trim() !== "") {
      last = line;
      break;
    }
    end = start - 1;
  }
  return first === last || last === "" ? first : `${first} … ${last}`;
}

/** `text` with each run of three or more blank lines replaced by one line `⟨N blank lines⟩`. */
export function collapseBlankRuns(text: string): { text: string; collapsed: number } {
  let collapsed = 0;
  const shown = text.replace(/(?:^[ \t]*\n){3,}/gm, (run) => {
    const lines = lineCount(run) - 1;
    collapsed += lines;
    return `⟨${lines.toLocaleString("en-US")} blank lines⟩\n`;
  });
  return { text: shown, collapsed };
}

/** "Command", or "Command (2,501 lines; runs of blank lines shown as ⟨N blank lines⟩)". */
export function commandLabel(command: string, collapsed: number): string {
  const lines = lineCount(command);
  if (lines === 1) return "Command";
  const note = collapsed > 0 ? `; ${collapsed.toLocaleString("en-US")} blank lines collapsed, shown as ⟨N blank lines⟩` : "";
  return `Command (${lines.toLocaleString("en-US")} lines${note})`;
}
