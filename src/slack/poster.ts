/**
 * Posting one request's message: through the channel's line in the
 * ChannelQueue (Slack's pace, Retry-After honoured), retrying every
 * transient failure until the request's deadline, never past it. A 429
 * pauses the whole channel, so the request keeps its place at the head of
 * the line and the others wait with it instead of each being refused.
 */
import type { webApi } from "@slack/bolt";
import type { Logger } from "../logger.js";
import type { SlackRef } from "../protocol/request-view.js";
import { PermanentDeliveryError, type PostOptions } from "../requests/delivery.js";
import type { RequestRecord } from "../requests/model.js";
import { requestMessage } from "./blocks/index.js";
import { queueKey, type ChannelQueue, type Turn } from "./channel-queue.js";
import { backoffDelay, classifySlackError, type SlackFailure } from "./retry.js";

export interface PosterDeps {
  client: webApi.WebClient;
  queue: ChannelQueue;
  logger: Logger;
  /** Unix time in milliseconds. */
  now: () => number;
  sleep: (ms: number) => Promise<void>;
  /** In [0, 1), for backoff jitter. */
  random: () => number;
}

const RATE_LIMITED = "Slack was rate limiting";

/** What a failed attempt tells the service, for the `expired` error when the deadline comes first. */
export function describeFailure(failure: SlackFailure): string {
  return failure.code === "ratelimited" || failure.code === "http_429" ? RATE_LIMITED : `Slack did not take the message (${failure.code})`;
}

/**
 * Posts `record`; resolves the message's channel and ts, or undefined when
 * `keepTrying` stopped it or its deadline came first. Throws
 * PermanentDeliveryError when Slack refuses for good.
 */
export async function postRequest(deps: PosterDeps, record: RequestRecord, { keepTrying, onRetry }: PostOptions = {}): Promise<SlackRef | undefined> {
  const { client, queue, logger, now, sleep, random } = deps;
  const { text, blocks } = requestMessage(record);
  const key = queueKey("chat.postMessage", record.channel);
  const deadline = record.expiresAt;
  // Asked once before joining the line too: the service keeps its lease on the request while it waits.
  if (keepTrying && !(await keepTrying(now()))) return undefined;
  let turn: Turn | undefined;
  let failed = false;
  try {
    for (let attempt = 1; ; attempt += 1) {
      if (!turn && !(turn = await queue.turn(key, deadline, { front: attempt > 1 }))) {
        // The channel's line did not reach this request before its deadline.
        if (!failed) onRetry?.(RATE_LIMITED);
        return undefined;
      }
      if (keepTrying && !(await keepTrying(now()))) {
        turn.release(false);
        return undefined;
      }
      let failure: SlackFailure;
      try {
        const response = await client.chat.postMessage({ channel: record.channel, text, blocks, unfurl_links: false, unfurl_media: false });
        if (typeof response.channel !== "string" || typeof response.ts !== "string") {
          throw new PermanentDeliveryError("chat.postMessage returned no channel or ts");
        }
        logger.debug({ id: record.id, channel: response.channel, ts: response.ts, attempts: attempt }, "slack message posted");
        return { channel: response.channel, ts: response.ts };
      } catch (error) {
        if (error instanceof PermanentDeliveryError) throw error;
        failure = classifySlackError(error);
        if (failure.kind === "permanent") throw new PermanentDeliveryError(failure.code);
      }
      failed = true;
      onRetry?.(describeFailure(failure));
      if (failure.retryAfterMs !== undefined) {
        // The whole channel waits it out; this request keeps the line and goes first after the pause.
        queue.pause(key, failure.retryAfterMs);
        logger.info({ id: record.id, code: failure.code, attempt, retryAfterMs: failure.retryAfterMs }, "slack post rate limited, channel paused");
        if (keepTrying && !(await keepTrying(now() + failure.retryAfterMs))) return undefined;
        if (!(await turn.again())) {
          turn = undefined;
          return undefined;
        }
        continue;
      }
      // Anything else transient: let the rest of the line go while this request backs off.
      turn.release();
      turn = undefined;
      const delay = backoffDelay(attempt, { random });
      if (now() + delay > deadline) return undefined;
      if (keepTrying && !(await keepTrying(now() + delay))) return undefined;
      logger.info({ id: record.id, code: failure.code, attempt, delayMs: delay }, "slack post failed, retrying");
      await sleep(delay);
    }
  } finally {
    turn?.release();
  }
}
