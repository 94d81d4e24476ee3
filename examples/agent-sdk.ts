/**
 * A Claude Agent SDK agent whose tool permissions, clarifying questions and
 * step-by-step confirmations are answered in Slack through the relay.
 *
 *   RELAY_URL=https://relay.example.com RELAY_TOKEN=… npx tsx examples/agent-sdk.ts
 *
 * In your own project import from "slack-approval-relay/client" instead of
 * the relative path used here.
 */
import { query } from "@anthropic-ai/claude-agent-sdk";
import { createCanUseTool, createStepGate, RelayClient } from "../src/client/index.js";

const url = process.env.RELAY_URL;
const token = process.env.RELAY_TOKEN;
if (!url || !token) throw new Error("Set RELAY_URL and RELAY_TOKEN (an agent token from the relay's RELAY_TOKENS).");

const relay = new RelayClient({ url, token });

/** The hook's timeout in seconds: the gate answers deny by itself a few seconds before it. */
const GATE_TIMEOUT_SECONDS = 600;
let stepByStep = process.argv.includes("--step-by-step");

const agent = { name: "release-agent", host: "build-01" };

for await (const message of query({
  prompt: "Run the test suite and, if it passes, bump the patch version.",
  options: {
    // Set explicitly: a session left to choose may start in a mode where canUseTool is rarely asked.
    permissionMode: "default",
    // Every tool call that needs permission, and every AskUserQuestion, is asked in Slack.
    canUseTool: createCanUseTool(relay, { channel: "C0123456789", agent, timeoutSeconds: 900 }),
    hooks: {
      PreToolUse: [
        {
          hooks: [createStepGate(relay, { isActive: () => stepByStep, timeoutSeconds: GATE_TIMEOUT_SECONDS, channel: "C0123456789", agent })],
          // The same timeout the gate was given, and a failed or timed-out gate blocks the tool.
          timeout: GATE_TIMEOUT_SECONDS,
          onFailure: "block",
        },
      ],
    },
  },
})) {
  if (message.type === "result") {
    console.log(message.subtype === "success" ? message.result : `Stopped: ${message.subtype}`);
    stepByStep = false;
  }
}
