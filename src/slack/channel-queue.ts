/**
 * Keeps the relay's Web API calls to Slack's pace. Hand-written because the
 * WebClient's own queue is global (one concurrency limit for every method
 * and channel) and its rate-limit handling retries blindly: Slack limits
 * chat.postMessage per channel (about one message a second, short bursts
 * tolerated) and other methods per workspace, and a 429 says how long to
 * stay away (Retry-After).
 *
 * Calls are grouped under a key: `chat.postMessage:<channel>` for posts, the
 * method name for everything else. A post key has a line of callers, a
 * token bucket (`postsPerSecond`, `postBurst`) and a pause set by `pause()`
 * from a 429's Retry-After; other keys have only the pause, and their calls
 * go side by side. Only the head of a line waits
 * for a token and calls, one post at a time per channel, so 60 posts to one
 * channel make one call a second instead of 60 callers hammering Slack, and
 * the head that got a 429 waits it out and retries before anyone behind it.
 * A caller whose deadline comes before its turn leaves the line empty-handed.
 *
 * Request posts wait in a fair line (./fair-line.ts): round robin across
 * the agent tokens that asked them (`owner`), arrival order within one, so
 * one agent's flood of questions does not hold another's back; a request
 * that would miss its deadline goes ahead of its own token's requests that
 * can wait.
 *
 * A post line has two lanes. Request posts (an agent waits on them) go
 * ahead of side work (thread notices, reminders, rule tallies: `side`),
 * a side post waiting for its moment steps aside when a request post comes,
 * and a side post keeps one token of the burst for the next request post:
 * the relay's own chatter never makes an agent's question miss its deadline.
 *
 * Pacing is per relay instance: instances sharing Redis do not share it,
 * each honours the 429s it gets (see docs/operations.md, Slack rate limits).
 */
import { FairLine } from "./fair-line.js";
import { defaultSleep } from "./retry.js";

export interface ChannelQueueOptions {
  /** Unix time in milliseconds. */
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
  /** Steady rate of chat.postMessage per channel. */
  postsPerSecond?: number;
  /**
   * Posts one channel may take at once after a quiet spell. Below what Slack
   * tolerates, so Slack's own bucket keeps some room for network jitter.
   */
  postBurst?: number;
}

interface Line {
  /** Whole and partial tokens in the bucket; unused for keys without a bucket. */
  tokens: number;
  /** When `tokens` was last brought up to date (Unix ms). */
  refilledAt: number;
  /** No call under this key before this time (Unix ms), from a Retry-After. */
  pausedUntil: number;
  /** Request posts waiting behind the head that go first of all (a retry keeps its place); each is resolved when the line is handed to it. */
  front: Waiter[];
  /** Request posts waiting behind the head, shared fairly between owners; they go before side work. */
  fair: FairLine<Waiter>;
  /** Side work waiting behind the head, first first. */
  side: Waiter[];
  /** true while a caller holds the line (waits for its moment, or calls). */
  busy: boolean;
  /** Set while a side caller holding the line sleeps until its moment: makes it give the line up to a request post. */
  stepAside: (() => void) | undefined;
  /**
   * Set by a 429 on a paced line: from then on each post waits a full
   * interval after the previous post's reply, not after its start, so that
   * network jitter cannot bring two posts closer than Slack's pace.
   */
  strict: boolean;
  /** When the last post under this key got its reply (Unix ms). */
  repliedAt: number;
}

interface Waiter {
  resolve: () => void;
  side: boolean;
  owner: string;
  deadline: number;
}

export interface TurnOptions {
  /** At the head of its lane (a retry keeps its place). */
  front?: boolean;
  /** Side work (not a request an agent waits on): behind request posts, and it leaves them a token. */
  side?: boolean;
  /** Who asked (the agent token's name): request posts are shared fairly between owners. */
  owner?: string;
}

/** A caller's turn under one key: it holds the line until `release`. */
export interface Turn {
  /** Hands the line to the next caller; `used: false` gives the token back (no call was made). */
  release(used?: boolean): void;
  /**
   * Waits, still holding the line, for another go (after `pause`), and takes
   * a token; false when that would be after the deadline (the line is
   * released then).
   */
  again(deadline?: number): Promise<boolean>;
}

/** The key a Web API call is paced and paused under. */
export function queueKey(method: string, channel?: string): string {
  return method === "chat.postMessage" && channel !== undefined ? `${method}:${channel}` : method;
}

