/**
 * The Bolt app: one WebClient for every Web API call (honouring
 * SLACK_API_URL, with retries left to retry.ts), a receiver for the mode in
 * use (Socket Mode when an app token is set, otherwise HTTP, whose request
 * listener our own HTTP server mounts at POST /slack/events), and the
 * listener groups. Transport only: the decisions live in the service.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { App, LogLevel, SocketModeReceiver, type webApi, type Logger as BoltLogger } from "@slack/bolt";
import type { Logger } from "../logger.js";
import { settleBefore } from "../protocol/timing.js";
import type { RequestService } from "../requests/service.js";
import { RelayWebClient, type SlackCallRecorder } from "./web-client.js";
import * as actions from "./listeners/actions.js";
import * as messages from "./listeners/messages.js";
import * as modalButtons from "./listeners/modal-buttons.js";
import * as moreTime from "./listeners/more-time.js";
import * as views from "./listeners/views.js";
import * as home from "./listeners/home.js";
import { ClickRoutes } from "./listeners/clicks.js";
import { ChannelQueue } from "./channel-queue.js";
import { HomeTab } from "./home-tab.js";
import { MessageLinks } from "./permalinks.js";
import { ATTEMPT_MS, SocketLink } from "./socket-link.js";
import { SlackHttpReceiver } from "./receiver.js";

export interface SlackClientOptions {
  botToken: string;
  /** Web API base URL ending in "/" (SLACK_API_URL). */
  apiUrl: string;
  logger: Logger;
  /** Per-call timeout in milliseconds. */
  timeoutMs?: number;
  /** Hears how every Web API call ended (the relay's metrics); none → not counted. */
  onCall?: SlackCallRecorder;
}

/** The bot-token WebClient: no built-in retries and rate limits surface as errors, so retry.ts decides. */
export function createSlackClient({ botToken, apiUrl, logger, timeoutMs = 10_000, onCall }: SlackClientOptions): webApi.WebClient {
  const options: webApi.WebClientOptions = {
    slackApiUrl: apiUrl,
    retryConfig: { retries: 0 },
    rejectRateLimitedCalls: true,
    timeout: timeoutMs,
    logger: boltLogger(logger),
  };
  return new RelayWebClient(onCall, botToken, options);
}

export interface SlackAppOptions {
  botToken: string;
  /** xapp- token; set → Socket Mode. */
  appToken?: string;
  /** HTTP mode: verifies Slack's signatures. */
  signingSecret?: string;
  apiUrl: string;
  logger: Logger;
  service: RequestService;
  /** The client the messenger uses; built with createSlackClient when absent. */
  client?: webApi.WebClient;
  /** How long ping() waits for auth.test (ms). */
  pingTimeoutMs?: number;
  /** How long ping() reuses its last answer (ms), default 10 s. */
  pingCacheMs?: number;
  /** Unix time in milliseconds. */
  now?: () => number;
  /** "debug" passes Bolt's and the SDKs' debug lines through; they are dropped otherwise. */
  logLevel?: "debug" | "info" | "warn" | "error";
  /** The relay's Web API pacing, shared with the messenger: App Home publishes wait out a 429 there; a queue of its own when absent. */
  queue?: ChannelQueue;
  /** Links to messages, shared with the web console; made here when absent. */
  links?: MessageLinks;
}

export interface SlackApp {
  app: App;
  client: webApi.WebClient;
  mode: "socket" | "http";
  /** HTTP mode: the receiver's request listener (./receiver.ts), mounted by our HTTP server at POST /slack/events. */
  requestListener?: (req: IncomingMessage, res: ServerResponse) => void;
  /**
   * Socket Mode: one connection attempt; resolves once connected or retrying
   * in the background, rejects when Slack refuses the app token. HTTP mode:
   * nothing to do.
   */
  start(): Promise<void>;
  stop(): Promise<void>;
  /** true when Slack accepts the bot token (auth.test, at most once per `pingCacheMs`); for /readyz. */
  ping(): Promise<boolean>;
  /** Socket Mode: why the connection is down and when it is tried next, undefined while connected; HTTP mode: undefined. */
  socketProblem(): string | undefined;
  /** Resolves when every interaction received so far has been fully handled, App Home publishes included (tests, shutdown). */
  idle(): Promise<void>;
}

