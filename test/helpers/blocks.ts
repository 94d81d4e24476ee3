/**
 * Helpers for reading the Block Kit JSON the builders produce: find blocks
 * and buttons, undo the escaping, and list every string a message carries.
 */
import type { KnownBlock, View } from "@slack/types";
import type { SlackMessage } from "../../src/slack/blocks/index.js";
import { Action, encodeButton } from "../../src/slack/ids.js";
import { hasHidden } from "../../src/protocol/visible-text.js";

type Json = Record<string, unknown>;

export function unescapeMrkdwn(text: string): string {
  return text.replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");
}

/** The raw text inside one ``` code block produced by the builders. */
export function decodeCode(text: string): string {
  const match = /^```([\s\S]*)```$/.exec(text);
  if (!match) throw new Error(`not a code block: ${text.slice(0, 80)}`);
  let inner = match[1]!;
  if (inner.startsWith("\u200b`")) inner = inner.slice(1);
  if (inner.endsWith("`\u200b")) inner = inner.slice(0, -1);
  if (inner === "\u200b") inner = "";
  return unescapeMrkdwn(inner.replace(/`\u200b(?=`)/g, "`"));
}

export function blocksOf(surface: SlackMessage | View): KnownBlock[] {
  return surface.blocks as KnownBlock[];
}

export function block(surface: SlackMessage | View, blockId: string): Json | undefined {
  return blocksOf(surface).find((b) => b.block_id === blockId) as Json | undefined;
}

/** Text of a section block, or undefined. */
export function sectionText(surface: SlackMessage | View, blockId: string): string | undefined {
  const found = block(surface, blockId);
  return (found?.text as { text?: string } | undefined)?.text;
}

export interface FoundButton {
  blockId: string;
  action_id: string;
  text: string;
  value: string;
  style?: string;
  confirm?: unknown;
}

/** Every button, in actions blocks and as section accessories. */
export function buttons(surface: SlackMessage | View): FoundButton[] {
  const found: FoundButton[] = [];
  for (const b of blocksOf(surface) as unknown as Json[]) {
    const elements = [...((b.elements as Json[] | undefined) ?? []), ...(b.accessory ? [b.accessory as Json] : [])];
    for (const element of elements) {
      if (element.type !== "button") continue;
      const result: FoundButton = {
        blockId: String(b.block_id),
        action_id: String(element.action_id),
        text: (element.text as { text: string }).text,
        value: String(element.value),
      };
      if (element.style) result.style = String(element.style);
      if (element.confirm) result.confirm = element.confirm;
      found.push(result);
    }
  }
  return found;
}

/** The "+30 min" button of request `id`'s pending message, as `buttons` lists it. */
export function moreTimeButton(id: string): FoundButton {
  return { blockId: "more_time", action_id: Action.moreTime, text: "+30 min", value: encodeButton({ r: id }) };
}

export function actionIds(surface: SlackMessage | View): string[] {
  return buttons(surface).map((b) => b.action_id);
}

/** Every string in the JSON with its key, except under the keys named in `skip`. */
export function strings(value: unknown, skip: string[] = [], key = ""): Array<{ key: string; text: string }> {
  if (typeof value === "string") return [{ key, text: value }];
  if (Array.isArray(value)) return value.flatMap((item) => strings(item, skip, key));
  if (typeof value !== "object" || value === null) return [];
  return Object.entries(value).flatMap(([k, v]) => (skip.includes(k) ? [] : strings(v, skip, k)));
}

/** Markup the builders write on purpose: mentions of the person who answered, date tokens, and the `> ` that starts each line of quoted agent text. */
const OWN_MARKUP = /(?:^|(?<=\n))> |<@U0ALICE01>|<!date\^\d+\^\{[a-z_ {}]+\}\|[0-9: \-A-Z]+>|Deny & stop/g;

/**
 * Strings carrying a `<`, `>` or a bare `&` that the builders did not write
 * on purpose; `own` lists more markup they write on purpose (the mentions
 * of a test's approvers), removed before looking.
 */
export function unescapedMarkup(value: unknown, skip: string[] = [], own: readonly string[] = []): string[] {
  return strings(value, skip)
    .map(({ key, text }) => ({ key, text: own.reduce((rest, markup) => rest.replaceAll(markup, ""), text).replace(OWN_MARKUP, "") }))
    .filter(({ text }) => /[<>]|&(?!amp;|lt;|gt;)/.test(text))
    .map(({ key, text }) => `${key}: ${text.slice(0, 120)}`);
}

/**
 * Strings carrying an invisible or direction-changing character the builders
 * did not write on purpose (they put a zero-width space next to a backtick,
 * to keep backticks from closing a code block).
 */
export function hiddenCharacters(value: unknown, skip: string[] = []): string[] {
  return strings(value, skip)
    .map(({ key, text }) => ({ key, text: text.replace(/`\u200b|\u200b`|^```\u200b```$/g, "`") }))
    .filter(({ text }) => hasHidden(text))
    .map(({ key, text }) => `${key}: ${JSON.stringify(text.slice(0, 120))}`);
}
