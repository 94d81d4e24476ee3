/**
 * Agent text must never become Slack markup: `&`, `<` and `>` are Slack's
 * control characters (mentions, `<!channel>`, links), so every piece of text
 * an agent or a person supplied goes through here before it reaches a text
 * object. Invisible and direction-changing characters are shown as marked
 * escapes (`⟨U+202E⟩`, protocol/visible-text.ts) on the same pass, so what a
 * person reads is what runs. Code blocks also get their backtick runs broken
 * so agent text can never close the block it is shown in, and quoted text
 * starts every line with `> ` so it stays set apart from the relay's own lines.
 */
import { isHiddenCodePoint, marker, visibleText } from "../../protocol/visible-text.js";

const ENTITIES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;" };

/** Marks hidden characters and replaces `&`, `<` and `>` with their HTML entities, as Slack requires. */
export function escapeMrkdwn(text: string): string {
  return visibleText(text).replace(/[&<>]/g, (char) => ENTITIES[char] ?? char);
}

/** Zero-width space: invisible, but it stops two backticks from touching. */
export const ZWSP = "\u200b";

/** How the text of a leaf is encoded for a mrkdwn text object: plain, in a code block, or block-quoted. */
export type Encoding = "text" | "code" | "quote";

/** What starts each line of quoted text. */
const QUOTE = "> ";

/** Escapes text; for code, puts a zero-width space between any two adjacent backticks; for a quote, starts every line with `> `. */
export function encode(raw: string, encoding: Encoding): string {
  const escaped = escapeMrkdwn(raw);
  if (encoding === "code") return escaped.replace(/`(?=`)/g, "`" + ZWSP);
  if (encoding === "quote") return quoteLines(escaped);
  return escaped;
}

/** Escaped text with every line started by `> `, so no line of it can start a line of the message unquoted. */
export function quoteLines(escaped: string): string {
  return QUOTE + escaped.replace(/\n/g, "\n" + QUOTE);
}

/** Quoted text with its first line in bold ("> *Which database?*\n> more"): a question or an option label, still inside the quote. */
export function boldFirstLine(quoted: string): string {
  const end = quoted.indexOf("\n");
  const first = end === -1 ? quoted : quoted.slice(0, end);
  if (!first.startsWith(QUOTE) || first.trim() === QUOTE.trim()) return quoted;
  return `${QUOTE}*${first.slice(QUOTE.length)}*${end === -1 ? "" : quoted.slice(end)}`;
}

/** Characters an encoding adds around each part, at most (the fence of code, the first `> ` of a quote). */
export function partOverhead(encoding: Encoding): number {
  if (encoding === "code") return FENCE_OVERHEAD;
  return encoding === "quote" ? QUOTE.length : 0;
}

/** Wraps encoded code in a ``` block; guards keep a leading or trailing backtick off the fence. */
export function fence(encoded: string): string {
  const start = encoded.startsWith("`") ? ZWSP : "";
  const end = encoded.endsWith("`") ? ZWSP : "";
  return "```" + start + (encoded === "" ? ZWSP : encoded) + end + "```";
}

/** Characters `fence` adds around the encoded content, at most. */
export const FENCE_OVERHEAD = 8;

const AMP = 38;
const LT = 60;
const GT = 62;
const BACKTICK = 96;
const NEWLINE = 10;

/**
 * Length in UTF-16 code units of one code point once encoded. `prev` is the
 * code point before it in the same code block (undefined at the start of a block).
 */
export function encodedCost(code: number, prev: number | undefined, encoding: Encoding): number {
  if (code === AMP) return 5;
  if (code === LT || code === GT) return 4;
  if (code === NEWLINE) return encoding === "quote" ? 1 + QUOTE.length : 1;
  if (encoding === "code" && code === BACKTICK && prev === BACKTICK) return 2;
  if (code > 0x1f && code < 0x7f) return 1;
  if (isHiddenCodePoint(code)) return marker(code).length;
  return code > 0xffff ? 2 : 1;
}