export function createSlackApp(options: SlackAppOptions): SlackApp {
  const { botToken, appToken, signingSecret, apiUrl, logger, service, pingTimeoutMs = 3000, pingCacheMs = 10_000, now = Date.now } = options;
  const client = options.client ?? createSlackClient({ botToken, apiUrl, logger });
  const logLevel = options.logLevel === "debug" ? LogLevel.DEBUG : LogLevel.INFO;
  const log = boltLogger(logger, logLevel);
  // The link (./socket-link.ts) reconnects, not the client; its Web API calls end well within one attempt.
  const socket = appToken
    ? new SocketModeReceiver({
        appToken,
        logger: log,
        autoReconnectEnabled: false,
        installerOptions: { clientOptions: { slackApiUrl: apiUrl, timeout: ATTEMPT_MS / 2, retryConfig: { retries: 0 } } },
      })
    : undefined;
  const link = socket ? new SocketLink({ client: socket.client, logger }) : undefined;
  if (!socket && !signingSecret) throw new Error("createSlackApp: HTTP mode needs a signing secret");
  // ack() writes the HTTP response at once (a view_submission's `response_action: "errors"` included;
  // Bolt's processBeforeResponse off). The listeners choose when: an answer is recorded first and
  // acked once stored (listeners/actions.ts, views.ts); notices and the message update come after.
  const http = socket ? undefined : new SlackHttpReceiver({ signingSecret: signingSecret!, logger: log });
  const app = new App({
    receiver: socket ?? http!,
    // A fixed token: no auth.test per event, none at construction.
    authorize: async () => ({ botToken }),
    logger: log,
    logLevel,
    clientOptions: { slackApiUrl: apiUrl, retryConfig: { retries: 0 }, rejectRateLimitedCalls: true },
    ignoreSelf: false,
    convoStore: false,
  });

  const inFlight = new Set<Promise<unknown>>();
  app.use(async ({ next }) => {
    const task = next();
    inFlight.add(task);
    try {
      await task;
    } finally {
      inFlight.delete(task);
    }
  });
  app.error(async (error) => logger.error({ error }, "slack listener error"));
  const links = options.links ?? new MessageLinks({ client, logger, now });
  const homeTab = new HomeTab({ service, client, links, queue: options.queue ?? new ChannelQueue({ now }), logger, now });
  const deps = { service, client, logger, home: homeTab };
  const clicks = new ClickRoutes();
  actions.register(clicks, deps);
  modalButtons.register(clicks, deps);
  moreTime.register(clicks, deps);
  home.register(app, clicks, deps);
  clicks.listen(app);
  views.register(app, deps);
  messages.register(app, deps);

  return {
    app,
    client,
    mode: socket ? "socket" : "http",
    // Our router sends the receiver only POST /slack/events (src/http/routes/slack.ts).
    ...(http ? { requestListener: refuseFutureDated(http.requestListener) } : {}),
    async start() {
      await link?.start();
    },
    async stop() {
      await link?.stop();
    },
    socketProblem: () => link?.problem(),
    ping: cachedFor(pingCacheMs, now, () => pingSlack(client, pingTimeoutMs)),
    async idle() {
      while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
      await homeTab.idle();
    },
  };
}

/**
 * `check`, asked at most once per `ms`: its last answer (up or down) is reused
 * until then, and callers arriving while it runs share the one call. Load
 * balancers probe /readyz every few seconds on every instance; each probe
 * would otherwise spend an auth.test call of the app's Slack rate limit.
 */
/** Slack's replay window in seconds: Bolt refuses a request signed longer ago than this. */
const REPLAY_WINDOW_SECONDS = 5 * 60;

/**
 * Refuses, with Bolt's 401, a request whose signed timestamp is more than
 * the replay window ahead: a payload dated in the future would stay
 * replayable until then. Bolt checks the past against the system clock, so
 * the future is checked against the same clock (not the relay's injected one).
 */
export function refuseFutureDated(listener: RequestListener, wallClock: () => number = Date.now): RequestListener {
  return (req, res) => {
    const stamp = Number(req.headers["x-slack-request-timestamp"]);
    if (Number.isFinite(stamp) && stamp - wallClock() / 1000 > REPLAY_WINDOW_SECONDS) {
      res.writeHead(401).end();
      return;
    }
    listener(req, res);
  };
}

type RequestListener = (req: IncomingMessage, res: ServerResponse) => void;

function cachedFor(ms: number, now: () => number, check: () => Promise<boolean>): () => Promise<boolean> {
  let last: { at: number; up: boolean } | undefined;
  let running: Promise<boolean> | undefined;
  return () => {
    if (last && now() - last.at < ms) return Promise.resolve(last.up);
    running ??= check()
      .then((up) => {
        last = { at: now(), up };
        return up;
      })
      .finally(() => {
        running = undefined;
      });
    return running;
  };
}

function pingSlack(client: webApi.WebClient, timeoutMs: number): Promise<boolean> {
  const check = client.auth.test().then(
    (result) => result.ok === true,
    () => false,
  );
  return settleBefore(check, { ms: timeoutMs }, () => false);
}

/** Adapts our Logger to the interface Bolt and the Slack SDKs log through. */
export function boltLogger(logger: Logger, initial: LogLevel = LogLevel.INFO): BoltLogger {
  let level = initial;
  let name = "slack";
  return {
    debug: (...msg: unknown[]) => {
      if (level === LogLevel.DEBUG) logger.debug({ source: name }, text(msg));
    },
    info: (...msg: unknown[]) => logger.info({ source: name }, text(msg)),
    warn: (...msg: unknown[]) => logger.warn({ source: name }, text(msg)),
    error: (...msg: unknown[]) => logger.error({ source: name }, text(msg)),
    setLevel: (next: LogLevel) => {
      level = next;
    },
    getLevel: () => level,
    setName: (next: string) => {
      name = next;
    },
  };
}

function text(parts: unknown[]): string {
  return parts.map(describe).join(" ");
}

function describe(part: unknown): string {
  if (typeof part === "string") return part;
  if (part instanceof Error) return part.message;
  try {
    return JSON.stringify(part) ?? String(part);
  } catch {
    return String(part);
  }
}
