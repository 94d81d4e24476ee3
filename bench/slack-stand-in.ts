/**
 * A local stand-in for Slack's Web API on loopback, for the benchmark: it
 * answers chat.postMessage (with the channel and a fresh ts), chat.update,
 * chat.postEphemeral, auth.test (the bench's workspace, BENCH_TEAM_ID, the
 * team its clicks carry), usergroups.users.list (the groups it is given;
 * any other is Slack's no_such_subteam) and views.open with ok: true, fast
 * and without logging. Every posted message is recorded under the bench
 * marker found in its text (each bench request carries a unique one in its
 * tool input), so the bench learns which request id and ts each message has
 * without asking the relay. Every ephemeral notice is recorded too: the
 * relay tells a person that way when their click was not taken (refused,
 * too late, not recorded), so the bench can fail at once instead of waiting
 * out a long-poll.
 *
 * With `postsPerSecond` it enforces chat.postMessage's limit per channel as
 * Slack does: a token bucket per channel (that rate, `postBurst` at once)
 * and HTTP 429 with `Retry-After: 1` for a post over it.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { once } from "node:events";
import type { AddressInfo } from "node:net";
import { RELAY_BOT } from "../test/fixtures/people.js";

/** A posted request message as the bench needs it to click on it the way Slack delivers clicks. */
export interface PostedMessage {
  /** The relay's request id, read from the buttons' values. */
  id: string;
  channel: string;
  ts: string;
  /** The message's fallback text, as posted. */
  text: string;
  /** The message's blocks, as posted: Slack sends them back in every block_actions payload. */
  blocks: unknown[];
}

/** The workspace the bench's relay is installed in (auth.test) and its clicking people belong to. */
export const BENCH_TEAM_ID = "T0BENCH";

/** A chat.postEphemeral call: what the relay told whom. */
export interface EphemeralNotice {
  channel: string;
  user: string;
  text: string;
}

export interface SlackStandIn {
  /** Web API base URL ending in "/" (for SLACK_API_URL). */
  apiUrl: string;
  /** Resolves once the message carrying `marker` was posted; forgets it then. */
  posted(marker: string, timeoutMs?: number): Promise<PostedMessage>;
  /** true when the message carrying `marker` was posted and nobody has waited for it with `posted` yet. */
  hasPosted(marker: string): boolean;
  /** Web API calls answered so far, by method (refused ones included). */
  calls: Map<string, number>;
  /** chat.postMessage calls refused with 429. */
  refused: number;
  /** Every ephemeral notice posted so far, oldest first. */
  notices: EphemeralNotice[];
  /** Resolves with the next ephemeral notice; `cancel` stops waiting (the promise then never settles). */
  nextNotice(): { notice: Promise<EphemeralNotice>; cancel(): void };
  close(): Promise<void>;
}

/** What bench requests put in their tool input so their message can be found. */
export const MARKER_PATTERN = /bench-marker-[0-9a-f-]{36}/;
/** A button value as src/slack/ids.ts encodes it, seen inside the JSON-encoded blocks. */
const REQUEST_ID = /\\"r\\":\\"([^"\\]+)\\"/;

export interface StandInOptions {
  /** Enforce chat.postMessage's per-channel limit at this rate (unset: no limit). */
  postsPerSecond?: number;
  /** Posts a channel may take at once after a quiet spell (default 1). */
  postBurst?: number;
  /** User groups usergroups.users.list knows: group id → member user ids. */
  usergroups?: Record<string, string[]>;
}

