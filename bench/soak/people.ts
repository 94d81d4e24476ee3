/**
 * The people of the soak, as Slack delivers what they do in HTTP mode:
 * button clicks (block_actions carrying the message), modal submissions
 * (view_submission with the modal's metadata and state) and thread replies
 * (an Events API message event), each signed with the app's signing secret
 * and POSTed to a relay instance's Bolt receiver (/slack/events). A person
 * answers once, the way their plan says, and tries again only when told the
 * try did not land (an error reply, a modal error, an ephemeral), or when
 * nothing at all happened for a while, as a person would.
 */
import { createHmac, randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { Action, Field } from "../../src/slack/ids.js";
import type { Click, ClickHow } from "./history.js";
import { SOAK_BOT, SOAK_TEAM_ID, type Posted, type SoakSlack } from "./slack.js";

/** What one person does for one request. */
export type Plan =
  | { how: "button"; actionId: string; option?: number }
  | { how: "thread"; text: string }
  | { how: "deny-reason"; reason: string }
  | { how: "answer-modal"; values: Record<string, unknown> };

export interface PeopleDeps {
  secret: string;
  slack: SoakSlack;
  /** Where Slack sends this interaction: one live instance's base URL (undefined: none is up). */
  pickInstance(): URL | undefined;
  clicks: Click[];
  /** Nothing seen for this long after a try: the person tries again. */
  silenceMs: number;
  /** What went wrong on the soak's own side (a button not found): the run cannot be trusted. */
  problems: string[];
}

/** Acts on the request's live message for `user` until it has none left (it ended) or `until` passes. */
export async function answer(deps: PeopleDeps, marker: string, user: string, plan: Plan, until: number): Promise<void> {
  for (let message = deps.slack.live(marker); message && Date.now() < until; message = deps.slack.live(marker)) {
    const noticesBefore = deps.slack.notices.length;
    const click = await attempt(deps, message, user, plan);
    const told = click.status < 200 || click.status >= 300 || click.modalError === true;
    const waitUntil = Math.min(until, Date.now() + (told ? 1000 : deps.silenceMs));
    while (Date.now() < waitUntil && !deps.slack.messageEnded(message.id)) {
      if (deps.slack.notices.slice(noticesBefore).some((n) => n.user === user)) break;
      await sleep(100);
    }
    if (!told) await sleep(500);
  }
}

async function attempt(deps: PeopleDeps, message: Posted, user: string, plan: Plan): Promise<Click> {
  switch (plan.how) {
    case "button":
      return post(deps, message.marker, user, "button", blockActions(message, user, plan.actionId, plan.option));
    case "thread":
      return post(deps, message.marker, user, "thread", threadReply(message, user, plan.text));
    case "deny-reason":
    case "answer-modal": {
      const triggerId = `${Date.now()}.${randomUUID()}`;
      const actionId = plan.how === "deny-reason" ? Action.denyWithReason : Action.answer;
      const opened = await post(deps, message.marker, user, "open", blockActions(message, user, actionId, undefined, triggerId), triggerId);
      const view = await openedView(deps.slack, triggerId, Date.now() + 3000);
      if (!view) return opened;
      const values =
        plan.how === "deny-reason"
          ? { [Field.denyReason.block]: { [Field.denyReason.action]: { type: "plain_text_input", value: plan.reason } } }
          : plan.values;
      return post(deps, message.marker, user, "modal", viewSubmission(user, view, values));
    }
  }
}

async function openedView(slack: SoakSlack, triggerId: string, until: number): Promise<Record<string, unknown> | undefined> {
  while (Date.now() < until) {
    const open = slack.opens.find((o) => o.triggerId === triggerId);
    if (open) return open.view;
    await sleep(50);
  }
  return undefined;
}

/** Signs and POSTs `payload`; records the try with the reply's status (0: no connection). */
async function post(deps: PeopleDeps, marker: string, user: string, how: ClickHow, payload: Record<string, unknown>, triggerId?: string): Promise<Click> {
  const at = Date.now();
  const base = deps.pickInstance();
  const isEvent = payload.type === "event_callback";
  const body = isEvent ? JSON.stringify(payload) : new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
  const timestamp = String(Math.floor(at / 1000));
  const signature = `v0=${createHmac("sha256", deps.secret).update(`v0:${timestamp}:${body}`).digest("hex")}`;
  const click: Click = { marker, user, how, at, repliedAt: at, status: 0, ...(triggerId ? { triggerId } : {}) };
  if (base) {
    try {
      const reply = await fetch(new URL("/slack/events", base), {
        method: "POST",
        body,
        headers: {
          "content-type": isEvent ? "application/json" : "application/x-www-form-urlencoded",
          "x-slack-request-timestamp": timestamp,
          "x-slack-signature": signature,
        },
        // Slack gives up on an app after 3 seconds and shows the person an error.
        signal: AbortSignal.timeout(3000),
      });
      click.status = reply.status;
      const text = await reply.text();
      if (how === "modal" && text.includes('"response_action":"errors"')) click.modalError = true;
    } catch {
      click.status = 0;
    }
  }
  click.repliedAt = Date.now();
  deps.clicks.push(click);
  return click;
}

const slackUser = (user: string) => ({ id: user, username: user.toLowerCase(), name: user.toLowerCase(), team_id: SOAK_TEAM_ID });

function blockActions(message: Posted, user: string, actionId: string, option?: number, triggerId = `${Date.now()}.${randomUUID()}`) {
  const button = findButton(message.blocks, actionId, option);
  if (!button) throw new Error(`the message of ${message.id} has no ${actionId} button`);
  return {
    type: "block_actions",
    user: slackUser(user),
    api_app_id: "A0SOAK",
    token: "legacy",
    container: { type: "message", message_ts: message.ts, channel_id: message.channel, is_ephemeral: false },
    trigger_id: triggerId,
    team: { id: SOAK_TEAM_ID, domain: "soak" },
    enterprise: null,
    is_enterprise_install: false,
    channel: { id: message.channel, name: "approvals" },
    message: { user: SOAK_BOT.userId, type: "message", ts: message.ts, bot_id: SOAK_BOT.botId, text: message.text, team: SOAK_TEAM_ID, blocks: message.blocks },
    state: { values: {} },
    response_url: `https://hooks.slack.invalid/actions/${SOAK_TEAM_ID}/1/${message.ts.replace(".", "")}`,
    actions: [{ ...button, type: "button", action_ts: `${Math.floor(Date.now() / 1000)}.123456` }],
  };
}

function viewSubmission(user: string, view: Record<string, unknown>, values: Record<string, unknown>) {
  return {
    type: "view_submission",
    team: { id: SOAK_TEAM_ID, domain: "soak" },
    user: slackUser(user),
    api_app_id: "A0SOAK",
    token: "legacy",
    trigger_id: `${Date.now()}.${randomUUID()}`,
    view: { ...view, id: "V0SOAK", team_id: SOAK_TEAM_ID, type: "modal", state: { values }, hash: "1", app_id: "A0SOAK", bot_id: SOAK_BOT.botId },
    response_urls: [],
    is_enterprise_install: false,
    enterprise: null,
  };
}

function threadReply(message: Posted, user: string, text: string) {
  // When it was written, to the millisecond (the relay compares it with the request's end); the last digits keep it unique.
  const now = Date.now();
  const ts = `${Math.floor(now / 1000)}.${String(now % 1000).padStart(3, "0")}${String(Math.floor(Math.random() * 1000)).padStart(3, "0")}`;
  return {
    type: "event_callback",
    token: "legacy",
    team_id: SOAK_TEAM_ID,
    api_app_id: "A0SOAK",
    event: { type: "message", user, team: SOAK_TEAM_ID, text, ts, channel: message.channel, thread_ts: message.ts, event_ts: ts, channel_type: "channel" },
    event_id: `Ev${randomUUID().replaceAll("-", "").slice(0, 16).toUpperCase()}`,
    event_time: Math.floor(Date.now() / 1000),
  };
}

/** The button `actionId` (option `option`, when several share the id) in an actions block or a section's accessory, as Slack describes a clicked one. */
function findButton(blocks: unknown[], actionId: string, option?: number): Record<string, unknown> | undefined {
  for (const block of blocks as Array<Record<string, unknown>>) {
    const elements =
      block.type === "actions" && Array.isArray(block.elements) ? block.elements : block.type === "section" && block.accessory ? [block.accessory] : [];
    for (const element of elements as Array<Record<string, unknown>>) {
      if (element.action_id === actionId && (option === undefined || (JSON.parse(String(element.value)) as { o?: number }).o === option)) {
        return { action_id: actionId, block_id: block.block_id, text: element.text, ...(element.value === undefined ? {} : { value: element.value }) };
      }
    }
  }
  return undefined;
}
