/**
 * What every Slack listener group needs: its dependencies, the person
 * behind an interaction, and the check that an interaction really comes
 * from the message a request was posted as.
 */
import type { webApi } from "@slack/bolt";
import { z } from "zod";
import type { Logger } from "../../logger.js";
import type { Person, SlackRef } from "../../protocol/request-view.js";
import type { RequestRecord } from "../../requests/model.js";
import type { RequestService } from "../../requests/service.js";

export interface ListenerDeps {
  service: Pick<RequestService, "get" | "answer" | "findBySlackMessage">;
  /** Bot-token WebClient for views.open / views.update / chat.postEphemeral. */
  client: webApi.WebClient;
  logger: Logger;
}

/** `user` of block_actions and view_submission payloads. */
export const SlackUser = z.looseObject({
  id: z.string().min(1),
  name: z.string().optional(),
  username: z.string().optional(),
});
export type SlackUser = z.infer<typeof SlackUser>;

export function personOf(user: SlackUser): Person {
  const name = user.name ?? user.username;
  return name ? { id: user.id, name } : { id: user.id };
}

/** The name used in "Denied by <name> in Slack.": Slack's user name, else the id. */
export function displayName(user: SlackUser): string {
  return user.name ?? user.username ?? user.id;
}

/** true when `ref` names exactly the message the request was posted as. */
export function isRequestMessage(record: RequestRecord, ref: Partial<SlackRef>): boolean {
  return record.slack !== undefined && record.slack.channel === ref.channel && record.slack.ts === ref.ts;
}
