/**
 * The whole relay as `approval-relay serve` runs it (src/main.ts: config,
 * store, Slack app in HTTP mode, agent API, Claude Code hook route, expiry
 * sweeper) on loopback, for end-to-end tests with real agents. Slack's Web
 * API is a local HTTP stand-in (slack-web-api.ts); the test plays the person
 * in Slack by posting signed payloads built from what the relay actually
 * posted (the button values, the modal metadata), as Slack would send them
 * back.
 */
import { expect } from "vitest";
import { createLogger } from "../../src/logger.js";
import { startRelay, type RunningRelay } from "../../src/main.js";
import type { AuditTrail } from "../../src/requests/audit-trail.js";
import type { RequestService } from "../../src/requests/service.js";
import { BOT_TOKEN, blockAction, CHANNEL, postToSlackEndpoint, SIGNING_SECRET } from "./slack.js";
import type { Person } from "../../src/protocol/request-view.js";
import { Action } from "../../src/slack/ids.js";
import { ALICE } from "../fixtures/people.js";
import { startSlackWebApi, type SlackWebApiStandIn } from "./slack-web-api.js";

export const AGENT_TOKEN = { name: "sdk-agent", token: "tok_sdk_agent_0123456789abcdef" };

/** A message the relay posted with chat.postMessage, as Slack stored it. */
export interface PostedMessage {
  channel: string;
  ts: string;
  text: string;
  blocks: unknown[];
}

/** A modal the relay opened with views.open. */
export interface OpenedModal {
  callbackId: string;
  privateMetadata: string;
  view: Record<string, unknown>;
}

export interface FullRelay {
  /** Base URL of the relay's HTTP server. */
  url: string;
  service: RequestService;
  /** Where the relay records audit events (GET /v1/audit reads them). */
  audit: AuditTrail;
  slack: SlackWebApiStandIn;
  /** Every log line the relay wrote (JSON). */
  logs: string[];
  /** The log lines at level error (a listener or route that failed). */
  errors(): string[];
  /** The `index`-th request message the relay posted (0-based; thread replies and DMs are not counted), once it is posted. */
  message(index: number): Promise<PostedMessage>;
  /** The `index`-th modal the relay opened (0-based), once it is opened. */
  modal(index: number): Promise<OpenedModal>;
  /** The blocks of the first chat.update of a posted message (the request ended), once it is made. */
  updated(message: PostedMessage): Promise<unknown[]>;
  /** Clicks the button `actionId` of a posted message, with the value the relay gave it, as `user`. */
  click(message: PostedMessage, actionId: string, user?: Person): Promise<void>;
  /** Posts a signed interaction or event to POST /slack/events and expects Slack's 200. */
  post(payload: { type: string }): Promise<string>;
  close(): Promise<void>;
}

export interface FullRelayOptions {
  /** Extra environment for the relay (e.g. REDIS_URL, REDIS_PREFIX); wins over the defaults. */
  env?: Record<string, string>;
  /** A Slack stand-in shared with other relay instances (it is then not closed by close()). */
  slack?: SlackWebApiStandIn;
  /** The port to listen on (a browser test's RELAY_PUBLIC_URL names it); default a free one. */
  port?: number;
}