export class ChannelQueue {
  private readonly lines = new Map<string, Line>();
  private readonly now: () => number;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly rate: number;
  private readonly burst: number;

  constructor({ now = Date.now, sleep = defaultSleep, postsPerSecond = 1, postBurst = 2 }: ChannelQueueOptions = {}) {
    if (!(postsPerSecond > 0) || !(postBurst >= 1)) throw new Error("postsPerSecond must be positive and postBurst at least 1");
    this.now = now;
    this.sleep = sleep;
    this.rate = postsPerSecond;
    this.burst = postBurst;
  }

  /**
   * Waits for the caller's turn under `key` and takes it (a token, for a
   * paced key): the caller then holds the line, so calls under one key go one
   * at a time and a 429 is seen before the next call is made. Resolves
   * undefined, without a turn, when it would come after `deadline` (Unix ms).
   * `front` puts the caller at the head of its lane (a retry keeps its
   * place); `side` puts it in the side lane; request posts are shared
   * between `owner`s (see the header).
   */
  async turn(key: string, deadline: number, { front = false, side = false, owner = "" }: TurnOptions = {}): Promise<Turn | undefined> {
    if (!this.paced(key)) return this.unpacedTurn(key, deadline);
    const line = this.line(key);
    if (line.busy) {
      // A side caller sleeping until its moment gives way; the one ahead hands the line over (busy stays true) when it releases it.
      if (!side) line.stepAside?.();
      await this.queued(line, { side, owner, deadline }, front);
    }
    line.busy = true;
    for (;;) {
      const outcome = await this.ready(key, line, deadline, side);
      if (outcome === "ready") break;
      if (outcome === "late") {
        this.handOver(key, line);
        return undefined;
      }
      // Stepped aside: back in line first of the side lane, behind the request post that came.
      const back = this.queued(line, { side, owner, deadline }, true);
      this.handOver(key, line);
      await back;
    }
    let held = true;
    return {
      release: (used = true) => {
        if (!held) return;
        held = false;
        if (!used && this.paced(key)) line.tokens = Math.min(this.burst, line.tokens + 1);
        if (used) line.repliedAt = this.now();
        this.handOver(key, line);
      },
      again: async (againDeadline = deadline) => {
        if (!held) throw new Error("turn.again() after release()");
        // A retry keeps the line: it does not step aside.
        if ((await this.ready(key, line, againDeadline, side, false)) === "ready") return true;
        held = false;
        this.handOver(key, line);
        return false;
      },
    };
  }

  /** Milliseconds left of the pause under `key` (0 when there is none). */
  pausedFor(key: string): number {
    return Math.max(0, (this.lines.get(key)?.pausedUntil ?? 0) - this.now());
  }

  /** A method without a bucket: calls go side by side, held back only while a 429's pause lasts. */
  private async unpacedTurn(key: string, deadline: number): Promise<Turn | undefined> {
    const waitOut = async (until: number) => {
      for (let paused = this.pausedFor(key); paused > 0; paused = this.pausedFor(key)) {
        if (this.now() + paused > until) return false;
        await this.sleep(paused);
      }
      return true;
    };
    if (!(await waitOut(deadline))) return undefined;
    return { release: () => {}, again: (againDeadline = deadline) => waitOut(againDeadline) };
  }

  /** Resolves when the line is handed to this caller: request posts queue ahead of side work, `front` first of its lane. */
  private queued(line: Line, caller: Omit<Waiter, "resolve">, front: boolean): Promise<void> {
    return new Promise<void>((resolve) => {
      const waiter = { ...caller, resolve };
      if (waiter.side) {
        if (front) line.side.unshift(waiter);
        else line.side.push(waiter);
      } else if (front) line.front.unshift(waiter);
      else line.fair.add(waiter);
    });
  }

