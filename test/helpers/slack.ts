/**
 * Slack as the relay sees it in tests: payload builders with overrides
 * (block_actions, view_submission, message and App Home events) shaped like Slack's,
 * request signing, and a poster that sends them the way Slack does. Slack's
 * Web API is the loopback stand-in (./slack-web-api.ts), scripted per test
 * with ./slack-script.ts.
 */
import { createHmac } from "node:crypto";
import type { RequestRecord } from "../../src/requests/model.js";
import { CreateRequestBody } from "../../src/protocol/request-body.js";
import type { Person } from "../../src/protocol/request-view.js";
import { ALICE, RELAY_BOT, TEAM_ID } from "../fixtures/people.js";
import { BOT_TOKEN } from "./slack-web-api.js";

export { BOT_TOKEN, TEAM_ID };

export const SIGNING_SECRET = "5f1e7d3c9b2a4e6f8d0c1b3a5e7f9d2c";
export const CHANNEL = "C0APPROVALS";

export const MESSAGE_TS = "1700000000.000100";

/** A stored request as the listeners read it; `input` is what an agent would POST. */
export function recordOf(input: unknown, overrides: Partial<RequestRecord> = {}): RequestRecord {
  return {
    id: "req-1",
    status: "pending",
    tokenName: "ci-bot",
    channel: CHANNEL,
    body: CreateRequestBody.parse(input),
    createdAt: 1_700_000_000_000,
    expiresAt: 1_700_000_600_000,
    slack: { channel: CHANNEL, ts: MESSAGE_TS },
    ...overrides,
  };
}

const team = { id: TEAM_ID, domain: "acme" };

/** A person (test/fixtures/people.ts) as Slack names the user in a payload. */
export function slackUser({ id, name }: Person) {
  return name === undefined ? { id, team_id: team.id } : { id, username: name, name, team_id: team.id };
}

export interface BlockActionOptions {
  actionId: string;
  value?: string;
  user?: Person;
  channel?: string;
  ts?: string;
  triggerId?: string;
  /** Set for clicks inside a modal (no channel, no message). */
  view?: { id: string; hash?: string; privateMetadata?: string; callbackId?: string };
}

export function blockAction({ actionId, value, user = ALICE, channel = CHANNEL, ts = MESSAGE_TS, triggerId = "trigger-1", view }: BlockActionOptions) {
  const action = { type: "button", action_id: actionId, block_id: "actions", value, action_ts: "1700000001.000200" };
  const common = { type: "block_actions", team, user: slackUser(user), api_app_id: "A0RELAY", token: "legacy", trigger_id: triggerId, actions: [action] };
  if (view) {
    return {
      ...common,
      container: { type: "view", view_id: view.id },
      view: {
        id: view.id,
        type: "modal",
        hash: view.hash ?? "hash-1",
        callback_id: view.callbackId ?? "relay_input_modal",
        private_metadata: view.privateMetadata ?? "",
        state: { values: {} },
      },
    };
  }
  return {
    ...common,
    container: { type: "message", message_ts: ts, channel_id: channel, is_ephemeral: false },
    channel: { id: channel, name: "approvals" },
    message: { type: "message", ts, bot_id: RELAY_BOT.botId, text: "request" },
    response_url: "https://hooks.slack.test/actions/T0TEAM/1/abc",
  };
}

export interface ViewSubmissionOptions {
  callbackId: string;
  privateMetadata: string;
  values?: Record<string, Record<string, unknown>>;
  user?: Person;
  viewId?: string;
}

export function viewSubmission({ callbackId, privateMetadata, values = {}, user = ALICE, viewId = "V0MODAL" }: ViewSubmissionOptions) {
  return {
    type: "view_submission",
    team,
    user: slackUser(user),
    api_app_id: "A0RELAY",
    token: "legacy",
    trigger_id: "trigger-2",
    view: {
      id: viewId,
      team_id: team.id,
      type: "modal",
      callback_id: callbackId,
      private_metadata: privateMetadata,
      hash: "hash-2",
      blocks: [],
      state: { values },
    },
    response_urls: [],
  };
}

