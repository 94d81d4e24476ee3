/**
 * The one stand-in for Slack's Web API, shared by the tests and the bench
 * (SLACK_API_URL points at it; Socket Mode sits on top of it in
 * socket-mode-server.ts). A real loopback HTTP server, so the
 * relay's HTTP client, pacing and timing are the real thing: it answers every
 * method the relay calls the way Slack does (a new message ts per post, a
 * view id per modal, conversations.history from what was posted, user groups
 * and emails it is given), records each call with its JSON fields decoded,
 * and lets a test wait for a call that has not come yet. Faults as Slack
 * shows them: 429 with Retry-After, 5xx, a reply lost on the way back, a
 * per-channel posting limit, a history that lags. The bench and the chaos
 * soak (bench/soak/slack.ts, which adds its ledger and fault bursts) run on it too.
 */
import { EventEmitter } from "node:events";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { RELAY_BOT, TEAM_ID } from "../fixtures/people.js";
import { openIdStandIn, type OpenIdStandIn } from "./slack-openid.js";

/** The bot token the relay calls with in tests. */
export const BOT_TOKEN = "xoxb-test-bot-token";

export interface ApiCall {
  method: string;
  /** The call's arguments, JSON-encoded fields (blocks, view, metadata) decoded. */
  args: Record<string, unknown>;
  /** The Authorization header it came with. */
  authorization?: string | undefined;
}

/** An answer of a test's own: a Web API reply (HTTP 200), an HTTP error, or "hang" (never answer). */
export type Answer = Record<string, unknown> | { status: number; body?: unknown; headers?: Record<string, string> } | "hang";

export interface StandInOptions {
  /** The token calls must carry (another one is listed in `problems`); default BOT_TOKEN. */
  botToken?: string;
  /** The workspace auth.test names (default TEAM_ID). */
  teamId?: string;
  /** Enforce chat.postMessage's limit per channel at this rate, as Slack does: HTTP 429 with Retry-After: 1 over it (unset: no limit). */
  postsPerSecond?: number;
  /** Posts a channel may take at once after a quiet spell (default 1). */
  postBurst?: number;
  /** Keep every call in `calls` (default true); the bench and the soak only count them, in `counts`. Posted messages are kept either way (conversations.history reads them). */
  record?: boolean;
}

export interface SlackWebApiStandIn {
  /** Base URL for SLACK_API_URL, ending in "/api/". */
  url: string;
  /** The HTTP server, for Socket Mode to attach its WebSocket server to. */
  server: Server;
  calls: ApiCall[];
  /** Calls per method (refused ones included), kept even when calls are not recorded. */
  counts: Map<string, number>;
  callsTo(method: string): ApiCall[];
  /**
   * Resolves with the first call of `method` (in arrival order) for which
   * `match(args, index)` holds, `index` counting the calls of `method` from 0;
   * waits for it when it has not come yet.
   */
  waitFor(method: string, match?: (args: Record<string, unknown>, index: number) => boolean, timeoutMs?: number): Promise<ApiCall>;
  /** Calls `listener` with every call once it is answered (refused and dropped ones included). */
  onCall(listener: (call: ApiCall) => void): () => void;
  /**
   * The request messages the relay posted so far: the chat.postMessage calls
   * that carry its request metadata (thread replies, reminders, outcome
   * notices and DMs carry none).
   */
  requestPosts(): ApiCall[];
  /** Resolves with the `index`-th request message (from 0), waiting for it when it has not come yet. */
  requestPost(index: number, timeoutMs?: number): Promise<ApiCall>;
  /** Calls made with another token than the bot's, or with a body that is not form-encoded (nor JSON, for the methods Slack takes JSON for). */
  problems: string[];
  /** Answers `method` ("*": every method) with `answer(args)` from now on; an undefined answer is the stand-in's own. */
  answer(method: string, answer: (args: Record<string, unknown>, call: ApiCall) => Answer | undefined | Promise<Answer | undefined>): void;
  /** Answers the next `times` calls of `method` with an HTTP error instead (a 429 with `Retry-After: retryAfterSeconds`, a 503, …). */
  refuse(method: string, times: number, reply: { status: number; retryAfterSeconds?: number }): void;
  /** How many calls of `method` were refused so far (posting limit included). */
  refused(method: string): number;
  /** Runs the next `times` calls of `method` (a post is stored) but drops the connection instead of replying. */
  dropReply(method: string, times: number): void;
  /** The next `times` conversations.history calls find nothing, as when Slack's history lags behind a post. */
  hideFromHistory(times: number): void;
  /** Messages posted so far, as conversations.history returns them (oldest first here). */
  messages: PostedMessage[];
  /** User group id → member ids, as usergroups.users.list answers (an unknown group: no_such_subteam). */
  usergroups: Map<string, string[]>;
  /** Email → user id, as users.lookupByEmail answers (an unknown email: users_not_found). */
  emails: Map<string, string>;
  /** Sign in with Slack: the authorize page, openid.connect.token and openid.connect.userInfo (./slack-openid.ts). */
  openId: Pick<OpenIdStandIn, "signInAs" | "spoilNext">;
  close(): Promise<void>;
}

