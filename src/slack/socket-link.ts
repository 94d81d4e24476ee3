/**
 * The Socket Mode connection's life (issue 20): @slack/socket-mode's client
 * opens it, and this module decides when. The client's own reconnects are
 * turned off (`autoReconnectEnabled: false`) because they fail badly for a
 * relay: its start() waits for Slack's hello without end when Slack accepts
 * a connection and says nothing, a network error at apps.connections.open
 * ends them for good, and a reconnect that fails rejects where no one
 * listens. Here instead:
 *
 * - The start makes one attempt, bounded by `attemptMs`. Slack refusing the
 *   app token stops the start with one line naming SLACK_APP_TOKEN and how
 *   to make one; any other failure (Slack unreachable, silent, slow) is
 *   logged and retried in the background with backoff, and the relay starts.
 * - While not connected, `problem()` says why and when the next attempt is
 *   (GET /readyz answers 503 with it). A dropped connection is retried at once,
 *   then with backoff.
 * - stop() ends the link whatever the attempt in flight is doing.
 */
import type { SocketModeReceiver } from "@slack/bolt";
import type { Logger } from "../logger.js";
import { Backoff, settleBefore } from "../protocol/timing.js";

type SocketModeClient = SocketModeReceiver["client"];

/** Slack's answers to apps.connections.open that no retry changes: the app token is wrong, revoked, or lacks its scope. */
const REFUSALS = new Set([
  "invalid_auth",
  "not_authed",
  "account_inactive",
  "token_revoked",
  "token_expired",
  "user_removed_from_team",
  "team_disabled",
  "missing_scope",
  "not_allowed_token_type",
]);

/** How to make an app token, ending the line a refused one stops the start with. */
export const APP_TOKEN_FIX =
  "create an app-level token with the connections:write scope (the app's Basic Information page → App-Level Tokens → Generate Token and Scopes) and set SLACK_APP_TOKEN to it (xapp-…), or unset SLACK_APP_TOKEN for HTTP mode";

/** The line a refused app token stops the start with. */
export function appTokenRefused(code: string): string {
  return `SLACK_APP_TOKEN was refused by Slack (${code}): ${APP_TOKEN_FIX}`;
}

export interface SocketLinkOptions {
  client: SocketModeClient;
  logger: Logger;
  /** Longest one connection attempt may take, apps.connections.open to hello (ms). Give the client's Web API calls a shorter timeout. */
  attemptMs?: number;
  /** Delays between attempts; default 1 s doubling to 30 s, with jitter. */
  backoff?: Backoff;
}

/** Longest a connection attempt may take by default (ms). */
export const ATTEMPT_MS = 10_000;
/** How long stop() waits for the client to close its connection (ms). */
const STOP_MS = 2_000;

export class SocketLink {
  private readonly client: SocketModeClient;
  private readonly logger: Logger;
  private readonly attemptMs: number;
  private readonly backoff: Backoff;
  private connected = false;
  private stopped = false;
  private why = "not connected yet";
  private nextAt: number | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor({ client, logger, attemptMs = ATTEMPT_MS, backoff = new Backoff(1_000, 30_000, Math.random) }: SocketLinkOptions) {
    this.client = client;
    this.logger = logger;
    this.attemptMs = attemptMs;
    this.backoff = backoff;
    client.on("disconnected", () => {
      if (!this.connected || this.stopped) return;
      this.connected = false;
      this.why = "the connection to Slack closed";
      this.logger.warn("slack socket mode connection closed: reconnecting");
      this.retryIn(0);
    });
  }

  /** The first attempt: resolves once connected or retrying in the background; rejects when Slack refuses the app token. */
  async start(): Promise<void> {
    const refused = await this.attempt();
    if (refused) throw new Error(appTokenRefused(refused));
  }

  /** Why the connection is down and when it is tried next; undefined while connected. */
  problem(now = Date.now()): string | undefined {
    if (this.connected) return undefined;
    const next = this.nextAt === undefined ? "" : `; retrying with backoff, next attempt in ${Math.max(0, Math.ceil((this.nextAt - now) / 1000))} s`;
    return `the Socket Mode connection is down (${this.why})${next}`;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await settleBefore(
      this.client.disconnect().catch(() => undefined),
      { ms: STOP_MS },
      () => undefined,
    );
  }

  /** One attempt; the Slack error code when Slack refused the app token, else undefined (connected, or a retry is scheduled). */
  private async attempt(): Promise<string | undefined> {
    this.nextAt = undefined;
    const opening = this.client.start();
    try {
      await settleBefore(opening, { ms: this.attemptMs }, () => {
        throw new Error(`Slack did not open the connection within ${this.attemptMs / 1000} s`);
      });
    } catch (error) {
      opening.catch(() => undefined);
      await settleBefore(
        this.client.disconnect().catch(() => undefined),
        { ms: STOP_MS },
        () => undefined,
      );
      if (this.stopped) return undefined;
      const code = (error as { data?: { error?: unknown } } | undefined)?.data?.error;
      const refusal = typeof code === "string" && REFUSALS.has(code) ? code : undefined;
      this.why = refusal ? appTokenRefused(refusal) : describe(error);
      const delay = this.backoff.next();
      this.logger.warn({ reason: this.why, retryInSeconds: Math.round(delay / 100) / 10 }, "slack socket mode is not connected: retrying with backoff");
      this.retryIn(delay);
      return refusal;
    }
    if (this.stopped) return undefined;
    this.connected = true;
    this.backoff.reset();
    this.logger.info("slack socket mode connected");
    return undefined;
  }

  private retryIn(ms: number): void {
    if (this.stopped) return;
    clearTimeout(this.timer);
    this.nextAt = Date.now() + ms;
    this.timer = setTimeout(() => void this.attempt(), ms);
  }
}

function describe(error: unknown): string {
  if (error instanceof Error) return error.message;
  return error === undefined ? "the connection closed before Slack said hello" : String(error);
}
