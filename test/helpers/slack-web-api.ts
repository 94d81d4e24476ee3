/**
 * A local stand-in for Slack's Web API (SLACK_API_URL points at it), for
 * end-to-end tests where the relay runs as in production: it answers every
 * method the relay calls the way Slack does (a new message ts per post, a
 * view id per modal), records each call with its JSON fields decoded, and
 * lets a test wait for a call that has not come yet. A real HTTP server
 * rather than nock, so timing is the real thing and nothing is intercepted.
 */
import { EventEmitter } from "node:events";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { BOT_TOKEN, type ApiCall } from "./slack.js";
import { openIdStandIn, type OpenIdStandIn } from "./slack-openid.js";
import { RELAY_BOT } from "../fixtures/people.js";

export interface SlackWebApiStandIn {
  /** Base URL for SLACK_API_URL, ending in "/api/". */
  url: string;
  calls: ApiCall[];
  callsTo(method: string): ApiCall[];
  /**
   * Resolves with the first call of `method` (in arrival order) for which
   * `match(args, index)` holds, `index` counting the calls of `method` from 0;
   * waits for it when it has not come yet.
   */
  waitFor(method: string, match?: (args: Record<string, unknown>, index: number) => boolean, timeoutMs?: number): Promise<ApiCall>;
  /**
   * The request messages the relay posted so far: the chat.postMessage calls
   * that carry its request metadata (thread replies, reminders, outcome
   * notices and DMs carry none).
   */
  requestPosts(): ApiCall[];
  /** Resolves with the `index`-th request message (from 0), waiting for it when it has not come yet. */
  requestPost(index: number, timeoutMs?: number): Promise<ApiCall>;
  /** Calls made with another token than the bot's, or with a body that is not form-encoded. */
  problems: string[];
  /**
   * Answers the next `times` calls of `method` with an HTTP error instead
   * (a 429 with `Retry-After: retryAfterSeconds`, a 503, …); they are
   * recorded in `calls` like the others.
   */
  refuse(method: string, times: number, reply: { status: number; retryAfterSeconds?: number }): void;
  /** How many calls of `method` were refused so far. */
  refused(method: string): number;
  /**
   * Runs the next `times` calls of `method` (a post is stored) but drops the
   * connection instead of replying: the reply is lost on the way back.
   */
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

export async function startSlackWebApi(): Promise<SlackWebApiStandIn> {
  const calls: ApiCall[] = [];
  const problems: string[] = [];
  const arrived = new EventEmitter();
  let posts = 0;
  const refusals = new Map<string, { times: number; status: number; retryAfterSeconds?: number }>();
  const refusedCount = new Map<string, number>();
  const drops = new Map<string, number>();
  let hidden = 0;
  const messages: PostedMessage[] = [];
  const usergroups = new Map<string, string[]>();
  const emails = new Map<string, string>();
  /** A ts as Slack makes them: the time in seconds, and a sequence number to keep them unique. */
  const newTs = () => `${Math.floor(Date.now() / 1000)}.${String(++posts).padStart(6, "0")}`;

  const answer = (method: string, args: Record<string, unknown>): Record<string, unknown> => {
    switch (method) {
      case "auth.test":
        return { ok: true, url: "https://acme.slack.com/", team: "Acme", team_id: "T0TEAM", user: "relay", user_id: RELAY_BOT.userId, bot_id: RELAY_BOT.botId };
      case "chat.postMessage": {
        const ts = newTs();
        const message: PostedMessage = { channel: String(args.channel), ts, bot_id: RELAY_BOT.botId, text: args.text };
        if (args.metadata !== undefined) message.metadata = args.metadata;
        messages.push(message);
        return { ok: true, channel: args.channel, ts, message: { ts, text: args.text } };
      }
      case "conversations.history": {
        if (hidden > 0) {
          hidden -= 1;
          return { ok: true, messages: [], has_more: false };
        }
        const inclusive = args.inclusive === "true";
        const after = (ts: string, bound: unknown) => bound === undefined || (inclusive ? Number(ts) >= Number(bound) : Number(ts) > Number(bound));
        const before = (ts: string, bound: unknown) => bound === undefined || (inclusive ? Number(ts) <= Number(bound) : Number(ts) < Number(bound));
        const found = messages
          .filter((m) => m.channel === args.channel && after(m.ts, args.oldest) && before(m.ts, args.latest))
          .map(({ metadata, ...m }) => ({ type: "message", ...m, ...(args.include_all_metadata === "true" && metadata ? { metadata } : {}) }))
          .reverse();
        return { ok: true, messages: found.slice(0, Number(args.limit ?? 100)), has_more: false };
      }
      case "usergroups.users.list": {
        const users = usergroups.get(String(args.usergroup));
        return users ? { ok: true, users } : { ok: false, error: "no_such_subteam" };
      }
      case "users.lookupByEmail": {
        const id = emails.get(String(args.email));
        return id ? { ok: true, user: { id } } : { ok: false, error: "users_not_found" };
      }
      case "views.open":
        return { ok: true, view: { id: `V0MODAL${calls.length}` } };
      default:
        return { ok: true };
    }
  };

  const openId = openIdStandIn();
  const server = createServer((req, res) => {
    void readForm(req).then((args) => {
      if (openId.handle(req, res, args, `http://${req.headers.host}`)) return;
      const method = (req.url ?? "").replace(/^\/api\//, "").split("?")[0] ?? "";
      if (req.headers.authorization !== `Bearer ${BOT_TOKEN}`) problems.push(`${method}: wrong token`);
      if (!String(req.headers["content-type"]).startsWith("application/x-www-form-urlencoded")) problems.push(`${method}: not form-encoded`);
      const refusal = refusals.get(method);
      if (refusal && refusal.times > 0) {
        refusal.times -= 1;
        refusedCount.set(method, (refusedCount.get(method) ?? 0) + 1);
        calls.push({ method, args });
        const headers: Record<string, string> = { "content-type": "application/json" };
        if (refusal.retryAfterSeconds !== undefined) headers["retry-after"] = String(refusal.retryAfterSeconds);
        res.writeHead(refusal.status, headers).end(JSON.stringify({ ok: false, error: refusal.status === 429 ? "ratelimited" : "service_unavailable" }));
        arrived.emit("call");
        return;
      }
      const reply = answer(method, args);
      calls.push({ method, args: method === "chat.postMessage" ? { ...args, ts: reply.ts } : args });
      const drop = drops.get(method) ?? 0;
      if (drop > 0) {
        drops.set(method, drop - 1);
        res.socket?.destroy();
      } else {
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(reply));
      }
      arrived.emit("call");
    });
  });
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
    calls,
    callsTo,
    problems,
    refuse: (method, times, reply) => {
      refusals.set(method, { times, ...reply });
    },
    refused: (method) => refusedCount.get(method) ?? 0,
    dropReply: (method, times) => {
      drops.set(method, times);
    },
    hideFromHistory: (times) => {
      hidden = times;
    },
    messages,
    usergroups,
    emails,
    openId,
    requestPosts,
    requestPost: (index, timeoutMs) => waitFor("chat.postMessage", (args) => requestPosts()[index]?.args === args, timeoutMs),
    waitFor,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The Web API's form body, with its JSON-encoded fields (blocks, view) decoded. */
async function readForm(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const args: Record<string, unknown> = {};
  for (const [key, value] of new URLSearchParams(Buffer.concat(chunks).toString("utf8"))) {
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
