/**
 * Composition root: config → store → Slack (none in local mode: no Slack
 * token, 127.0.0.1 only, see docs/console.md) → service → HTTP → listen. The
 * only place that knows every concrete part; everything else gets its
 * dependencies passed in.
 */
import { randomBytes } from "node:crypto";
import type { AddressInfo } from "node:net";
import { CallbackWorker } from "./callbacks/worker.js";
import { loadConfig, type Config } from "./config/config.js";
import { redisStartLine, redisWhere } from "./config/redis.js";
import { RelayMetrics } from "./http/metrics.js";
import { createHttpApp, listenHttp } from "./http/server.js";
import type { HttpApp } from "./http/transport.js";
import { createLogger, type Logger } from "./logger.js";
import { writeLocalRelay } from "./protocol/local-relay.js";
import { ConsoleSessions } from "./console/sessions.js";
import type { AuditLog } from "./requests/audit.js";
import { AuditTrail } from "./requests/audit-trail.js";
import { HookCalls, SHUTDOWN_REASON } from "./requests/hooks/calls.js";
import { RequestListing } from "./requests/listing.js";
import { RequestService } from "./requests/service.js";
import { createSlackApp, createSlackClient } from "./slack/app.js";
import { ChannelQueue } from "./slack/channel-queue.js";
import { SlackPeopleDirectory } from "./slack/directory.js";
import { createSlackMessenger } from "./slack/messenger.js";
import { createMemoryAuditLog } from "./store/memory-audit.js";
import { createMemoryStore } from "./store/memory-store.js";
import type { OutageListener } from "./store/redis-connection.js";
import { createMemoryRuleStore } from "./store/memory-rules.js";
import { DEFAULT_STORE_TIMEOUT_MS, type RequestStore } from "./requests/store.js";
import type { RuleStore } from "./requests/rules.js";
import { settleBefore } from "./protocol/timing.js";

export interface StartOptions {
  /** Defaults to process.env (read by loadConfig only). */
  env?: Record<string, string | undefined>;
  logger?: Logger;
  /** Overrides PORT; 0 picks a free port (tests). */
  port?: number;
  /** Interface to listen on; all interfaces by default. */
  host?: string;
  /** How often this instance sweeps for expired requests (ms). */
  sweepIntervalMs?: number;
  /** Aborted (SIGTERM, Ctrl-C) while starting: the start stops where it is, undoes itself and throws StartInterrupted. */
  signal?: AbortSignal;
}

/** What startRelay throws when its `signal` aborts before the start finished. */
export class StartInterrupted extends Error {
  constructor() {
    super("stopped before the start finished");
    this.name = "StartInterrupted";
  }
}

export interface RunningRelay {
  /** Base URL of the HTTP server, e.g. http://127.0.0.1:3000 */
  url: string;
  config: Config;
  service: RequestService;
  /** Where this instance records audit events (GET /v1/audit reads them). */
  audit: AuditTrail;
  /** Drains (see below), then stops everything; what SIGTERM runs. */
  close(): Promise<void>;
}

/** Why the in-memory store's pending requests are cancelled at shutdown. */
export const MEMORY_STORE_LOST_REASON = `${SHUTDOWN_REASON}; its in-memory store does not outlive a restart (set REDIS_URL, REDIS_CLUSTER_NODES or REDIS_SENTINELS to keep requests across restarts)`;

/** Errors Slack gives for a bot token it will never accept. */
const FATAL_AUTH_ERRORS = new Set(["invalid_auth", "not_authed", "account_inactive", "token_revoked", "token_expired"]);

