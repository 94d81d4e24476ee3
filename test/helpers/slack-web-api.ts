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
  close(): Promise<void>;
}

export async function startSlackWebApi(): Promise<SlackWebApiStandIn> {
  const calls: ApiCall[] = [];
  const problems: string[] = [];
  const arrived = new EventEmitter();
  let posts = 0;
  const refusals = new Map<string, { times: number; status: number; retryAfterSeconds?: number }>();
  const refusedCount = new Map<string, number>();

  const answer = (method: string, args: Record<string, unknown>): Record<string, unknown> => {
    switch (method) {
      case "auth.test":
        return { ok: true, team: "Acme", team_id: "T0TEAM", user: "relay", user_id: "U0RELAY", bot_id: "B0RELAY" };
      case "chat.postMessage": {
        const ts = `1700000000.${String(++posts).padStart(6, "0")}`;
        return { ok: true, channel: args.channel, ts, message: { ts, text: args.text } };
      }
      case "views.open":
        return { ok: true, view: { id: `V0MODAL${calls.length}` } };
      default:
        return { ok: true };
    }
  };

  const server = createServer((req, res) => {
    void readForm(req).then((args) => {
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
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(reply));
      arrived.emit("call");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));

  const callsTo = (method: string) => calls.filter((call) => call.method === method);
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/`,
    calls,
    callsTo,
    problems,
    refuse: (method, times, reply) => {
      refusals.set(method, { times, ...reply });
    },
    refused: (method) => refusedCount.get(method) ?? 0,
    waitFor: (method, match = () => true, timeoutMs = 15_000) =>
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
      }),
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