  /**
   * Waits, holding the line, until the head may go, and takes a token:
   * "late" when that is after `deadline`, "aside" when a side caller was
   * asked to give way to a request post while it slept (no token taken).
   */
  private async ready(key: string, line: Line, deadline: number, side: boolean, mayStepAside = side): Promise<"ready" | "late" | "aside"> {
    for (;;) {
      const at = this.readyAt(key, line, side);
      if (at > deadline) return "late";
      const wait = at - this.now();
      if (wait <= 0) break;
      if (!mayStepAside) {
        await this.sleep(wait);
        continue;
      }
      const asked = new Promise<"aside">((resolve) => (line.stepAside = () => resolve("aside")));
      const woke = await Promise.race([this.sleep(wait).then(() => "slept" as const), asked]);
      line.stepAside = undefined;
      if (woke === "aside") return "aside";
    }
    if (this.paced(key)) line.tokens -= 1;
    return "ready";
  }

  private handOver(key: string, line: Line): void {
    line.stepAside = undefined;
    const next = line.front.shift() ?? line.fair.take(this.now(), 1000 / this.rate) ?? line.side.shift();
    if (next) return next.resolve();
    line.busy = false;
    this.tidy(key, line);
  }

  /**
   * Slack answered 429 under `key`: no call under it for `ms`, then one call,
   * then the steady rate with no burst, each post a full interval after the
   * previous one's reply (until the line has been idle long enough to be
   * forgotten).
   */
  pause(key: string, ms: number): void {
    const line = this.line(key);
    line.pausedUntil = Math.max(line.pausedUntil, this.now() + ms);
    line.tokens = 1;
    line.refilledAt = line.pausedUntil;
    line.strict = this.paced(key);
  }

  /** Keys whose line is remembered (a bucket with tokens spent, a pause, or callers). */
  get lineCount(): number {
    return this.lines.size;
  }

  /** Callers waiting under `key` (the head included), or under every key. */
  depth(key?: string): number {
    const size = (line: Line) => waitingIn(line) + (line.busy ? 1 : 0);
    if (key !== undefined) return this.lines.has(key) ? size(this.lines.get(key)!) : 0;
    let total = 0;
    for (const line of this.lines.values()) total += size(line);
    return total;
  }

  private paced(key: string): boolean {
    return key.startsWith("chat.postMessage:");
  }

  /**
   * When the head may go: after the pause and, for a paced key, once a whole
   * token is in the bucket (two for side work where the burst allows: one
   * stays for the next request post).
   */
  private readyAt(key: string, line: Line, side = false): number {
    const now = this.now();
    let at = Math.max(now, line.pausedUntil);
    if (this.paced(key)) {
      if (now > line.refilledAt) {
        line.tokens = Math.min(this.burst, line.tokens + ((now - line.refilledAt) / 1000) * this.rate);
        line.refilledAt = now;
      }
      const needed = side && this.burst >= 2 ? 2 : 1;
      if (line.tokens < needed) at = Math.max(at, line.refilledAt + Math.ceil(((needed - line.tokens) / this.rate) * 1000));
      if (line.strict) at = Math.max(at, line.repliedAt + Math.ceil(1000 / this.rate));
    }
    return at;
  }

  private line(key: string): Line {
    let line = this.lines.get(key);
    if (!line) {
      this.sweep();
      line = {
        tokens: this.burst,
        refilledAt: this.now(),
        pausedUntil: 0,
        front: [],
        fair: new FairLine(),
        side: [],
        busy: false,
        stepAside: undefined,
        strict: false,
        repliedAt: 0,
      };
      this.lines.set(key, line);
    }
    return line;
  }

  /** Forgets an idle line once it holds nothing worth keeping (full bucket, no pause), so keys do not pile up; true when it did. */
  private tidy(key: string, line: Line): boolean {
    if (line.busy || waitingIn(line) > 0 || line.pausedUntil > this.now()) return false;
    const full = !this.paced(key) || line.tokens + ((this.now() - line.refilledAt) / 1000) * this.rate >= this.burst;
    if (full) this.lines.delete(key);
    return full;
  }

  /**
   * Before a new line: forgets the oldest lines that have since become idle
   * with a full bucket (a line released with tokens spent is kept until
   * then, and a post to a channel not posted to again would keep it for
   * good: about 750 bytes a channel). The lines still needed go to the back,
   * so each new line looks at two others at most.
   */
  private sweep(): void {
    let looked = 0;
    for (const [key, line] of this.lines) {
      if (looked++ === 2) return;
      if (this.tidy(key, line)) continue;
      this.lines.delete(key);
      this.lines.set(key, line);
    }
  }
}

/** Callers waiting behind the head of `line`. */
function waitingIn(line: Line): number {
  return line.front.length + line.fair.size + line.side.length;
}
