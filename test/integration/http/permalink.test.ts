/**
 * The agent API shows a posted request's Slack message with its permalink,
 * built from the workspace URL that auth.test gave (no call per request):
 * in GET /v1/requests/:id, in the answer a long-poll returns, and so in what
 * `approval-relay ask` prints while it waits. The relay runs as
 * `approval-relay serve` wires it, against the Slack Web API stand-in.
 */
import { afterEach, describe, expect, it } from "vitest";
import { Action } from "../../../src/slack/ids.js";
import { AGENT_TOKEN, startFullRelay, type FullRelay } from "../../helpers/full-relay.js";
import { CHANNEL } from "../../helpers/slack.js";
import { until } from "../../helpers/until.js";

const relays: FullRelay[] = [];
afterEach(async () => {
  while (relays.length > 0) await relays.pop()!.close();
});

const agent = { authorization: `Bearer ${AGENT_TOKEN.token}`, "content-type": "application/json" };

async function view(relay: FullRelay, id: string, query = ""): Promise<{ status: string; slack?: Record<string, unknown> }> {
  const response = await fetch(`${relay.url}/v1/requests/${id}${query}`, { headers: agent });
  expect(response.status).toBe(200);
  return (await response.json()) as { status: string; slack?: Record<string, unknown> };
}

describe("a request's Slack message in the agent API", () => {
  it("carries the message's permalink once posted, in a read and in the answer a long-poll gets", async () => {
    const relay = await startFullRelay();
    relays.push(relay);
    const body = JSON.stringify({ kind: "step_gate", toolName: "Bash", input: { command: "ls" } });
    const created = (await (await fetch(`${relay.url}/v1/requests`, { method: "POST", headers: agent, body })).json()) as { id: string; slack?: unknown };
    expect(created.slack).toBeUndefined();
    const message = await relay.message(0);
    const permalink = `https://acme.slack.com/archives/${CHANNEL}/p${message.ts.replace(".", "")}`;
    await until(async () => (await view(relay, created.id)).slack !== undefined, 2000, "the posted message in the view");
    expect((await view(relay, created.id)).slack).toStrictEqual({ channel: message.channel, ts: message.ts, permalink });

    const held = view(relay, created.id, "?wait=30");
    await relay.click(message, Action.stepYes);
    expect(await held).toMatchObject({ status: "answered", slack: { channel: message.channel, ts: message.ts, permalink } });
  });
});
