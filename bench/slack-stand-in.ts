/**
 * The bench's view of Slack's Web API: the one stand-in the tests use
 * (test/helpers/slack-web-api.ts), started without recording calls (it only
 * counts them), plus what the bench needs to find its messages. Every posted
 * message is found by the bench marker in its blocks (each bench request
 * carries a unique one in its tool input), so the bench learns which request
 * id and ts each message has without asking the relay. Every ephemeral notice
 * is kept too: the relay tells a person that way when their click was not
 * taken (refused, too late, not recorded), so the bench can fail at once
 * instead of waiting out a long-poll.
 *
 * With `postsPerSecond` the stand-in enforces chat.postMessage's limit per
 * channel as Slack does: a token bucket per channel (that rate, `postBurst`
 * at once) and HTTP 429 with `Retry-After: 1` for a post over it.
 */
import { startSlackWebApi } from "../test/helpers/slack-web-api.js";

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
  const api = await startSlackWebApi({ teamId: BENCH_TEAM_ID, postBurst, record: false, ...(postsPerSecond === undefined ? {} : { postsPerSecond }) });
  for (const [group, members] of Object.entries(usergroups)) api.usergroups.set(group, members);
  const seen = new Map<string, PostedMessage>();
  const waiting = new Map<string, (message: PostedMessage) => void>();
  const noticeWaiters = new Set<(notice: EphemeralNotice) => void>();
  const notices: EphemeralNotice[] = [];

  api.onCall(({ method, args }) => {
    if (method === "chat.postEphemeral") {
      const posted = { channel: String(args.channel ?? ""), user: String(args.user ?? ""), text: String(args.text ?? "") };
      notices.push(posted);
      for (const waiter of noticeWaiters) waiter(posted);
      noticeWaiters.clear();
    } else if (method === "chat.postMessage" && typeof args.ts === "string") {
      record(JSON.stringify(args.blocks ?? ""), String(args.text ?? ""), String(args.channel), args.ts);
    }
  });

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

  return {
    apiUrl: api.url,
    calls: api.counts,
    get refused() {
      return api.refused("chat.postMessage");
    },
    notices,
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
    close: () => api.close(),
  };
}
