/**
 * Sending one part of an ended request's outcome notice
 * (requests/outcome-notices.ts decides when): the reply in the request
 * message's thread, or the DM to the person the request was made for, with
 * a link to the message. Every call goes through its line in the
 * ChannelQueue, like posts and reminders (reminder-poster.ts `paced`), so it
 * keeps to Slack's pace and waits out a 429; one attempt per call.
 *
 * The DM is a chat.postMessage with the person's user id as the channel:
 * Slack opens (or reuses) the bot's DM with them, with the `chat:write`
 * scope the relay already has, also for someone who never opened the app.
 * When Slack will not (the user is deactivated or in another workspace, the
 * workspace does not let apps DM them: `channel_not_found`, `not_in_channel`,
 * `user_not_found`, …) the call fails for good and the part is given up. A
 * link Slack cannot give (chat.getPermalink refused for good) is left out and
 * the channel named instead.
 */
import { PermanentDeliveryError } from "../requests/delivery.js";
import type { RequestRecord } from "../requests/model.js";
import type { NoticePart } from "../requests/store.js";
import { outcomeDirectMessage, outcomeReplyText } from "./blocks/index.js";
import { paced, type ReminderPosterDeps } from "./reminder-poster.js";

export async function sendOutcome(deps: ReminderPosterDeps, record: RequestRecord, part: NoticePart, now: number): Promise<void> {
  const slack = record.slack;
  if (!slack) throw new PermanentDeliveryError("the request has no Slack message");
  if (part === "thread") {
    const text = outcomeReplyText(record);
    await paced(deps, record.channel, now, () =>
      deps.client.chat.postMessage({ channel: slack.channel, thread_ts: slack.ts, text, unfurl_links: false, unfurl_media: false }),
    );
    return;
  }
  const user = record.policy?.requestedBy?.id;
  if (user === undefined) throw new PermanentDeliveryError("the request names no requestedBy");
  const permalink = await linkTo(deps, record, now);
  const { text, blocks } = outcomeDirectMessage(record, permalink);
  await paced(deps, user, now, () => deps.client.chat.postMessage({ channel: user, text, blocks, unfurl_links: false, unfurl_media: false }));
}

/** The message's permalink; undefined when Slack refuses it for good (a transient failure throws: the DM is retried whole). */
async function linkTo(deps: ReminderPosterDeps, record: RequestRecord, now: number): Promise<string | undefined> {
  const { channel, ts } = record.slack!;
  try {
    const reply = await paced(deps, undefined, now, () => deps.client.chat.getPermalink({ channel, message_ts: ts }));
    return typeof reply.permalink === "string" ? reply.permalink : undefined;
  } catch (error) {
    if (!(error instanceof PermanentDeliveryError)) throw error;
    deps.logger.warn({ id: record.id, reason: error.reason }, "no link to the request's message for its outcome DM");
    return undefined;
  }
}
