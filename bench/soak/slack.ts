/**
 * Slack's Web API for the soak, on loopback: it answers what the relay calls
 * the way Slack does (a fresh ts per post, conversations.history with
 * metadata, views.open) and keeps the ledger the checker reads: each request
 * message's life (posted; updated without buttons, or deleted), each
 * ephemeral notice, each views.open. A fault burst makes every call answer
 * 429 (Retry-After) or 503 until it ends; refused notices and opens are
 * recorded as tried. A ledger rather than the bench's stand-in, which only
 * finds bench markers, or the test stand-in, which keeps no such ledger.
 */
import { EventEmitter } from "node:events";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import type { MessageLife, Notice } from "./history.js";

/** The workspace the relay is installed in; clicks carry it. */
export const SOAK_TEAM_ID = "T0SOAK";
const BOT_ID = "B0SOAK";
const MARKER = /soak-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/;
const REQUEST_ID = /"r":"([^"]+)"/;

/** A request message as people see it (what a click carries back). */
export interface Posted {
  id: string;
  marker: string;
  channel: string;
  ts: string;
  text: string;
  blocks: unknown[];
}

export interface SoakSlack {
  apiUrl: string;
  lives: MessageLife[];
  notices: Notice[];
  opens: Array<{ triggerId: string; at: number; view?: Record<string, unknown> }>;
  /** Calls answered per method, and refused by faults. */
  calls: Map<string, number>;
  refused: number;
  /** The first request message posted for `marker`, once it is posted (undefined when `until` passes first). */
  posted(marker: string, until: number): Promise<Posted | undefined>;
  /** The latest message of `marker` that still has its buttons: the one a person would click now. */
  live(marker: string): Posted | undefined;
  /** true once every message of request `id` has ended. */
  messageEnded(id: string): boolean;
  /** Every call answers `status` until `until` (429 with Retry-After: 1, or 503). */
  fail(status: 429 | 503, until: number): void;
  close(): Promise<void>;
}

