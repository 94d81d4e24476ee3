/**
 * The RequestMessenger the service uses to reach Slack: posts a request's
 * message (poster.ts, paced by the ChannelQueue) and rewrites it once the
 * request ends. Transient failures are retried here; a permanent refusal
 * surfaces as PermanentDeliveryError so the service marks the request
 * `failed`. The service's `keepTrying` is asked before every attempt of a
 * post and may stop it.
 */
import type { webApi } from "@slack/bolt";
import type { Logger } from "../logger.js";
import type { RequestRecord } from "../requests/model.js";
import type { PostOptions, RequestMessenger } from "../requests/delivery.js";
import { endedMessage } from "./blocks/index.js";
import { ChannelQueue } from "./channel-queue.js";
import { postRequest } from "./poster.js";
import { defaultSleep, withSlackRetry } from "./retry.js";

export interface SlackMessengerDeps {
  /** Built with `retryConfig: { retries: 0 }` and `rejectRateLimitedCalls: true` (see createSlackClient). */
  client: webApi.WebClient;
  logger: Logger;
  /** Unix time in milliseconds. */
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
  /** Returns a number in [0, 1), for backoff jitter. */
  random?: () => number;
  /** How long an ended request's message update keeps being retried (ms). */
  updateRetryMs?: number;
  /** Paces every call; one per messenger by default. */
  queue?: ChannelQueue;
}

export function createSlackMessenger({
  client,
  logger,
  now = Date.now,
  sleep = defaultSleep,
  random = Math.random,
  updateRetryMs = 5 * 60_000,
  queue = new ChannelQueue({ now, sleep }),
}: SlackMessengerDeps): RequestMessenger {
  const retry = { logger, now, sleep, random };
  const poster = { client, queue, logger, now, sleep, random };
  return {
    post: (record: RequestRecord, options?: PostOptions) => postRequest(poster, record, options),

    async showEnded(record: RequestRecord): Promise<void> {
      if (!record.slack) return;
      const { channel, ts } = record.slack;
      const { text, blocks } = endedMessage(record);
      await withSlackRetry(() => client.chat.update({ channel, ts, text, blocks }), {
        ...retry,
        deadline: now() + updateRetryMs,
        what: "chat.update",
      });
    },
  };
}