export async function startSlackStandIn({ postsPerSecond, postBurst = 1, usergroups = {} }: StandInOptions = {}): Promise<SlackStandIn> {
  const buckets = new Map<string, { tokens: number; at: number }>();
  /** true when `channel` may take one more post now (and takes it). */
  const admit = (channel: string): boolean => {
    if (postsPerSecond === undefined) return true;
    const now = performance.now();
    const bucket = buckets.get(channel) ?? { tokens: postBurst, at: now };
    bucket.tokens = Math.min(postBurst, bucket.tokens + ((now - bucket.at) / 1000) * postsPerSecond);
    bucket.at = now;
    buckets.set(channel, bucket);
    if (bucket.tokens < 1) return false;
    bucket.tokens -= 1;
    return true;
  };
  const seen = new Map<string, PostedMessage>();
  const waiting = new Map<string, (message: PostedMessage) => void>();
  const calls = new Map<string, number>();
  const noticeWaiters = new Set<(notice: EphemeralNotice) => void>();
  let sequence = 0;

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => answer(req, res, Buffer.concat(chunks).toString("utf8")));
  });

  function answer(req: IncomingMessage, res: ServerResponse, body: string): void {
    const method = (req.url ?? "").split("?")[0]!.replace(/^\/api\//, "");
    calls.set(method, (calls.get(method) ?? 0) + 1);
    let reply: Record<string, unknown> = { ok: true };
    if (method === "chat.postMessage") {
      const args = argsOf(req, body);
      const channel = typeof args.channel === "string" ? args.channel : "C0BENCH0001";
      if (!admit(channel)) {
        standIn.refused += 1;
        const payload = JSON.stringify({ ok: false, error: "ratelimited" });
        res.writeHead(429, { "content-type": "application/json", "retry-after": "1", "content-length": Buffer.byteLength(payload) });
        res.end(payload);
        return;
      }
      sequence += 1;
      const ts = `${1_700_000_000 + Math.floor(sequence / 1_000_000)}.${String(sequence % 1_000_000).padStart(6, "0")}`;
      reply = { ok: true, channel, ts, message: { ts } };
      record(String(args.blocks ?? ""), String(args.text ?? ""), channel, ts);
    } else if (method === "auth.test") {
      reply = { ok: true, team: "bench", user: "relay-bench", team_id: BENCH_TEAM_ID, user_id: RELAY_BOT.userId, bot_id: RELAY_BOT.botId };
    } else if (method === "usergroups.users.list") {
      const group = String(argsOf(req, body).usergroup ?? "");
      reply = Object.hasOwn(usergroups, group) ? { ok: true, users: usergroups[group] } : { ok: false, error: "no_such_subteam" };
    } else if (method === "chat.postEphemeral") {
      const args = argsOf(req, body);
      notice({ channel: String(args.channel ?? ""), user: String(args.user ?? ""), text: String(args.text ?? "") });
    }
    const payload = JSON.stringify(reply);
    res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(payload) });
    res.end(payload);
  }

  function notice(posted: EphemeralNotice): void {
    standIn.notices.push(posted);
    for (const waiter of noticeWaiters) waiter(posted);
    noticeWaiters.clear();
  }

  function record(blocksJson: string, text: string, channel: string, ts: string): void {
    const marker = MARKER_PATTERN.exec(blocksJson)?.[0];
    const id = REQUEST_ID.exec(blocksJson)?.[1];
    if (!marker || !id) return;
    const blocks: unknown = JSON.parse(blocksJson);
    const message = { id, channel, ts, text, blocks: Array.isArray(blocks) ? blocks : [] };
    const waiter = waiting.get(marker);
    if (waiter) {
      waiting.delete(marker);
      waiter(message);
    } else {
      seen.set(marker, message);
    }
  }

  server.keepAliveTimeout = 60_000;
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;

  const standIn: SlackStandIn = {
    apiUrl: `http://127.0.0.1:${port}/api/`,
    calls,
    refused: 0,
    notices: [],
    nextNotice() {
      let waiter: ((notice: EphemeralNotice) => void) | undefined;
      const notice = new Promise<EphemeralNotice>((resolve) => {
        waiter = resolve;
        noticeWaiters.add(resolve);
      });
      return { notice, cancel: () => void noticeWaiters.delete(waiter!) };
    },
    hasPosted: (marker) => seen.has(marker),
    posted(marker, timeoutMs = 10_000) {
      const message = seen.get(marker);
      if (message) {
        seen.delete(marker);
        return Promise.resolve(message);
      }
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiting.delete(marker);
          reject(new Error(`the relay did not post the message for ${marker} within ${timeoutMs} ms`));
        }, timeoutMs);
        timer.unref();
        waiting.set(marker, (posted) => {
          clearTimeout(timer);
          resolve(posted);
        });
      });
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return standIn;
}

/** The arguments of a form-encoded (as @slack/web-api sends them) or JSON Web API call. */
function argsOf(req: IncomingMessage, body: string): Record<string, unknown> {
  if ((req.headers["content-type"] ?? "").includes("json")) {
    const parsed: unknown = JSON.parse(body);
    if (typeof parsed !== "object" || parsed === null) return {};
    const args = parsed as Record<string, unknown>;
    return { ...args, blocks: JSON.stringify(args.blocks ?? "") };
  }
  return Object.fromEntries(new URLSearchParams(body));
}