/** A message as Slack stores it: by the bot, with the metadata it was posted with. */
export interface PostedMessage {
  channel: string;
  ts: string;
  bot_id: string;
  text: unknown;
  metadata?: unknown;
}

export async function startSlackWebApi(options: StandInOptions = {}): Promise<SlackWebApiStandIn> {
  const { botToken = BOT_TOKEN, teamId = TEAM_ID, record = true } = options;
  const calls: ApiCall[] = [];
  const counts = new Map<string, number>();
  const problems: string[] = [];
  const arrived = new EventEmitter();
  const own = new Map<string, (args: Record<string, unknown>, call: ApiCall) => Answer | undefined | Promise<Answer | undefined>>();
  const refusals = new Map<string, { times: number; status: number; retryAfterSeconds?: number }>();
  const refusedCount = new Map<string, number>();
  const drops = new Map<string, number>();
  const admit = postingLimit(options.postsPerSecond, options.postBurst ?? 1);
  const hanging = new Set<() => void>();
  let hidden = 0;
  let posts = 0;
  let views = 0;
  const messages: PostedMessage[] = [];
  const usergroups = new Map<string, string[]>();
  const emails = new Map<string, string>();
  /** A ts as Slack makes them: the time in seconds, and a sequence number to keep them unique. */
  const newTs = () => `${Math.floor(Date.now() / 1000)}.${String(++posts % 1_000_000).padStart(6, "0")}`;
  const count = (method: string, counter: Map<string, number>) => counter.set(method, (counter.get(method) ?? 0) + 1);

  const slackAnswer = (method: string, args: Record<string, unknown>): Record<string, unknown> => {
    switch (method) {
      case "auth.test":
        return { ok: true, team: "Acme", team_id: teamId, user: "relay", user_id: RELAY_BOT.userId, bot_id: RELAY_BOT.botId, url: "https://acme.slack.com/" };
      case "chat.postMessage": {
        const ts = newTs();
        const message: PostedMessage = { channel: String(args.channel), ts, bot_id: RELAY_BOT.botId, text: args.text };
        if (args.metadata !== undefined) message.metadata = args.metadata;
        messages.push(message);
        return { ok: true, channel: args.channel, ts, message: { ts, text: args.text } };
      }
      case "chat.getPermalink":
        return {
          ok: true,
          channel: args.channel,
          permalink: `https://acme.slack.com/archives/${String(args.channel)}/p${String(args.message_ts).replace(".", "")}`,
        };
      case "conversations.history":
        if (hidden > 0) {
          hidden -= 1;
          return { ok: true, messages: [], has_more: false };
        }
        return { ok: true, messages: history(messages, args), has_more: false };
      case "usergroups.users.list": {
        const users = usergroups.get(String(args.usergroup));
        return users ? { ok: true, users } : { ok: false, error: "no_such_subteam" };
      }
      case "users.lookupByEmail": {
        const id = emails.get(String(args.email));
        return id ? { ok: true, user: { id } } : { ok: false, error: "users_not_found" };
      }
      case "views.open":
      case "views.publish":
      case "views.update":
        return { ok: true, view: { id: `V0MODAL${++views}` } };
      default:
        return { ok: true };
    }
  };

  const openId = openIdStandIn();
  const server = createServer((req, res) => {
    void readForm(req).then(async (args) => {
      if (openId.handle(req, res, args, `http://${req.headers.host}`)) return;
      const method = (req.url ?? "").replace(/^\/api\//, "").split("?")[0] ?? "";
      const call: ApiCall = { method, args, authorization: req.headers.authorization };
      count(method, counts);
      if (method !== "apps.connections.open" && req.headers.authorization !== `Bearer ${botToken}`) problems.push(`${method}: wrong token`);
      const type = String(req.headers["content-type"]);
      if (!type.startsWith("application/x-www-form-urlencoded") && !(JSON_METHODS.has(method) && type.startsWith("application/json"))) {
        problems.push(`${method}: not form-encoded`);
      }
      const refusal = refusals.get(method);
      const overLimit = method === "chat.postMessage" && !admit(String(args.channel));
      let answer: Answer | undefined;
      if ((refusal && refusal.times > 0) || overLimit) {
        if (refusal && refusal.times > 0) refusal.times -= 1;
        count(method, refusedCount);
        const status = overLimit ? 429 : refusal!.status;
        const retryAfter = overLimit ? 1 : refusal!.retryAfterSeconds;
        answer = {
          status,
          body: { ok: false, error: status === 429 ? "ratelimited" : "service_unavailable" },
          headers: retryAfter === undefined ? {} : { "retry-after": String(retryAfter) },
        };
      } else {
        answer = (await (own.get(method) ?? own.get("*"))?.(args, call)) ?? slackAnswer(method, args);
        if (method === "chat.postMessage" && typeof answer === "object" && "ts" in answer) call.args = { ...args, ts: answer.ts };
      }
      if (record) calls.push(call);
      const drop = drops.get(method) ?? 0;
      if (answer === "hang") {
        hanging.add(() => res.destroy());
      } else if (drop > 0 && !(typeof answer.status === "number")) {
        drops.set(method, drop - 1);
        res.socket?.destroy();
      } else {
        reply(res, answer);
      }
      arrived.emit("call", call);
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));

  const callsTo = (method: string) => calls.filter((call) => call.method === method);
  const waitFor: SlackWebApiStandIn["waitFor"] = (method, match = () => true, timeoutMs = 15_000) =>
    new Promise((resolve, reject) => {
      const check = () => {
        const call = callsTo(method).find((candidate, index) => match(candidate.args, index));
        if (!call) return;
        clearTimeout(timer);
        arrived.off("call", check);
        resolve(call);
      };
      const timer = setTimeout(() => {
        arrived.off("call", check);
        reject(new Error(`Slack stand-in: no matching ${method} within ${timeoutMs} ms; calls: ${calls.map((c) => c.method).join(", ")}`));
      }, timeoutMs);
      arrived.on("call", check);
      check();
    });
  const requestPosts = () => callsTo("chat.postMessage").filter((call) => call.args.metadata !== undefined);

  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/`,
    server,
    calls,
    counts,
    callsTo,
    problems,
    onCall: (listener) => {
      arrived.on("call", listener);
      return () => void arrived.off("call", listener);
    },
    answer: (method, answer) => void own.set(method, answer),
    refuse: (method, times, reply) => void refusals.set(method, { times, ...reply }),
    refused: (method) => refusedCount.get(method) ?? 0,
    dropReply: (method, times) => void drops.set(method, times),
    hideFromHistory: (times) => void (hidden = times),
    messages,
    usergroups,
    emails,
    openId,
    requestPosts,
    requestPost: (index, timeoutMs) => waitFor("chat.postMessage", (args) => requestPosts()[index]?.args === args, timeoutMs),
    waitFor,
    close: () =>
      new Promise<void>((resolve) => {
        for (const end of hanging) end();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function reply(res: ServerResponse, answer: Exclude<Answer, "hang">): void {
  const http = typeof answer.status === "number" ? (answer as { status: number; body?: unknown; headers?: Record<string, string> }) : undefined;
  const body = JSON.stringify(http ? (http.body ?? "") : answer);
  res.writeHead(http?.status ?? 200, { "content-type": "application/json", "content-length": Buffer.byteLength(body), ...http?.headers }).end(body);
}

/** conversations.history as Slack answers it: newest first, bounded by oldest / latest, metadata only when asked. */
function history(messages: PostedMessage[], args: Record<string, unknown>): unknown[] {
  const inclusive = args.inclusive === "true";
  const after = (ts: string, bound: unknown) => bound === undefined || (inclusive ? Number(ts) >= Number(bound) : Number(ts) > Number(bound));
  const before = (ts: string, bound: unknown) => bound === undefined || (inclusive ? Number(ts) <= Number(bound) : Number(ts) < Number(bound));
  return messages
    .filter((m) => m.channel === args.channel && after(m.ts, args.oldest) && before(m.ts, args.latest))
    .map(({ metadata, ...m }) => ({ type: "message", ...m, ...(args.include_all_metadata === "true" && metadata ? { metadata } : {}) }))
    .reverse()
    .slice(0, Number(args.limit ?? 100));
}

/** Slack's chat.postMessage pacing per channel: a token bucket of `burst` refilled at `perSecond`; no limit when unset. */
function postingLimit(perSecond: number | undefined, burst: number): (channel: string) => boolean {
  const buckets = new Map<string, { tokens: number; at: number }>();
  return (channel) => {
    if (perSecond === undefined) return true;
    const now = performance.now();
    const bucket = buckets.get(channel) ?? { tokens: burst, at: now };
    bucket.tokens = Math.min(burst, bucket.tokens + ((now - bucket.at) / 1000) * perSecond);
    bucket.at = now;
    buckets.set(channel, bucket);
    if (bucket.tokens < 1) return false;
    bucket.tokens -= 1;
    return true;
  };
}

/** Methods Slack also takes a JSON body for (with the token as a Bearer header). */
const JSON_METHODS = new Set(["chat.postMessage", "chat.update", "chat.postEphemeral"]);

/**
 * The Web API's form body, with its JSON-encoded fields (blocks, view)
 * decoded; or a JSON body, its scalars as the text a form would carry, so a
 * call reads the same whichever way it came.
 */
async function readForm(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const args: Record<string, unknown> = {};
  const text = Buffer.concat(chunks).toString("utf8");
  if (String(req.headers["content-type"]).startsWith("application/json")) {
    for (const [key, value] of Object.entries(parseOr(text) as Record<string, unknown>)) args[key] = typeof value === "object" ? value : String(value);
    return args;
  }
  for (const [key, value] of new URLSearchParams(text)) {
    args[key] = /^[[{]/.test(value) ? parseOr(value) : value;
  }
  return args;
}

function parseOr(value: string): unknown {
  try {
    return JSON.parse(value);
  } catch {
    return value;
  }
}