export async function startRelay(options: StartOptions = {}): Promise<RunningRelay> {
  const config = loadConfig(options.env);
  const logger = options.logger ?? createLogger({ level: config.logLevel });
  const metrics = new RelayMetrics({ logger });
  /** `task`, unless the start is interrupted first (SIGTERM): waits on Slack or Redis never hold a stop. */
  const interruptible = <T>(task: Promise<T>): Promise<T> =>
    settleBefore(task, { signal: options.signal }, () => {
      throw new StartInterrupted();
    });
  if (options.signal?.aborted) throw new StartInterrupted();
  const { store, auditLog, ruleStore } = await openStorage(config, logger, metrics.storeOutage, interruptible);
  const audit = new AuditTrail({ log: auditLog, logger });
  const queue = new ChannelQueue();
  // No Slack token: local mode, no Slack at all (no client, directory, messenger or Bolt app).
  const slackParts = config.local ? undefined : slackSide(config, logger, metrics, queue);
  const tokens = config.local && config.tokens.length === 0 ? [{ name: LOCAL_TOKEN_NAME, token: randomBytes(24).toString("hex") }] : config.tokens;
  const service = new RequestService({
    store,
    ...(slackParts ? { messenger: slackParts.messenger, directory: slackParts.directory } : {}),
    logger,
    defaultTimeoutSeconds: config.defaultTimeoutSeconds,
    ...(config.slack.defaultChannel ? { defaultChannel: config.slack.defaultChannel } : config.local ? { defaultChannel: CONSOLE_CHANNEL } : {}),
    ...(config.callbackHosts ? { callbackHosts: config.callbackHosts } : {}),
    ...(config.defaultChannels ? { defaultChannels: config.defaultChannels } : {}),
    routes: config.routes,
    policy: { alwaysAllow: config.alwaysAllow, ...config.defaultPolicy },
    defaultAdmission: config.defaultAdmission,
    audit,
    metrics: metrics.requests,
    queueMetrics: metrics.queues,
    rules: ruleStore,
  });
  const secrets = new Map(tokens.map((t) => [t.name, t.token]));
  const callbacks = new CallbackWorker({
    store,
    tokenSecret: (name) => secrets.get(name),
    metrics: metrics.queues,
    ...(config.callbackHosts ? { callbackHosts: config.callbackHosts } : {}),
    logger,
  });
  const slack = slackParts?.app(service);
  // Local mode: the console is where people answer, signed in as the one local person.
  const consoleSessions = config.local ? new ConsoleSessions() : undefined;
  const hookCalls = new HookCalls({ service, logger });
  metrics.watch({ service, hookCalls, store, queue });
  const app = createHttpApp({
    service,
    hookCalls,
    tokens,
    adminTokens: config.adminTokens,
    listing: new RequestListing(store),
    audit,
    logger,
    hookTimeoutSeconds: config.hookTimeoutSeconds,
    hookKeepaliveMs: config.hookKeepaliveSeconds * 1000,
    agentBodyLimitBytes: config.maxBodyBytes,
    mcpProgressMs: config.mcpProgressSeconds * 1000,
    mcpOrigins: config.mcpOrigins,
    metrics,
    ...(config.metricsToken === undefined ? {} : { metricsToken: config.metricsToken }),
    ...(slack?.requestListener ? { slackListener: slack.requestListener } : {}),
    ...(consoleSessions ? { console: { sessions: consoleSessions } } : {}),
    readiness: async () => {
      // Without Slack there is no Slack to be down.
      const [storeUp, slackUp] = await Promise.all([store.ping(), slack ? slack.ping() : true]);
      const slackProblem = slack?.socketProblem();
      return { store: storeUp, slack: slackUp && slackProblem === undefined, ...(slackProblem === undefined ? {} : { slackProblem }) };
    },
  });

  let started = false;
  let slackStarted = false;
  let stopSweeper = () => {};
  let closing: Promise<void> | undefined;
  /** Shared store (Redis): pending requests outlive this process, so held long-polls are handed over rather than ended. */
  const handOver = config.redis !== undefined;

  /**
   * Shutdown, step 1: the instance takes no new work (/readyz 503, new
   * creates, long-polls and hook calls refused, every reply closes its
   * connection) while the calls it holds may still be answered, until none is
   * left or RELAY_SHUTDOWN_GRACE passes. Clicks and the sweeper go on meanwhile.
   */
  const drain = async () => {
    service.drain();
    const held = () => service.waiting + hookCalls.held;
    const end = Date.now() + config.shutdownGraceSeconds * 1000;
    logger.info({ held: held(), graceSeconds: config.shutdownGraceSeconds }, "shutting down: no new work; held calls may finish within the grace period");
    // Idle keep-alive connections stay open: a call sent on one gets a 503 that closes it, where closing it
    // from this side could cross that call on the wire and reset it without a word.
    while (held() > 0 && Date.now() < end) {
      await new Promise((resolve) => setTimeout(resolve, Math.min(100, end - Date.now())));
    }
    if (held() > 0) logger.info({ held: held(), handOver }, "grace period over: handing over held calls");
  };

  /**
   * Stops what runs, in order; also undoes a start that failed part of the way
   * (a port in use, a refused token). After the drain, held hook calls are
   * denied ("the relay restarted") and their requests cancelled: the
   * connection cannot move, and nobody may approve what the agent was told is
   * denied. Held long-polls return the request as it is, still pending, and the
   * client carries on against another instance (Redis); with the memory store
   * every pending request is cancelled instead, since none survives the process.
   */
  const close = () =>
    (closing ??= (async () => {
      if (started) await drain();
      stopSweeper();
      if (slackStarted) await slack?.stop().catch((error: unknown) => logger.warn({ error }, "slack stop failed"));
      await hookCalls.close();
      if (started && !handOver) {
        await service
          .cancelAllPending("relay", MEMORY_STORE_LOST_REASON)
          .catch((error: unknown) => logger.warn({ error }, "cancelling pending requests failed"));
      }
      service.close();
      // Their sockets turn idle once the replies are out; any still busy after 2 s are cut.
      const idle = setInterval(() => app.server.closeIdleConnections(), 50);
      const hard = setTimeout(() => app.server.closeAllConnections(), 2000);
      await app.close().finally(() => {
        clearInterval(idle);
        clearTimeout(hard);
      });
      await service.idle();
      await slack?.idle();
      await callbacks.stop();
      await audit.idle();
      await auditLog.close();
      await ruleStore.close();
      await store.close();
      if (started) logger.info("relay stopped");
    })());

  try {
    await interruptible(store.ready());
    // Local mode answers on the loopback interface only: its console has one local person, whoever reaches it.
    await listenOn(app, options.port ?? config.port, config.local ? "127.0.0.1" : options.host);
    if (slack && slackParts) {
      // Socket Mode's first attempt runs beside the bot token check; a refusal of either stops the start.
      slackStarted = true;
      const linking = slack.start();
      linking.catch(() => undefined);
      const token = await interruptible(slackParts.tokenChecked);
      if (token.accepted) {
        logger.info({ team: token.team, bot: token.bot }, "slack bot token accepted");
        if (token.teamId !== undefined) slackParts.directory.knowHomeTeamId(token.teamId);
      } else {
        logger.warn({ error: token.error }, "could not verify the Slack bot token at start; /readyz will report Slack as down until it answers");
      }
      await interruptible(linking);
    }
    if (options.signal?.aborted) throw new StartInterrupted();
  } catch (error) {
    await close();
    throw error;
  }
  stopSweeper = service.startSweeper(options.sweepIntervalMs ?? 1000);
  callbacks.start();
  started = true;

  const address = app.server.address() as AddressInfo;
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
  const url = `http://${host === "[::]" || host === "0.0.0.0" ? "127.0.0.1" : host}:${address.port}`;
  if (config.local) {
    const file = tokens === config.tokens ? undefined : writeLocalRelay({ url, token: tokens[0]!.token }, config.localStateHome);
    const signIn = `${url}/console/signin#${consoleSessions!.newLink(LOCAL_PERSON)}`;
    logger.info({ url, store: storeName(config), tokens: tokens.map((t) => t.name), ...(file ? { localRelayFile: file } : {}) }, localStartLine(signIn, file));
  } else {
    logger.info(
      {
        url,
        slackMode: slack?.mode === "socket" ? "socket mode" : "http (POST /slack/events)",
        store: storeName(config),
        tokens: tokens.map((t) => t.name),
        adminTokens: config.adminTokens.map((t) => t.name),
        auditMaxEvents: config.auditMaxEvents,
      },
      "relay started",
    );
  }
  return { url, config, service, audit, close };
}

