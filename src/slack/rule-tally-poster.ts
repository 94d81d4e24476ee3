/**
 * The thread reply that counts a rule's uses (requests/rule-tally.ts decides
 * when): posted under the message the rule was created on, then rewritten in
 * place. Paced through the ChannelQueue like every call; one attempt each.
 */
import type { webApi } from "@slack/bolt";
import { PermanentDeliveryError } from "../requests/delivery.js";
import type { Rule } from "../requests/rules.js";
import { ruleTallyText } from "./blocks/rules.js";
import { queueKey, type ChannelQueue } from "./channel-queue.js";
import { pacedCall } from "./paced.js";

export interface RuleTallyPosterDeps {
  client: webApi.WebClient;
  queue: ChannelQueue;
}

/** Longest a tally waits for its line before it is left to the next use (ms). */
const TURN_WAIT_MS = 10_000;

/** Posts the tally reply; resolves its ts. */
export async function postRuleTally({ client, queue }: RuleTallyPosterDeps, rule: Rule, now: number): Promise<string> {
  const message = rule.message;
  if (!message) throw new PermanentDeliveryError("the rule has no message to count its uses under");
  const reply = await pacedCall(queue, queueKey("chat.postMessage", message.channel), now + TURN_WAIT_MS, () =>
    client.chat.postMessage({ channel: message.channel, thread_ts: message.ts, text: ruleTallyText(rule), unfurl_links: false, unfurl_media: false }),
  );
  if (typeof reply.ts !== "string") throw new PermanentDeliveryError("Slack gave the tally reply no ts");
  return reply.ts;
}

/** Rewrites the tally reply with the rule's count. */
export async function updateRuleTally({ client, queue }: RuleTallyPosterDeps, rule: Rule, now: number): Promise<void> {
  const { message, tallyTs } = rule;
  if (!message || tallyTs === undefined) throw new PermanentDeliveryError("the rule has no tally reply to rewrite");
  await pacedCall(queue, queueKey("chat.update"), now + TURN_WAIT_MS, () =>
    client.chat.update({ channel: message.channel, ts: tallyTs, text: ruleTallyText(rule) }),
  );
}
