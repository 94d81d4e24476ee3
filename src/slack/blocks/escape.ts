/**
 * Agent text must never become Slack markup: `&`, `<` and `>` are Slack's
 * control characters (mentions, `<!channel>`, links), so every piece of text
 * an agent or a person supplied goes through here before it reaches a text
 * object. Code blocks also get their backtick runs broken so agent text can
 * never close the block it is shown in.
 */

const ENTITIES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;" };

/** Replaces `&`, `<` and `>` with their HTML entities, as Slack requires. */
export function escapeMrkdwn(text: string): string {
  return text.replace(/[&<>]/g, (char) => ENTITIES[char] ?? char);
}

/** Zero-width space: invisible, but it stops two backticks from touching. */
export const ZWSP = "\u200b";

/** How the text of a leaf is encoded for a mrkdwn text object. */
export type Encoding = "text" | "code";

/** Escapes text and, for code, puts a zero-width space between any two adjacent backticks. */
export function encode(raw: string, encoding: Encoding): string {
  const escaped = escapeMrkdwn(raw);
  return encoding === "code" ? escaped.replace(/`(?=`)/g, "`" + ZWSP) : escaped;
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

/**
 * Length of one UTF-16 code unit once encoded. `prev` is the code unit
 * before it in the same code block (undefined at the start of a block).
 */
export function encodedCost(code: number, prev: number | undefined, encoding: Encoding): number {
  if (code === AMP) return 5;
  if (code === LT || code === GT) return 4;
  if (encoding === "code" && code === BACKTICK && prev === BACKTICK) return 2;
  return 1;
}
