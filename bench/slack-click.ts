/**
 * A button click as Slack delivers it in HTTP mode: a block_actions payload,
 * form-encoded as `payload=`, signed with the app's signing secret (v0
 * HMAC-SHA256 over "v0:<timestamp>:<body>"). Built before the clock starts,
 * so the bench times the relay, not the signing.
 */
import { createHmac } from "node:crypto";
import { encodeButton } from "../src/slack/ids.js";
import type { PostedMessage } from "./slack-stand-in.js";

export interface SignedClick {
  body: string;
  headers: Record<string, string>;
}

const user = { id: "U0BENCH", username: "bench", name: "bench", team_id: "T0BENCH" };
const team = { id: "T0BENCH", domain: "bench" };

export function signedClick(secret: string, message: PostedMessage, actionId: string): SignedClick {
  const payload = {
    type: "block_actions",
    team,
    user,
    api_app_id: "A0BENCH",
    token: "legacy",
    trigger_id: `trigger-${message.ts}`,
    container: { type: "message", message_ts: message.ts, channel_id: message.channel, is_ephemeral: false },
    channel: { id: message.channel, name: "approvals" },
    message: { type: "message", ts: message.ts, bot_id: "B0BENCH", text: "request" },
    response_url: "https://hooks.slack.invalid/actions/T0BENCH/1/bench",
    actions: [{ type: "button", action_id: actionId, block_id: "actions", value: encodeButton({ r: message.id }), action_ts: message.ts }],
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
