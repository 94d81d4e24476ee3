/**
 * One Web API call in its ChannelQueue line (per channel for posts, per
 * method otherwise), with Slack's errors turned into delivery errors: a 429
 * pauses the line for its Retry-After and comes back as a
 * TransientDeliveryError with it, a refusal for good as a
 * PermanentDeliveryError. One attempt: the caller's queue retries. Shared by
 * the calls that are side work of a request (reminders, rule tallies,
 * outcome notices, App Home): they take the side lane, behind request posts.
 */
import { PermanentDeliveryError, TransientDeliveryError } from "../requests/delivery.js";
import type { ChannelQueue } from "./channel-queue.js";
import { classifySlackError } from "./retry.js";

/** `call` once it holds the line `key`, waiting for its turn until `deadline` (Unix ms). */
export async function pacedCall<T>(queue: ChannelQueue, key: string, deadline: number, call: () => Promise<T>): Promise<T> {
  const turn = await queue.turn(key, deadline, { side: true });
  if (!turn) throw new TransientDeliveryError("Slack was rate limiting", queue.pausedFor(key));
  try {
    return await call();
  } catch (error) {
    const failure = classifySlackError(error);
    if (failure.kind === "permanent") throw new PermanentDeliveryError(failure.code);
    if (failure.retryAfterMs !== undefined) queue.pause(key, failure.retryAfterMs);
    throw new TransientDeliveryError(failure.code, failure.retryAfterMs);
  } finally {
    turn.release();
  }
}
