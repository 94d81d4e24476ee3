/**
 * The RequestMessenger the service uses to reach Slack: posts a request's
 * message (poster.ts, paced by the ChannelQueue), rewrites it as approvals
 * come in and once the request ends, and sends its reminders and
 * escalations (reminder-poster.ts), its outcome notices (outcome-poster.ts)
 * and the thread tallies of rules (rule-tally-poster.ts). A post retries
 * transient failures itself until the request's deadline; a message update,
 * a reminder, a notice and a tally are one attempt each (the service's
 * queues retry them). A permanent refusal surfaces as PermanentDeliveryError
 * (a post's request is marked `failed`). The service's `keepTrying` is asked
 * before every attempt of a post and may stop it.
 */
import type { webApi } from "@slack/bolt";
import type { Logger } from "../logger.js";
import { messagesOf, type RequestRecord } from "../requests/model.js";
import { PermanentDeliveryError, TransientDeliveryError, type PostOptions, type RequestMessenger } from "../requests/delivery.js";
import { endedMessage } from "./blocks/index.js";
import { ChannelQueue, queueKey } from "./channel-queue.js";
import { MessageLookup, requestMetadata } from "./message-lookup.js";
import { pacedCall } from "./paced.js";
import { postRequest } from "./poster.js";
import { sendOutcome } from "./outcome-poster.js";
import { sendReminder } from "./reminder-poster.js";
import { postRuleTally, updateRuleTally } from "./rule-tally-poster.js";
import { classifySlackError, defaultSleep } from "./retry.js";

export interface SlackMessengerDeps {
  /** Built with `retryConfig: { retries: 0 }` and `rejectRateLimitedCalls: true` (see createSlackClient). */
  client: webApi.WebClient;
  logger: Logger;
  /** Unix time in milliseconds. */
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
  /** Returns a number in [0, 1), for backoff jitter. */
  random?: () => number;
  /** Longest a message update waits for a rate-limit pause to end before it is handed back to be retried later (ms). */
  updateWaitMs?: number;
  /** Paces every call; one per messenger by default. */
  queue?: ChannelQueue;
  /** Finds a request's messages in a channel's history; one per messenger by default. */
  lookup?: MessageLookup;
}

export function createSlackMessenger({
  client,
  logger,
  now = Date.now,
  sleep = defaultSleep,
  random = Math.random,
  updateWaitMs = 10_000,
  queue = new ChannelQueue({ now, sleep }),
  lookup = new MessageLookup(client),
}: SlackMessengerDeps): RequestMessenger {
  const poster = { client, queue, logger, now, sleep, random, lookup };
  return {
    post: (record: RequestRecord, options?: PostOptions) => postRequest(poster, record, options),

    remind: (record, entry, at) => sendReminder({ client, queue, logger }, record, entry, at),

    tellOutcome: (record, part, at) => sendOutcome({ client, queue, logger }, record, part, at),

    postRuleTally: (rule) => postRuleTally({ client, queue }, rule, now()),

    updateRuleTally: (rule) => updateRuleTally({ client, queue }, rule, now()),

    async showEnded(record: RequestRecord): Promise<void> {
      const main = record.slack;
      // The main message first, each once; a copy that is gone (deleted by someone) needs no update. A request whose
      // post was never recorded (its poster died before Slack's reply) has copies only.
      const messages = messagesOf(record);
      if (messages.length === 0) return;
      const { text, blocks } = endedMessage(record);
      const metadata = requestMetadata(record.id);
      const key = queueKey("chat.update");
      for (const [index, { channel, ts }] of messages.entries()) {
        // Wait out a pause Slack asked for (429) when it is short; a longer one comes back as the retry's delay.
        const turn = await queue.turn(key, now() + updateWaitMs);
        if (!turn) throw new TransientDeliveryError("chat.update is paused by Slack's rate limit", queue.pausedFor(key));
        try {
          await client.chat.update({ channel, ts, text, blocks, metadata });
        } catch (error) {
          const failure = classifySlackError(error);
          if (failure.kind === "permanent" && (index > 0 || !main)) continue;
          if (failure.kind === "permanent") throw new PermanentDeliveryError(failure.code);
          if (failure.retryAfterMs !== undefined) queue.pause(key, failure.retryAfterMs);
          throw new TransientDeliveryError(failure.code, failure.retryAfterMs);
        } finally {
          turn.release();
        }
      }
    },

    findPosted: (record: RequestRecord) =>
      pacedCall(queue, queueKey("conversations.history"), now() + updateWaitMs, () => lookup.posted(record.channel, record.id, record.createdAt)),
  };
}
