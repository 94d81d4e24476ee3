/**
 * Slack's Web API for the soak: the one stand-in the tests and the bench use
 * (test/helpers/slack-web-api.ts), plus what the soak adds on top of it: the
 * ledger the checker reads (each request message's life, from its post until
 * it is updated without buttons or deleted; each ephemeral notice; each
 * views.open) and fault bursts, during which every call answers 429
 * (Retry-After: 1) or 503; refused notices and opens are recorded as tried.
 */
import { EventEmitter } from "node:events";
import { startSlackWebApi, type ApiCall } from "../../test/helpers/slack-web-api.js";
import { RELAY_BOT } from "../../test/fixtures/people.js";
import type { MessageLife, Notice } from "./history.js";

/** The workspace the relay is installed in; clicks carry it. */
export const SOAK_TEAM_ID = "T0SOAK";
/** The relay's bot as auth.test names it; its messages carry these ids. */
export const SOAK_BOT = RELAY_BOT;
/** The bot token the soak's relays are given (the stand-in lists calls with another one as problems). */
export const SOAK_BOT_TOKEN = "xoxb-1-soak";
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
  /** Calls per method, refused ones included. */
  calls: Map<string, number>;
  /** Calls refused by fault bursts. */
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
  // Calls are not kept (a 30-minute soak makes tens of thousands); messages are, for conversations.history.
  const standIn = await startSlackWebApi({ botToken: SOAK_BOT_TOKEN, teamId: SOAK_TEAM_ID, record: false });
  const events = new EventEmitter();
  events.setMaxListeners(0);
  const firstPost = new Map<string, Posted>();
  /** Every request message, by channel and ts. */
  const posts = new Map<string, Posted>();
  const refusedCalls = new WeakSet<ApiCall>();
  let fault: { status: 429 | 503; until: number } | undefined;

  standIn.answer("*", (args, call) => {
    const now = Date.now();
    if (fault && now < fault.until) {
      refusedCalls.add(call);
      slack.refused += 1;
      if (call.method === "chat.postEphemeral") slack.notices.push(noticeOf(args, now, true));
      if (call.method === "views.open") slack.opens.push({ triggerId: String(args.trigger_id), at: now });
      return {
        status: fault.status,
        body: { ok: false, error: fault.status === 429 ? "ratelimited" : "service_unavailable" },
        headers: fault.status === 429 ? { "retry-after": "1" } : {},
      };
    }
    if (call.method === "users.info") return { ok: true, user: { id: args.user, name: String(args.user).toLowerCase(), team_id: SOAK_TEAM_ID, profile: {} } };
    return undefined;
  });

  // The ledger, from each call once it is answered (a post's ts is the stand-in's).
  standIn.onCall((call) => {
    if (refusedCalls.has(call)) return;
    const { method, args } = call;
    const now = Date.now();
    if (method === "chat.postMessage" && args.thread_ts === undefined) recordPost(args, now);
    else if (method === "chat.update" || method === "chat.delete") {
      const life = slack.lives.find((l) => l.channel === args.channel && l.ts === args.ts);
      if (life && life.endedAt === undefined && (method === "chat.delete" || !hasButtons(args.blocks))) endLife(life, now);
    } else if (method === "chat.postEphemeral") slack.notices.push(noticeOf(args, now, false));
    else if (method === "views.open") {
      const view = typeof args.view === "object" && args.view !== null ? (args.view as Record<string, unknown>) : undefined;
      slack.opens.push({ triggerId: String(args.trigger_id), at: now, ...(view ? { view } : {}) });
    }
  });

  function recordPost(args: Record<string, unknown>, now: number): void {
    const blocks = JSON.stringify(args.blocks ?? []);
    const text = typeof args.text === "string" ? args.text : "";
    const id = REQUEST_ID.exec(blocks.replaceAll('\\"', '"'))?.[1];
    const marker = MARKER.exec(blocks)?.[0] ?? MARKER.exec(text)?.[0];
    const channel = String(args.channel);
    const ts = String(args.ts);
    if (!id || !marker || !hasButtons(args.blocks)) return;
    slack.lives.push({ requestId: id, channel, ts, postedAt: now });
    const posted = { id, marker, channel, ts, text, blocks: Array.isArray(args.blocks) ? (args.blocks as unknown[]) : [] };
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

  const slack: SoakSlack = {
    apiUrl: standIn.url,
    lives: [],
    notices: [],
    opens: [],
    calls: standIn.counts,
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
    close: () => standIn.close(),
  };
  return slack;
}

/** Any element that makes the message answerable (a button to press) other than "View full input". */
function hasButtons(blocks: unknown): boolean {
  return /"action_id":"relay_(?!view_input|view_page)/.test(JSON.stringify(blocks ?? []));
}

function noticeOf(args: Record<string, unknown>, at: number, refused: boolean): Notice {
  const text = (value: unknown) => (typeof value === "string" ? value : "");
  return { user: text(args.user), channel: text(args.channel), text: text(args.text), at, refused };
}
