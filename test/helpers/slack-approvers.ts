/**
 * What the Slack tests of who may answer (docs/architecture.md §7) share on top of
 * slack-relay.ts: clicks by a given person (a Slack Connect guest too), the
 * agent's long-poll watched while people click, Slack's user group replies,
 * and the ephemeral notices people got.
 */
import { expect } from "vitest";
import type { Person } from "../../src/protocol/request-view.js";
import type { RequestRecord } from "../../src/requests/model.js";
import { encodeButton } from "../../src/slack/ids.js";
import type { SlackRelay } from "./slack-relay.js";
import { blockAction, slackUser } from "./slack.js";

/** usergroups.users.list answered with these members. */
export const members = (...ids: string[]) => ({ ok: true, users: ids });

/**
 * `user` clicks the button `actionId` on request `id`'s message and Slack's
 * calls settle; with `teamId`, the person is from that workspace.
 */
export async function clickAs(relay: SlackRelay, actionId: string, id: string, user: Person, teamId?: string): Promise<void> {
  const payload = blockAction({ actionId, value: encodeButton({ r: id }), user });
  const response = await relay.post(teamId === undefined ? payload : { ...payload, user: { ...slackUser(user), team_id: teamId } });
  expect(response.status).toBe(200);
  await relay.settle();
}

/** The args of every chat.postEphemeral so far. */
export const ephemerals = (relay: SlackRelay) => relay.api.callsTo("chat.postEphemeral").map((call) => call.args);

export interface WatchedAgent {
  /** The long-poll's answer: the request once it ended (or as it was when the relay closed). */
  answer: Promise<RequestRecord | undefined>;
  /** true while no answer has reached the agent (checked a few milliseconds after the call, so a wake-up in flight lands first). */
  stillWaiting(): Promise<boolean>;
}

/** An agent long-polling request `id`, as one blocked on it would. */
export function watchAgent(relay: SlackRelay, id: string): WatchedAgent {
  let ended = false;
  const answer = relay.service.wait(id, 60_000).then((record) => {
    ended = record?.status !== "pending";
    return record;
  });
  return {
    answer,
    async stillWaiting() {
      await new Promise((resolve) => setTimeout(resolve, 5));
      return !ended;
    },
  };
}
