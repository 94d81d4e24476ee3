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
import { PermanentDeliveryError, type PostedMessage, type PostOptions } from "../requests/delivery.js";
import type { RequestRecord } from "../requests/model.js";
import { requestMessage } from "./blocks/index.js";
import { queueKey, type ChannelQueue, type Turn } from "./channel-queue.js";
import { requestMetadata, type MessageLookup } from "./message-lookup.js";
import { backoffDelay, classifySlackError, type SlackFailure } from "./retry.js";

export interface PosterDeps {
  client: webApi.WebClient;
  queue: ChannelQueue;
  /** Finds what was posted for a request when a reply was lost. */
  lookup: Pick<MessageLookup, "posted">;
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
 * A failure after which the message may have been posted all the same (the
 * reply was lost, or Slack failed after storing it): anything transient but
 * a rate limit, which refuses the call before it is run.
 */
function ambiguous(failure: SlackFailure): boolean {
  return failure.kind === "transient" && failure.retryAfterMs === undefined && failure.code !== "ratelimited" && failure.code !== "http_429";
}

/** The request's messages already in its channel since `since` (Unix ms); undefined when Slack could not say. */
async function lookUp(deps: PosterDeps, record: RequestRecord, since: number): Promise<SlackRef[] | undefined> {
  const key = queueKey("conversations.history");
  const turn = await deps.queue.turn(key, record.expiresAt);
  if (!turn) return undefined;
  try {
    return await deps.lookup.posted(record.channel, record.id, since);
  } catch (error) {
    const failure = classifySlackError(error);
    if (failure.kind === "transient" && failure.retryAfterMs !== undefined) deps.queue.pause(key, failure.retryAfterMs);
    deps.logger.warn({ id: record.id, code: failure.code }, "could not look the channel's history up for the request's message");
    return undefined;
  } finally {
    turn.release();
  }
}

/**
 * Posts `record`; resolves the message's channel and ts, or undefined when
 * `keepTrying` stopped it or its deadline came first. Throws
 * PermanentDeliveryError when Slack refuses for good. After a failure that
 * may have posted the message all the same, the channel's history is looked
 * up before posting again (a message found is adopted), and once more after
 * posting (any other copy found is returned in `others`).
 */
export async function postRequest(deps: PosterDeps, record: RequestRecord, { keepTrying, onRetry }: PostOptions = {}): Promise<PostedMessage | undefined> {
  const { client, queue, logger, now, sleep, random } = deps;
  const firstAttemptAt = now();
  let uncertain = false;
  const { text, blocks } = requestMessage(record);
  const key = queueKey("chat.postMessage", record.channel);
  const deadline = record.expiresAt;
  // Asked once before joining the line too: the service keeps its lease on the request while it waits.
  if (keepTrying && !(await keepTrying(now()))) return undefined;
  let turn: Turn | undefined;
  let failed = false;
  try {
    for (let attempt = 1; ; attempt += 1) {
      if (!turn && !(turn = await queue.turn(key, deadline, { front: attempt > 1, owner: record.tokenName }))) {
        // The channel's line did not reach this request before its deadline.
        if (!failed) onRetry?.(RATE_LIMITED);
        return undefined;
      }
      const held = turn;
      if (keepTrying && !(await keepTrying(now()))) {
        held.release(false);
        return undefined;
      }
      if (uncertain) {
        const found = await lookUp(deps, record, firstAttemptAt);
        if (found && found.length > 0) {
          held.release(false);
          turn = undefined;
          logger.warn({ id: record.id, ts: found[0]!.ts, copies: found.length }, "slack took the post whose reply was lost: adopting that message");
          return { ...found[0]!, others: found.slice(1) };
        }
      }
      let failure: SlackFailure;
      try {
        const response = await client.chat.postMessage({
          channel: record.channel,
          text,
          blocks,
          metadata: requestMetadata(record.id),
          unfurl_links: false,
          unfurl_media: false,
        });
        if (typeof response.channel !== "string" || typeof response.ts !== "string") {
          throw new PermanentDeliveryError("chat.postMessage returned no channel or ts");
        }
        logger.debug({ id: record.id, channel: response.channel, ts: response.ts, attempts: attempt }, "slack message posted");
        const posted = { channel: response.channel, ts: response.ts };
        if (!uncertain) return posted;
        // An earlier attempt may have been posted after all without showing up in the history yet.
        held.release();
        turn = undefined;
        const others = ((await lookUp(deps, record, firstAttemptAt)) ?? []).filter((found) => found.ts !== posted.ts);
        return others.length > 0 ? { ...posted, others } : posted;
      } catch (error) {
        if (error instanceof PermanentDeliveryError) throw error;
        failure = classifySlackError(error);
        if (failure.kind === "permanent") throw new PermanentDeliveryError(failure.code);
      }
      failed = true;
      if (ambiguous(failure)) uncertain = true;
      onRetry?.(describeFailure(failure));
      if (failure.retryAfterMs !== undefined) {
        // The whole channel waits it out; this request keeps the line and goes first after the pause.
        queue.pause(key, failure.retryAfterMs);
        logger.info({ id: record.id, code: failure.code, attempt, retryAfterMs: failure.retryAfterMs }, "slack post rate limited, channel paused");
        if (keepTrying && !(await keepTrying(now() + failure.retryAfterMs))) return undefined;
        if (!(await held.again())) {
          turn = undefined;
          return undefined;
        }
        continue;
      }
      // Anything else transient: let the rest of the line go while this request backs off.
      held.release();
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