/** Who answers in local mode's console: the one person at this machine. */
export const LOCAL_PERSON = { id: "local", name: "local console" };
/** The name of the agent token local mode makes when RELAY_TOKENS is unset. */
export const LOCAL_TOKEN_NAME = "local";
/** The channel of a request in local mode that names none: the console is where it is answered. */
export const CONSOLE_CHANNEL = "console";

function storeName(config: Config): string {
  return config.redis?.mode === "sentinel" ? "redis sentinel" : config.redis?.mode === "cluster" ? "redis cluster" : config.redis ? "redis" : "memory";
}

/** The one line local mode starts with: where agents find the relay, and how to connect Slack later. */
function localStartLine(signIn: string, file: string | undefined): string {
  const agents = file
    ? `agents on this machine find the relay through ${file} (approval-relay ask, hook and the client library read it)`
    : "agents use RELAY_TOKENS";
  return `relay started in local mode, without Slack, on 127.0.0.1 only: answer in the console, sign in at ${signIn} (single use, for 10 minutes); ${agents}; to connect Slack later, set SLACK_BOT_TOKEN and SLACK_APP_TOKEN (Socket Mode) or SLACK_SIGNING_SECRET (docs/slack.md)`;
}

/** The Slack side of a relay with Slack: the Web API client, its people directory, the messenger and (once the service exists) the Bolt app. */
function slackSide(config: Config, logger: Logger, metrics: RelayMetrics, queue: ChannelQueue) {
  const botToken = config.slack.botToken!;
  const client = createSlackClient({ botToken, apiUrl: config.slack.apiUrl, logger, onCall: metrics.slackCall });
  // Slack's round trip runs while the store connects and the server starts listening, so it does
  // not delay /healthz; a refused token still stops the start before startRelay returns. Its outcome
  // is logged only once the port is open: nothing claims success after a failed start.
  const directory = new SlackPeopleDirectory({ client, logger });
  const tokenChecked = checkBotToken(client);
  tokenChecked.catch(() => undefined);
  const messenger = createSlackMessenger({ client, logger, queue });
  const app = (service: RequestService) =>
    createSlackApp({
      botToken,
      appToken: config.slack.appToken,
      signingSecret: config.slack.signingSecret,
      apiUrl: config.slack.apiUrl,
      logger,
      service,
      client,
      logLevel: config.logLevel,
      queue,
    });
  return { directory, tokenChecked, messenger, app };
}

