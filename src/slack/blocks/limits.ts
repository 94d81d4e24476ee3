/**
 * What a Slack message is to the builders, Slack's Block Kit limits (in
 * limit-values.ts) and the text measure the builders budget with. The
 * checkers that list every limit a message or modal breaks are test code:
 * test/helpers/block-kit-limits.ts.
 */
import type { KnownBlock } from "@slack/types";

export { CODE_PER_SECTION, LIMITS } from "./limit-values.js";

export interface SlackMessage {
  /** Notification fallback text, escaped. */
  text: string;
  blocks: KnownBlock[];
}

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value);

/** Sum of the `text` of every plain_text / mrkdwn object, however deep. */
export function textObjectsLength(value: unknown): number {
  if (Array.isArray(value)) return value.reduce((sum: number, item) => sum + textObjectsLength(item), 0);
  if (!isObject(value)) return 0;
  if ((value.type === "plain_text" || value.type === "mrkdwn") && typeof value.text === "string") return value.text.length;
  return Object.values(value).reduce((sum: number, item) => sum + textObjectsLength(item), 0);
}
