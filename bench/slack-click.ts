/**
 * A button click as Slack delivers it in HTTP mode: a block_actions payload
 * carrying the whole message it came from (text and every block as posted),
 * the clicked button as Slack describes it (block id, text, style, value),
 * the message's input state and the usual envelope; form-encoded as
 * `payload=`, signed with the app's signing secret (v0 HMAC-SHA256 over
 * "v0:<timestamp>:<body>"). Built before the clock starts, so the bench times
 * the relay, not the signing.
 */
import { createHmac } from "node:crypto";
import { BENCH_TEAM_ID, type PostedMessage } from "./slack-stand-in.js";
import { ALICE, RELAY_BOT } from "../test/fixtures/people.js";

export interface SignedClick {
  body: string;
  headers: Record<string, string>;
}

/** Who clicks: a person of the relay's own workspace (the team auth.test names), so the relay takes them as one of its own. */
export interface Clicker {
  id: string;
  name: string;
}

/** The bench's usual clicking person: the tests' usual approver (test/fixtures/people.ts). */
export const BENCH_CLICKER: Clicker = ALICE;

const team = { id: BENCH_TEAM_ID, domain: "bench" };

interface Button {
  block_id: string;
  action_id: string;
  text?: unknown;
  value?: string;
  style?: string;
}

export function signedClick(secret: string, message: PostedMessage, actionId: string, clicker: Clicker = BENCH_CLICKER): SignedClick {
  const button = findButton(message.blocks, actionId);
  if (!button) throw new Error(`the message of request ${message.id} has no ${actionId} button`);
  const payload = {
    type: "block_actions",
    user: { id: clicker.id, username: clicker.name, name: clicker.name, team_id: team.id },
    api_app_id: "A0BENCH",
    token: "legacy",
    container: { type: "message", message_ts: message.ts, channel_id: message.channel, is_ephemeral: false },
    trigger_id: `1234567890123.1234567890.${message.ts.replace(".", "")}`,
    team,
    enterprise: null,
    is_enterprise_install: false,
    channel: { id: message.channel, name: "approvals" },
    message: {
      user: RELAY_BOT.userId,
      type: "message",
      ts: message.ts,
      bot_id: RELAY_BOT.botId,
      app_id: "A0BENCH",
      text: message.text,
      team: team.id,
      blocks: message.blocks,
    },
    state: { values: {} },
    response_url: `https://hooks.slack.invalid/actions/${team.id}/1234567890/${message.ts.replace(".", "")}`,
    actions: [
      {
        action_id: button.action_id,
        block_id: button.block_id,
        ...(button.text === undefined ? {} : { text: button.text }),
        ...(button.value === undefined ? {} : { value: button.value }),
        ...(button.style === undefined ? {} : { style: button.style }),
        type: "button",
        action_ts: `${Math.floor(Date.now() / 1000)}.123456`,
      },
    ],
  };
  const body = new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
  const timestamp = String(Math.floor(Date.now() / 1000));
  const signature = `v0=${createHmac("sha256", secret).update(`v0:${timestamp}:${body}`).digest("hex")}`;
  return {
    body,
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      "x-slack-request-timestamp": timestamp,
      "x-slack-signature": signature,
    },
  };
}

/** The button `actionId` in any actions block of `blocks`, with the block's id. */
function findButton(blocks: unknown[], actionId: string): Button | undefined {
  for (const block of blocks) {
    if (!isRecord(block) || block.type !== "actions" || !Array.isArray(block.elements)) continue;
    for (const element of block.elements) {
      if (isRecord(element) && element.action_id === actionId) {
        return {
          block_id: typeof block.block_id === "string" ? block.block_id : "actions",
          action_id: actionId,
          text: element.text,
          ...(typeof element.value === "string" ? { value: element.value } : {}),
          ...(typeof element.style === "string" ? { style: element.style } : {}),
        };
      }
    }
  }
  return undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null;
}