/**
 * The request store, the audit log and the rule store: all on Redis (a
 * connection each, the same settings, their outages counted by
 * `onUnavailable`) when REDIS_URL, REDIS_CLUSTER_NODES or REDIS_SENTINELS is set, else all in
 * memory. Redis is looked at first (./store/redis-probe.ts): credentials or
 * TLS it refuses, a master name no sentinel knows, or a store that does not
 * answer within the store timeout (RELAY_STORE_TIMEOUT_MS) stop the start
 * with one line; the attempt is logged first, so a slow store is never silence. The Redis code (ioredis)
 * is loaded only when asked for: it is a tenth of the start.
 */
async function openStorage(
  config: Config,
  logger: Logger,
  onUnavailable: OutageListener,
  interruptible: <T>(task: Promise<T>) => Promise<T>,
): Promise<{ store: RequestStore; auditLog: AuditLog; ruleStore: RuleStore }> {
  const maxEvents = config.auditMaxEvents;
  const retentionMs = config.auditRetentionMs;
  const target = config.redis;
  if (target) {
    const [{ connectRedisStore }, { connectRedisAuditLog }, { connectRedisRuleStore }, { probeRedis }] = await Promise.all([
      import("./store/redis-store.js"),
      import("./store/redis-audit.js"),
      import("./store/redis-rules.js"),
      import("./store/redis-probe.js"),
    ]);
    const windowMs = config.storeTimeoutMs ?? DEFAULT_STORE_TIMEOUT_MS;
    logger.info({ redis: redisWhere(target), waitMs: windowMs }, "connecting to Redis");
    const problem = await interruptible(probeRedis(target, { windowMs }));
    if (problem) throw new Error(redisStartLine(target, problem));
    const options = { logger, prefix: config.redisPrefix, onUnavailable, ...(config.storeTimeoutMs === undefined ? {} : { timeoutMs: config.storeTimeoutMs }) };
    return {
      store: connectRedisStore(target, options),
      auditLog: connectRedisAuditLog(target, { ...options, maxEvents, retentionMs }),
      ruleStore: connectRedisRuleStore(target, options),
    };
  }
  logger.warn(
    "None of REDIS_URL, REDIS_CLUSTER_NODES and REDIS_SENTINELS is set: using the in-memory store. Pending requests and the audit log are lost when the relay restarts, and only one relay instance may run.",
  );
  return { store: createMemoryStore(), auditLog: createMemoryAuditLog({ maxEvents, retentionMs }), ruleStore: createMemoryRuleStore() };
}

/** What Slack said of the bot token at start: accepted (with the workspace), or not reachable. */
type TokenCheck = { accepted: true; team: unknown; bot: unknown; teamId?: string } | { accepted: false; error: unknown };

/**
 * Stops the start when Slack refuses the bot token for good; only reports
 * when Slack cannot be reached. Logs nothing itself: the start logs the
 * outcome once it listens.
 */
async function checkBotToken(client: ReturnType<typeof createSlackClient>): Promise<TokenCheck> {
  try {
    const result = await client.auth.test();
    return { accepted: true, team: result.team, bot: result.user, ...(typeof result.team_id === "string" ? { teamId: result.team_id } : {}) };
  } catch (error) {
    const code = (error as { data?: { error?: unknown } }).data?.error;
    if (typeof code === "string" && FATAL_AUTH_ERRORS.has(code)) {
      throw new Error(`SLACK_BOT_TOKEN was refused by Slack (${code}): copy the Bot User OAuth Token again from the app's OAuth & Permissions page`);
    }
    return { accepted: false, error };
  }
}

/** Node's listen errors an operator fixes with PORT, and how. */
const PORT_PROBLEMS: Record<string, (port: number) => string> = {
  EADDRINUSE: (port) => `port ${port} is already in use (EADDRINUSE): stop what listens there, or set PORT to a free port`,
  EACCES: (port) => `this user may not listen on port ${port} (EACCES): set PORT to 1024 or above, or give node the right to bind it`,
};

/** Opens the HTTP port; a port in use or not allowed stops the start with one line naming PORT. */
async function listenOn(app: HttpApp, port: number, host?: string): Promise<void> {
  try {
    await listenHttp(app, port, host);
  } catch (error) {
    const problem = PORT_PROBLEMS[String((error as { code?: unknown }).code)];
    throw problem ? new Error(`PORT: ${problem(port)}`, { cause: error }) : error;
  }
}