export async function startFullRelay(options: FullRelayOptions = {}): Promise<FullRelay> {
  const ownsSlack = options.slack === undefined;
  const slack = options.slack ?? (await startSlackWebApi());
  const logs: string[] = [];
  let relay: RunningRelay;
  try {
    relay = await startRelay({
      env: {
        SLACK_BOT_TOKEN: BOT_TOKEN,
        SLACK_SIGNING_SECRET: SIGNING_SECRET,
        SLACK_API_URL: slack.url,
        SLACK_DEFAULT_CHANNEL: CHANNEL,
        RELAY_TOKENS: `${AGENT_TOKEN.name}:${AGENT_TOKEN.token}`,
        // Tests of the shutdown grace set their own; the others stop at once.
        RELAY_SHUTDOWN_GRACE: "0",
        ...options.env,
      },
      logger: createLogger({ level: "debug", write: (line) => logs.push(line) }),
      port: options.port ?? 0,
      host: "127.0.0.1",
      sweepIntervalMs: 100,
    });
  } catch (error) {
    if (ownsSlack) await slack.close();
    throw error;
  }
  const eventsUrl = `${relay.url}/slack/events`;

  const post = async (payload: { type: string }) => {
    const response = await postToSlackEndpoint(eventsUrl, payload);
    if (response.status !== 200) throw new Error(`POST /slack/events answered ${response.status}: ${response.text}`);
    return response.text;
  };

  return {
    url: relay.url,
    service: relay.service,
    audit: relay.audit,
    slack,
    logs,
    errors: () => logs.filter((line) => (JSON.parse(line) as { level?: string }).level === "error"),
    async message(index) {
      const { args } = await slack.requestPost(index);
      return { channel: String(args.channel), ts: String(args.ts), text: String(args.text), blocks: args.blocks as unknown[] };
    },
    async modal(index) {
      const view = (await slack.waitFor("views.open", (_, i) => i === index)).args.view as Record<string, unknown>;
      return { callbackId: String(view.callback_id), privateMetadata: String(view.private_metadata), view };
    },
    async updated(message) {
      const update = await slack.waitFor("chat.update", (args) => args.channel === message.channel && args.ts === message.ts);
      return update.args.blocks as unknown[];
    },
    async click(message, actionId, user = ALICE) {
      const value = buttonValue(message.blocks, actionId);
      if (value === undefined) throw new Error(`the message ${message.ts} has no ${actionId} button`);
      await post(blockAction({ actionId, value, user, channel: message.channel, ts: message.ts, triggerId: `trigger-${actionId}` }));
    },
    post,
    async close() {
      await relay.close();
      if (ownsSlack) await slack.close();
    },
  };
}

/** The value of the element with `action_id` anywhere in `blocks`, as Slack sends it back on a click. */
export function buttonValue(blocks: unknown, actionId: string): string | undefined {
  if (Array.isArray(blocks)) {
    for (const item of blocks) {
      const found = buttonValue(item, actionId);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  if (typeof blocks !== "object" || blocks === null) return undefined;
  const node = blocks as Record<string, unknown>;
  if (node.action_id === actionId && typeof node.value === "string") return node.value;
  return buttonValue(Object.values(node), actionId);
}

export interface AgentReply {
  status: number;
  /** The reply's JSON (undefined when it had no body). */
  body: Record<string, unknown> | undefined;
}

/** An agent's call to the relay at `url` with AGENT_TOKEN; `body` is sent as JSON, and `idempotencyKey` as Idempotency-Key. */
export async function agentCall(url: string, path: string, init: { method?: string; body?: unknown; idempotencyKey?: string } = {}): Promise<AgentReply> {
  const response = await fetch(`${url}${path}`, {
    method: init.method ?? (init.body === undefined ? "GET" : "POST"),
    headers: {
      authorization: `Bearer ${AGENT_TOKEN.token}`,
      ...(init.body === undefined ? {} : { "content-type": "application/json" }),
      ...(init.idempotencyKey === undefined ? {} : { "idempotency-key": init.idempotencyKey }),
    },
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
  });
  const text = await response.text();
  return { status: response.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : undefined };
}

/** A step gate created on `relay`, long-polled there and answered by a click on its message (the `message`-th posted): the relay works with its store end to end. */
export async function createAndAnswer(relay: FullRelay, message = 0): Promise<void> {
  const created = await agentCall(relay.url, "/v1/requests", { body: { kind: "step_gate", toolName: "Bash", input: { command: "make deploy" } } });
  expect(created.status).toBe(201);
  const posted = await relay.message(message);
  const held = agentCall(relay.url, `/v1/requests/${String(created.body!.id)}?wait=20`);
  await new Promise((resolve) => setTimeout(resolve, 100));
  await relay.click(posted, Action.stepYes);
  expect(await held).toMatchObject({ status: 200, body: { id: created.body!.id, status: "answered", decision: { reply: "y" } } });
  expect(relay.errors()).toEqual([]);
}

/** The one line the relay's start with `env` stops with (the test fails should it start); it holds none of `secrets`. */
export async function startFailure(env: Record<string, string>, secrets: RegExp): Promise<string> {
  const error = (await startFullRelay({ env }).then(
    () => expect.unreachable("the relay started"),
    (reason: unknown) => reason,
  )) as Error;
  expect(error.message).not.toContain("\n");
  expect(error.message).not.toMatch(secrets);
  return error.message;
}
