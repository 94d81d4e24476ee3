/**
 * A relay's shutdown, in one place: drain (no new work, held calls may still
 * be answered within RELAY_SHUTDOWN_GRACE), hand over what is still held, and
 * close every part in order. It also undoes a start that failed part of the
 * way (a port in use, a refused token): it stops only what was started.
 * src/main.ts builds it with the relay and tells it what the start reached.
 */
import type { HttpApp } from "./http/transport.js";
import type { Logger } from "./logger.js";
import type { HookCalls } from "./requests/hooks/calls.js";
import { SHUTDOWN_REASON } from "./requests/hooks/calls.js";
import type { RequestService } from "./requests/service.js";

/** Why the in-memory store's pending requests are cancelled at shutdown. */
export const MEMORY_STORE_LOST_REASON = `${SHUTDOWN_REASON}; its in-memory store does not outlive a restart (set REDIS_URL, REDIS_CLUSTER_NODES or REDIS_SENTINELS to keep requests across restarts)`;

/** A part stopped at the end, in the order given (the callback worker, the audit, the stores). */
export type Closer = () => Promise<void>;

export interface LifecycleParts {
  service: Pick<RequestService, "drain" | "waiting" | "cancelAllPending" | "close" | "idle">;
  hookCalls: Pick<HookCalls, "held" | "close">;
  http: HttpApp;
  /** The Slack app, when the relay has one: its link is stopped once started, its listeners waited for. */
  slack?: { stop(): Promise<void>; idle(): Promise<void> };
  /** Stopped after the HTTP server and the service, in this order. */
  closers: readonly Closer[];
  logger: Logger;
  /** RELAY_SHUTDOWN_GRACE in seconds. */
  graceSeconds: number;
  /**
   * A shared store (Redis): pending requests outlive this process, so held
   * long-polls are handed over (returned still pending) rather than ended; with
   * the memory store every pending request is cancelled instead.
   */
  handOver: boolean;
}

export class RelayLifecycle {
  private serving = false;
  private slackStarted = false;
  private readonly stops: Array<() => void> = [];
  private closing: Promise<void> | undefined;

  constructor(private readonly parts: LifecycleParts) {}

  /** The Slack link is being started: close stops it. */
  slackStarting(): void {
    this.slackStarted = true;
  }

  /**
   * The relay serves (its start finished); `stops` end what runs in the background (the sweeper; with a shared
   * store the callback worker too, so callbacks go to the instances that stay), first thing after the drain.
   */
  serve(...stops: Array<() => void>): void {
    this.serving = true;
    this.stops.push(...stops);
  }

  /**
   * Shutdown, step 1: the instance takes no new work (/readyz 503, new
   * creates, long-polls and hook calls refused, every reply closes its
   * connection) while the calls it holds may still be answered, until none is
   * left or the grace passes. Clicks and the sweeper go on meanwhile.
   */
  async drain(): Promise<void> {
    const { service, hookCalls, logger, graceSeconds, handOver } = this.parts;
    service.drain();
    const held = () => service.waiting + hookCalls.held;
    const end = Date.now() + graceSeconds * 1000;
    logger.info({ held: held(), graceSeconds }, "shutting down: no new work; held calls may finish within the grace period");
    // Idle keep-alive connections stay open: a call sent on one gets a 503 that closes it, where closing it
    // from this side could cross that call on the wire and reset it without a word.
    while (held() > 0 && Date.now() < end) {
      await new Promise((resolve) => setTimeout(resolve, Math.min(100, end - Date.now())));
    }
    if (held() > 0) logger.info({ held: held(), handOver }, "grace period over: handing over held calls");
  }

  /**
   * Drains (once serving), then stops everything, in order; what SIGTERM
   * runs. After the drain, held hook calls are denied ("the relay restarted")
   * and their requests cancelled: the connection cannot move, and nobody may
   * approve what the agent was told is denied. Held long-polls return the
   * request as it is, still pending (hand-over), or, with the memory store,
   * every pending request is cancelled first (none survives the process).
   */
  close(): Promise<void> {
    return (this.closing ??= this.stop());
  }

  private async stop(): Promise<void> {
    const { service, hookCalls, http, slack, logger, handOver } = this.parts;
    if (this.serving) await this.drain();
    for (const stop of this.stops) stop();
    if (this.slackStarted) await slack?.stop().catch((error: unknown) => logger.warn({ error }, "slack stop failed"));
    await hookCalls.close();
    if (this.serving && !handOver) {
      await service.cancelAllPending("relay", MEMORY_STORE_LOST_REASON).catch((error: unknown) => logger.warn({ error }, "cancelling pending requests failed"));
    }
    service.close();
    // Their sockets turn idle once the replies are out; any still busy after 2 s are cut.
    const idle = setInterval(() => http.server.closeIdleConnections(), 50);
    const hard = setTimeout(() => http.server.closeAllConnections(), 2000);
    await http.close().finally(() => {
      clearInterval(idle);
      clearTimeout(hard);
    });
    await service.idle();
    await slack?.idle();
    for (const close of this.parts.closers) await close();
    if (this.serving) logger.info("relay stopped");
  }
}
