/**
 * The RequestMessenger the service uses to reach Slack: posts a request's
 * message and rewrites it once the request ends. Transient failures are
 * retried here (see retry.ts); a permanent refusal surfaces as
 * PermanentDeliveryError so the service marks the request `failed`. The
 * service's `keepTrying` is asked before every attempt and wait of a post
 * (it renews the post lease) and may stop it.
 */
import type { webApi } from "@slack/bolt";
import type { Logger } from "../logger.js";
import type { RequestRecord } from "../requests/model.js";
import type { SlackRef } from "../protocol/request-view.js";
import { PermanentDeliveryError, type PostOptions, type RequestMessenger } from "../requests/delivery.js";
import { endedMessage, requestMessage } from "./blocks/index.js";
import { defaultSleep, RetryStoppedError, withSlackRetry } from "./retry.js";

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
}

export function createSlackMessenger({
  client,
  logger,
  now = Date.now,
  sleep = defaultSleep,
  random = Math.random,
  updateRetryMs = 5 * 60_000,
}: SlackMessengerDeps): RequestMessenger {
  const retry = { logger, now, sleep, random };
  return {
    async post(record: RequestRecord, { keepTrying }: PostOptions = {}): Promise<SlackRef | undefined> {
      const { text, blocks } = requestMessage(record);
      const send = () => client.chat.postMessage({ channel: record.channel, text, blocks, unfurl_links: false, unfurl_media: false });
      const options = { ...retry, deadline: record.expiresAt, what: "chat.postMessage", ...(keepTrying ? { keepTrying } : {}) };
      let response: Awaited<ReturnType<typeof send>>;
      try {
        response = await withSlackRetry(send, options);
      } catch (error) {
        if (error instanceof RetryStoppedError) return undefined;
        throw error;
      }
      if (typeof response.channel !== "string" || typeof response.ts !== "string") {
        throw new PermanentDeliveryError("chat.postMessage returned no channel or ts");
      }
      logger.debug({ id: record.id, channel: response.channel, ts: response.ts }, "slack message posted");
      return { channel: response.channel, ts: response.ts };
    },

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
