/**
 * Sending one reminder or escalation (requests/reminders.ts decides when):
 * a reply in the request message's thread that mentions who may answer,
 * and for an escalation that names a channel, a message there linking to
 * the request. Every call goes through the channel's line in the
 * ChannelQueue, like posts, so reminders keep to Slack's pace and wait out
 * a 429. One attempt per call: a transient failure comes back as
 * TransientDeliveryError and the reminder queue retries it later. An
 * escalation's thread reply and its channel post are separate schedule
 * entries (requests/policy.ts reminderSchedule), each completed on its own:
 * a retry of the channel post never repeats the thread reply.
 */
import type { webApi } from "@slack/bolt";
import type { Logger } from "../logger.js";
import { PermanentDeliveryError } from "../requests/delivery.js";
import type { RequestRecord } from "../requests/model.js";
import type { ScheduleEntry } from "../requests/policy.js";
import { escalationPost, escalationText, reminderText } from "./blocks/index.js";
import { queueKey, type ChannelQueue } from "./channel-queue.js";
import { pacedCall } from "./paced.js";

export interface ReminderPosterDeps {
  client: webApi.WebClient;
  queue: ChannelQueue;
  logger: Logger;
}

/** Longest a reminder waits for its channel's turn before it is handed back to be retried (ms). */
const TURN_WAIT_MS = 10_000;

export async function sendReminder(deps: ReminderPosterDeps, record: RequestRecord, entry: ScheduleEntry, now: number): Promise<void> {
  const slack = record.slack;
  if (!slack) throw new PermanentDeliveryError("the request has no Slack message to remind in");
  if (entry.type === "escalation_post") {
    const { channel } = entry;
    const link = await paced(deps, undefined, now, () => deps.client.chat.getPermalink({ channel: slack.channel, message_ts: slack.ts }));
    const post = escalationPost(record, typeof link.permalink === "string" ? link.permalink : "", now);
    await paced(deps, channel, now, () =>
      deps.client.chat.postMessage({ channel, text: post.text, blocks: post.blocks, unfurl_links: false, unfurl_media: false }),
    );
    deps.logger.debug({ id: record.id, channel }, "escalation posted in its channel");
    return;
  }
  const text = entry.type === "reminder" ? reminderText(record, now) : escalationText(record, entry.escalation, now);
  await paced(deps, record.channel, now, () =>
    deps.client.chat.postMessage({ channel: slack.channel, thread_ts: slack.ts, text, unfurl_links: false, unfurl_media: false }),
  );
}

/** One Web API call in its line (per channel for posts), with Slack's errors turned into delivery errors; outcome-poster.ts calls through it too. */
export async function paced<T>(deps: ReminderPosterDeps, channel: string | undefined, now: number, call: () => Promise<T>): Promise<T> {
  const key = channel === undefined ? queueKey("chat.getPermalink") : queueKey("chat.postMessage", channel);
  return pacedCall(deps.queue, key, now + TURN_WAIT_MS, call);
}