export interface MessageEventOptions {
  text: string;
  user?: string;
  channel?: string;
  ts?: string;
  threadTs?: string;
  botId?: string;
  subtype?: string;
}

export function messageEvent({ text, user = ALICE.id, channel = CHANNEL, ts = "1700000050.000300", threadTs, botId, subtype }: MessageEventOptions) {
  // Slack names the workspace of the person who wrote (`team`, and `user_team` in shared channels).
  const event: Record<string, unknown> = { type: "message", channel, user, text, ts, team: team.id, event_ts: ts, channel_type: "channel" };
  if (threadTs !== undefined) event.thread_ts = threadTs;
  if (botId !== undefined) event.bot_id = botId;
  if (subtype !== undefined) event.subtype = subtype;
  return { token: "legacy", team_id: team.id, api_app_id: "A0RELAY", event, type: "event_callback", event_id: `Ev${ts}`, event_time: 1700000050 };
}

/** A person opening the app's Home tab (or its Messages tab), as the Events API sends it. */
export function appHomeOpened({ user = ALICE.id, tab = "home" }: { user?: string; tab?: "home" | "messages" } = {}) {
  const event = { type: "app_home_opened", user, channel: "D0APPHOME1", tab, event_ts: "1700000060.000400" };
  return { token: "legacy", team_id: team.id, api_app_id: "A0RELAY", event, type: "event_callback", event_id: "Ev0HOME", event_time: 1700000060 };
}

/** A click on a button of the app's Home tab: no channel, no message, the Home view as its container. */
export function homeAction({ actionId, value, user = ALICE }: { actionId: string; value?: string; user?: Person }) {
  const click = blockAction({ actionId, ...(value === undefined ? {} : { value }), user, view: { id: "V0HOME", callbackId: "" } });
  return { ...click, view: { id: "V0HOME", type: "home", hash: "hash-home", callback_id: "", private_metadata: "", state: { values: {} } } };
}

/** Element state as Slack puts it in view.state.values. */
export const state = {
  text: (value: string | null) => ({ type: "plain_text_input", value }),
  radio: (value: string | null) => ({ type: "radio_buttons", selected_option: value === null ? null : { value, text: { type: "plain_text", text: value } } }),
  select: (value: string | null) => ({ type: "static_select", selected_option: value === null ? null : { value, text: { type: "plain_text", text: value } } }),
  checkboxes: (values: string[]) => ({ type: "checkboxes", selected_options: values.map((value) => ({ value, text: { type: "plain_text", text: value } })) }),
  multiSelect: (values: string[]) => ({
    type: "multi_static_select",
    selected_options: values.map((value) => ({ value, text: { type: "plain_text", text: value } })),
  }),
};

/** Slack's v0 request signature. */
export function sign(body: string, secret = SIGNING_SECRET, timestamp = Math.floor(Date.now() / 1000)): string {
  return `v0=${createHmac("sha256", secret).update(`v0:${timestamp}:${body}`).digest("hex")}`;
}

export interface PostOptions {
  secret?: string;
  /** Unix time in seconds; now by default. */
  timestamp?: number;
  /** Replaces the computed signature (forgery tests). */
  signature?: string;
}

/**
 * Posts a payload as Slack does: interactions form-encoded as `payload=`,
 * events as JSON; signed with a fresh timestamp unless told otherwise.
 */
export async function postToSlackEndpoint(url: string, payload: { type: string }, options: PostOptions = {}) {
  const timestamp = options.timestamp ?? Math.floor(Date.now() / 1000);
  const isEvent = payload.type === "event_callback";
  const body = isEvent ? JSON.stringify(payload) : new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
  const response = await fetch(url, {
    method: "POST",
    headers: {
      "content-type": isEvent ? "application/json" : "application/x-www-form-urlencoded",
      "x-slack-request-timestamp": String(timestamp),
      "x-slack-signature": options.signature ?? sign(body, options.secret ?? SIGNING_SECRET, timestamp),
    },
    body,
  });
  const text = await response.text();
  return { status: response.status, text, json: () => JSON.parse(text) as unknown };
}
