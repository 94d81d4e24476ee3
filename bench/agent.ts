/**
 * The agent's and Slack's side of one relay under test: create requests,
 * long-poll them, call the Claude Code hook, and click their buttons the way
 * Slack delivers clicks. Long-polls and hook calls each hold their own
 * keep-alive connection; short calls share a warm pool.
 */
import { randomUUID } from "node:crypto";
import type { Agent } from "node:http";
import { setTimeout as sleep } from "node:timers/promises";
import { Action } from "../src/slack/ids.js";
import { expectJson, keepAliveAgent, send, type HttpReply } from "./http.js";
import { signedClick, type Clicker, type SignedClick } from "./slack-click.js";
import type { PostedMessage, SlackStandIn } from "./slack-stand-in.js";

export type BenchKind = "step_gate" | "permission";

/** GET /v1/requests/:id as the bench reads it. */
export interface RequestView {
  id: string;
  status: string;
  decision?: Record<string, unknown>;
  slack?: { channel: string; ts: string };
  error?: string;
}

export interface BenchAgentOptions {
  base: URL;
  /** Agent bearer token (RELAY_TOKENS). */
  token: string;
  /** SLACK_SIGNING_SECRET of the relay. */
  signingSecret: string;
  standIn: SlackStandIn;
}

/** The button a person presses to say yes, per kind. */
export const YES_ACTION: Record<BenchKind, string> = { step_gate: Action.stepYes, permission: Action.allow };

export function newMarker(): string {
  return `bench-marker-${randomUUID()}`;
}

let channels = 0;

/**
 * A channel id of its own for one request. The relay posts at Slack's pace
 * (one message a second per channel); scenarios that measure the relay rather
 * than that pace post each request to a channel of its own.
 */
export function freshChannel(): string {
  channels += 1;
  return `C0B${channels.toString(36).toUpperCase().padStart(9, "0")}`;
}

/** A request body whose tool input carries `marker`, so the stand-in can tie its message to it; `channel` unset: the relay's default. */
export function requestBody(kind: BenchKind, marker: string, timeoutSeconds = 300, channel?: string): Record<string, unknown> {
  const input = { command: `npm test -- --reporter=dot # ${marker}`, description: "Run the test suite" };
  const body = { kind, toolName: "Bash", input, timeoutSeconds, agent: { name: "bench", sessionId: "bench-session" } };
  return channel === undefined ? body : { ...body, channel };
}

export class BenchAgent {
  /** Short calls: create, get, click, cancel. */
  private readonly pool = keepAliveAgent(512);
  /** Long-polls and hook calls: one connection each while they are held. */
  private readonly held = keepAliveAgent();
  private readonly auth: Record<string, string>;

  constructor(private readonly options: BenchAgentOptions) {
    this.auth = { authorization: `Bearer ${options.token}` };
  }

  get standIn(): SlackStandIn {
    return this.options.standIn;
  }

  /** POST /v1/requests; resolves with the new request's id. */
  async create(body: Record<string, unknown>): Promise<string> {
    const reply = await this.call("POST", "/v1/requests", JSON.stringify(body), this.pool);
    return expectJson<{ id: string }>(reply, 201, "POST /v1/requests").id;
  }

  async get(id: string): Promise<RequestView> {
    return expectJson<RequestView>(await this.call("GET", `/v1/requests/${id}`, undefined, this.pool), 200, "GET /v1/requests/:id");
  }

  /** GET /v1/requests/:id?wait=S on a connection of its own; resolves when the whole response has arrived. */
  longPoll(id: string, waitSeconds: number, via: Agent = this.held): Promise<HttpReply> {
    return this.call("GET", `/v1/requests/${id}?wait=${waitSeconds}`, undefined, via);
  }

  /** POST /v1/hooks/claude-code?timeout=S[&channel=C], held until the answer. */
  hook(input: Record<string, unknown>, timeoutSeconds = 600, channel?: string): Promise<HttpReply> {
    const query = channel === undefined ? "" : `&channel=${channel}`;
    return this.call("POST", `/v1/hooks/claude-code?timeout=${timeoutSeconds}${query}`, JSON.stringify(input), this.held);
  }

  cancel(id: string): Promise<HttpReply> {
    return this.call("DELETE", `/v1/requests/${id}`, undefined, this.pool);
  }

  /**
   * The message of the request whose input carries `marker`, once the relay
   * has stored its ts too (a click that arrives before that is ignored, as
   * one on a foreign message would be).
   */
  async messageReady(marker: string): Promise<PostedMessage> {
    const message = await this.options.standIn.posted(marker);
    for (let attempt = 0; attempt < 2000; attempt += 1) {
      const view = await this.get(message.id);
      if (view.slack?.ts === message.ts) return message;
      await sleep(attempt < 3 ? 0 : 2);
    }
    throw new Error(`the relay never stored the Slack message of request ${message.id}`);
  }

  /** A signed click on `message`'s button `actionId` by `clicker` (default: the bench's person), ready to send. */
  prepareClick(message: PostedMessage, actionId: string, clicker?: Clicker): SignedClick {
    return signedClick(this.options.signingSecret, message, actionId, clicker);
  }

  /** POST /slack/events as Slack would; the relay acks at once and records the answer after. */
  async click(click: SignedClick): Promise<void> {
    const reply = await send(this.options.base, { method: "POST", path: "/slack/events", headers: click.headers, body: click.body, agent: this.pool });
    if (reply.status !== 200) throw new Error(`POST /slack/events: HTTP ${reply.status} ${reply.body.slice(0, 200)}`);
  }

  /** Closes every connection (held long-polls included). */
  close(): void {
    this.pool.destroy();
    this.held.destroy();
  }

  private call(method: string, path: string, body: string | undefined, agent: Agent): Promise<HttpReply> {
    const headers = body === undefined ? this.auth : { ...this.auth, "content-type": "application/json" };
    return send(this.options.base, { method, path, headers, body, agent });
  }
}

/**
 * Waits for `message` unless `held` (the agent's long-poll or hook call)
 * comes back first: then the relay answered before any click, a failure
 * worth reporting as such rather than as a missing Slack message.
 */
export async function beforeReply<T>(message: Promise<T>, held: Promise<HttpReply>, what: string): Promise<T> {
  const early = held.then((reply): never => {
    throw new Error(`${what} came back before the click: HTTP ${reply.status} ${reply.body.slice(0, 200)}`);
  });
  early.catch(() => undefined);
  return Promise.race([message, early]);
}

/** Checks a final view says a person said yes to a `kind` request. */
export function assertAnsweredYes(kind: BenchKind, view: RequestView): void {
  const ok = view.status === "answered" && (kind === "step_gate" ? view.decision?.reply === "y" : view.decision?.behavior === "allow");
  if (!ok) throw new Error(`request ${view.id} ended ${view.status} with ${JSON.stringify(view.decision)}, not a yes`);
}
