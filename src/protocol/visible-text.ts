/**
 * What runs is what is shown (docs/security.md, "Threat model"): an agent's
 * text reaches a person through Slack, whose clients apply the Unicode bidi
 * rules and draw zero-width and control characters as nothing. A command
 * `echo cleanup \u202E; rm -rf ~ #` then reads `echo cleanup # ~ fr- mr ;`
 * while bash runs `rm -rf ~`. So every character that is invisible or
 * changes the direction of the text around it is shown as a marked escape,
 * `⟨U+202E⟩`, where it sits, and callers can tell whether any were found.
 *
 * Written by hand because it is one regular expression over Unicode's own
 * categories; the libraries that strip such characters remove them, and
 * removing them would show something other than what runs.
 *
 * Marked: control characters (Cc) but line feed and tab (CR and ESC
 * included), format characters (Cf: bidi controls and isolates U+202A–202E,
 * U+2066–2069, U+200E/F, U+061C, zero-width U+200B–200D, U+2060, U+FEFF, tag
 * characters U+E0000–E007F…), the line and paragraph separators, lone
 * surrogates, and the fillers that draw as blank (U+034F, U+115F, U+1160,
 * U+3164, U+FFA0).
 */

const HIDDEN_CLASS = String.raw`(?![\n\t])[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}\u034f\u115f\u1160\u3164\uffa0]`;
const HIDDEN = new RegExp(HIDDEN_CLASS, "u");
const HIDDEN_ALL = new RegExp(HIDDEN_CLASS, "gu");

/** `⟨U+202E⟩`: how one hidden code point is shown. */
export function marker(codePoint: number): string {
  return `⟨U+${codePoint.toString(16).toUpperCase().padStart(4, "0")}⟩`;
}

/**
 * isHiddenCodePoint's answers so far, one byte per code point (0 not asked yet, 1 shown, 2 hidden; 1.1 MB
 * whatever the input): the text cutters ask once per character, 500,000 times for a 1 MB input of emoji.
 */
const hiddenCodePoints = new Uint8Array(0x110000);

/** True when the code point is one that is shown as a marker. */
export function isHiddenCodePoint(codePoint: number): boolean {
  const known = hiddenCodePoints[codePoint];
  if (known) return known === 2;
  const hidden = HIDDEN.test(String.fromCodePoint(codePoint));
  hiddenCodePoints[codePoint] = hidden ? 2 : 1;
  return hidden;
}

/** True when `raw` holds any character that is shown as a marker. */
export function hasHidden(raw: string): boolean {
  return HIDDEN.test(raw);
}

/** `raw` with each hidden character replaced by its marker. */
export function visibleText(raw: string): string {
  return hasHidden(raw) ? raw.replace(HIDDEN_ALL, (char) => marker(char.codePointAt(0)!)) : raw;
}

/**
 * `json` (JSON.stringify output) with every hidden character inside its
 * strings written as a `\uXXXX` escape: it parses back to the same value, so
 * an input shown for editing is visible and unchanged. JSON.stringify escapes
 * the control characters already, but leaves format characters as they are.
 */
export function visibleJson(json: string): string {
  return hasHidden(json) ? json.replace(HIDDEN_ALL, unicodeEscape) : json;
}

function unicodeEscape(char: string): string {
  const units: string[] = [];
  for (let i = 0; i < char.length; i++) units.push(`\\u${char.charCodeAt(i).toString(16).padStart(4, "0")}`);
  return units.join("");
}

/**
 * True when any string in `value` (object keys included) holds a hidden
 * character. Walks without recursion: request bodies may nest 100,000 deep.
 */
export function anyHidden(value: unknown): boolean {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const item = stack.pop();
    if (typeof item === "string") {
      if (hasHidden(item)) return true;
    } else if (Array.isArray(item)) {
      for (const element of item) stack.push(element);
    } else if (typeof item === "object" && item !== null) {
      for (const [key, element] of Object.entries(item)) {
        if (hasHidden(key)) return true;
        stack.push(element);
      }
    }
  }
  return false;
}