export async function startSoakSlack(): Promise<SoakSlack> {
  const events = new EventEmitter();
  events.setMaxListeners(0);
  const firstPost = new Map<string, Posted>();
  /** Every request message, by channel and ts. */
  const posts = new Map<string, Posted>();
  const history: Array<{ channel: string; ts: string; text: unknown; metadata?: unknown }> = [];
  let fault: { status: number; until: number } | undefined;
  let sequence = 0;

  const server = createServer((req, res) => {
    void readArgs(req).then((args) => {
      const method = (req.url ?? "").replace(/^\/api\//, "").split("?")[0] ?? "";
      const now = Date.now();
      if (fault && now < fault.until) {
        slack.refused += 1;
        if (method === "chat.postEphemeral") slack.notices.push(noticeOf(args, now, true));
        if (method === "views.open") slack.opens.push({ triggerId: String(args.trigger_id), at: now });
        const headers: Record<string, string> = { "content-type": "application/json" };
        if (fault.status === 429) headers["retry-after"] = "1";
        res.writeHead(fault.status, headers).end(JSON.stringify({ ok: false, error: fault.status === 429 ? "ratelimited" : "service_unavailable" }));
        return;
      }
      slack.calls.set(method, (slack.calls.get(method) ?? 0) + 1);
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(answer(method, args, now)));
    });
  });

  function answer(method: string, args: Record<string, string>, now: number): Record<string, unknown> {
    switch (method) {
      case "auth.test":
        return { ok: true, team: "soak", team_id: SOAK_TEAM_ID, user: "relay", user_id: "U0SOAKBOT", bot_id: BOT_ID };
      case "chat.postMessage": {
        sequence += 1;
        const ts = `${Math.floor(now / 1000)}.${String(sequence).padStart(6, "0")}`;
        const channel = args.channel ?? "";
        history.push({ channel, ts, text: args.text, ...(args.metadata ? { metadata: JSON.parse(args.metadata) as unknown } : {}) });
        if (!args.thread_ts) recordPost(channel, ts, args, now);
        return { ok: true, channel, ts, message: { ts, text: args.text } };
      }
      case "chat.update": {
        const life = slack.lives.find((l) => l.channel === args.channel && l.ts === args.ts);
        if (life && life.endedAt === undefined && !hasButtons(args.blocks)) endLife(life, now);
        return { ok: true, channel: args.channel, ts: args.ts };
      }
      case "chat.delete": {
        const life = slack.lives.find((l) => l.channel === args.channel && l.ts === args.ts);
        if (life && life.endedAt === undefined) endLife(life, now);
        return { ok: true };
      }
      case "chat.postEphemeral":
        slack.notices.push(noticeOf(args, now, false));
        return { ok: true, message_ts: `${Math.floor(now / 1000)}.000000` };
      case "views.open": {
        const view = args.view ? (JSON.parse(args.view) as Record<string, unknown>) : undefined;
        slack.opens.push({ triggerId: String(args.trigger_id), at: now, ...(view ? { view } : {}) });
        events.emit("open");
        return { ok: true, view: { id: `V0SOAK${sequence++}`, ...view } };
      }
      case "conversations.history": {
        const found = history
          .filter(
            (m) => m.channel === args.channel && (!args.oldest || Number(m.ts) >= Number(args.oldest)) && (!args.latest || Number(m.ts) <= Number(args.latest)),
          )
          .map(({ metadata, ...m }) => ({ type: "message", bot_id: BOT_ID, ...m, ...(metadata ? { metadata } : {}) }))
          .reverse();
        return { ok: true, messages: found.slice(0, Number(args.limit ?? 100)), has_more: false };
      }
      case "users.info":
        return { ok: true, user: { id: args.user, name: String(args.user).toLowerCase(), team_id: SOAK_TEAM_ID, profile: {} } };
      case "chat.getPermalink":
        return { ok: true, permalink: `https://soak.slack.invalid/archives/${args.channel}/p${String(args.message_ts).replace(".", "")}` };
      default:
        return { ok: true };
    }
  }

  function recordPost(channel: string, ts: string, args: Record<string, string>, now: number): void {
    const blocks = args.blocks ?? "";
    const id = REQUEST_ID.exec(blocks.replaceAll('\\"', '"'))?.[1];
    const marker = MARKER.exec(blocks)?.[0] ?? MARKER.exec(args.text ?? "")?.[0];
    if (!id || !marker || !hasButtons(blocks)) return;
    slack.lives.push({ requestId: id, channel, ts, postedAt: now });
    const posted = { id, marker, channel, ts, text: args.text ?? "", blocks: JSON.parse(blocks) as unknown[] };
    posts.set(`${channel} ${ts}`, posted);
    if (!firstPost.has(marker)) {
      firstPost.set(marker, posted);
      events.emit(marker);
    }
  }

  function endLife(life: MessageLife, now: number): void {
    life.endedAt = now;
    events.emit(`ended ${life.requestId}`);
  }

  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const slack: SoakSlack = {
    apiUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/`,
    lives: [],
    notices: [],
    opens: [],
    calls: new Map(),
    refused: 0,
    posted(marker, until) {
      const found = firstPost.get(marker);
      if (found) return Promise.resolve(found);
      return new Promise((resolve) => {
        const timer = setTimeout(() => done(undefined), Math.max(0, until - Date.now()));
        const done = (value: Posted | undefined) => {
          clearTimeout(timer);
          events.off(marker, onPost);
          resolve(value);
        };
        const onPost = () => done(firstPost.get(marker));
        events.on(marker, onPost);
      });
    },
    live(marker) {
      const id = firstPost.get(marker)?.id;
      const open = slack.lives.filter((l) => l.requestId === id && l.endedAt === undefined).at(-1);
      return open && posts.get(`${open.channel} ${open.ts}`);
    },
    messageEnded: (id) => slack.lives.filter((l) => l.requestId === id).every((l) => l.endedAt !== undefined),
    fail(status, until) {
      fault = { status, until };
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return slack;
}

/** Any element that makes the message answerable (a button to press) other than "View full input". */
function hasButtons(blocks: string | undefined): boolean {
  return /"action_id":"relay_(?!view_input|view_page)/.test(blocks ?? "");
}

function noticeOf(args: Record<string, string>, at: number, refused: boolean): Notice {
  return { user: args.user ?? "", channel: args.channel ?? "", text: args.text ?? "", at, refused };
}

/** A Web API call's arguments, form-encoded (as @slack/web-api sends them) or JSON; JSON-valued fields stay strings. */
async function readArgs(req: IncomingMessage): Promise<Record<string, string>> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const body = Buffer.concat(chunks).toString("utf8");
  if (String(req.headers["content-type"]).includes("json")) {
    const parsed = JSON.parse(body || "{}") as Record<string, unknown>;
    return Object.fromEntries(Object.entries(parsed).map(([k, v]) => [k, typeof v === "string" ? v : JSON.stringify(v)]));
  }
  return Object.fromEntries(new URLSearchParams(body));
}
