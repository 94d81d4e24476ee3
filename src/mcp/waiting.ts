/**
 * Holding a tool call while a person answers in Slack. Three duties:
 * - progress: every `progressMs` a `notifications/progress` goes out when the
 *   client gave a progress token, so a client that cuts calls at 60 s (or
 *   Claude Code at 5 minutes) and resets its timer on progress keeps waiting;
 * - cancel: a call the client cancels (notifications/cancelled) or leaves
 *   (closed connection) cancels its request, so the Slack message says so;
 *   unless another call for the same tool call (the same tool_use_id) still
 *   waits on it here;
 * - fail closed: the wait's own failures reach the caller as errors, which
 *   each tool turns into a deny or an error result, never an allow.
 */
import type { RequestView } from "../protocol/request-view.js";
import type { McpRelay } from "./relay.js";

/** Why a request is cancelled when its call is: shown in Slack. */
export const CALL_CANCELLED = "the MCP client cancelled the call";
export const CONNECTION_CLOSED = "the MCP client closed the connection";

/** A call cancelled before it made its request (its cancel came first: POST /mcp remembers it): nobody is asked. */
export class CancelledBeforeAsking extends Error {
  constructor() {
    super("The MCP client cancelled the call before the relay asked anyone, so nobody was asked.");
    this.name = "CancelledBeforeAsking";
  }
}

/** Default of RELAY_MCP_PROGRESS, in seconds. */
export const DEFAULT_MCP_PROGRESS_SECONDS = 25;

/** Reports progress to the client (a notification with the seconds waited so far). */
export type ProgressReporter = (secondsWaited: number) => Promise<void>;

export interface Hold {
  /** Aborts when the client cancels the call or leaves. */
  signal: AbortSignal;
  /** Absent: the client asked for no progress. */
  progress?: ProgressReporter | undefined;
  progressMs: number;
  /** Why the request is cancelled when the call is: shown in Slack. */
  cancelReason: () => string;
}

/** Calls waiting on each request in this process. */
export class Holders {
  private readonly counts = new Map<string, number>();
  /** Calls held now, their cancels included. */
  private active = 0;
  private readonly idlers: Array<() => void> = [];

  /** Counts a call on `id`; the returned function uncounts it and says whether it was the last. */
  enter(id: string): () => boolean {
    this.counts.set(id, (this.counts.get(id) ?? 0) + 1);
    return () => {
      const left = (this.counts.get(id) ?? 1) - 1;
      if (left > 0) this.counts.set(id, left);
      else this.counts.delete(id);
      return left === 0;
    };
  }

  /** Runs a held call, counted until it has finished (its request cancelled, when it was). */
  async run<T>(call: () => Promise<T>): Promise<T> {
    this.active += 1;
    try {
      return await call();
    } finally {
      this.active -= 1;
      if (this.active === 0) for (const idle of this.idlers.splice(0)) idle();
    }
  }

  /** Resolves once no call is held (a process that is closing waits for its cancels). */
  idle(): Promise<void> {
    return this.active === 0 ? Promise.resolve() : new Promise((resolve) => this.idlers.push(resolve));
  }
}

/** Throws CancelledBeforeAsking when the call is cancelled already: checked before its request is made. */
export function notCancelledYet(hold: Hold): void {
  if (hold.signal.aborted) throw new CancelledBeforeAsking();
}

/** Runs `wait` while reporting progress; when the call is aborted, cancels request `id` unless another call still waits on it. */
export function holdCall(relay: McpRelay, holders: Holders, id: string, hold: Hold, wait: () => Promise<RequestView>): Promise<RequestView> {
  return holders.run(async () => {
    const leave = holders.enter(id);
    const started = Date.now();
    const tick = hold.progress
      ? setInterval(() => void hold.progress!(Math.round((Date.now() - started) / 1000)).catch(() => undefined), hold.progressMs)
      : undefined;
    try {
      return await wait();
    } finally {
      if (tick) clearInterval(tick);
      const last = leave();
      if (hold.signal.aborted && last) await relay.cancel(id, hold.cancelReason()).catch(() => undefined);
    }
  });
}
