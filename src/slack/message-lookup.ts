/**
 * Finding the messages the relay posted for a request, through the message
 * metadata every request message carries (event type + request id). Slack
 * may take a post and the reply still be lost (a network blip): before it
 * posts again the poster looks the channel's recent history up and adopts
 * the message it finds; after a post that followed such a failure it looks
 * again for any other copy; and a click on a message the store does not know
 * counts once Slack confirms, from the channel's history, that the message
 * at that ts is the relay's own and carries the request's id.
 */
import type { webApi } from "@slack/bolt";
import type { SlackRef } from "../protocol/request-view.js";

/** `metadata.event_type` of every request message. */
export const REQUEST_EVENT = "approval_relay_request";

/** The message metadata a request's message carries. */
export function requestMetadata(requestId: string) {
  return { event_type: REQUEST_EVENT, event_payload: { request_id: requestId } };
}

interface HistoryMessage {
  ts?: string;
  bot_id?: string;
  metadata?: { event_type?: string; event_payload?: Record<string, unknown> };
}

/** true when `message` is one the relay posted for `requestId` (by its bot, `botId`). */
function isFor(message: HistoryMessage, requestId: string, botId: string): boolean {
  return (
    message.bot_id === botId &&
    message.metadata?.event_type === REQUEST_EVENT &&
    message.metadata.event_payload?.request_id === requestId &&
    typeof message.ts === "string"
  );
}

export class MessageLookup {
  private bot: Promise<string | undefined> | undefined;

  constructor(private readonly client: webApi.WebClient) {}

  /**
   * The messages posted in `channel` for `requestId` since `sinceMs` (Unix
   * ms; a minute of slack is added for clock skew), oldest first. Throws
   * what the WebClient throws.
   */
  async posted(channel: string, requestId: string, sinceMs: number): Promise<SlackRef[]> {
    const botId = await this.botId().catch(() => undefined);
    if (botId === undefined) return [];
    const reply = await this.client.conversations.history({
      channel,
      oldest: ((sinceMs - 60_000) / 1000).toFixed(6),
      include_all_metadata: true,
      limit: 200,
    });
    const messages = (reply.messages ?? []) as HistoryMessage[];
    return messages
      .filter((message) => isFor(message, requestId, botId))
      .map((message) => ({ channel, ts: message.ts! }))
      .sort((a, b) => (a.ts < b.ts ? -1 : a.ts > b.ts ? 1 : 0));
  }

  /**
   * true when the message at `ref` is the relay's own and was posted for
   * `requestId`. Throws what the WebClient throws when Slack cannot say
   * (auth.test or conversations.history failing), so a click is not taken
   * for one on a stranger's message while Slack is down.
   */
  async isRequestMessage(ref: SlackRef, requestId: string): Promise<boolean> {
    const botId = await this.botId();
    if (botId === undefined) return false;
    const reply = await this.client.conversations.history({
      channel: ref.channel,
      latest: ref.ts,
      oldest: ref.ts,
      inclusive: true,
      limit: 1,
      include_all_metadata: true,
    });
    const message = (reply.messages ?? [])[0] as HistoryMessage | undefined;
    return message !== undefined && message.ts === ref.ts && isFor(message, requestId, botId);
  }

  /** The relay's bot id (auth.test, asked once; asked again after a failure, which throws). */
  private botId(): Promise<string | undefined> {
    this.bot ??= this.client.auth.test().then(
      (reply) => (typeof reply.bot_id === "string" ? reply.bot_id : undefined),
      (error: unknown) => {
        this.bot = undefined;
        throw error;
      },
    );
    return this.bot;
  }
}
