/**
 * Composition root: config → store → Slack (none in local mode: no Slack
 * token, 127.0.0.1 only, see docs/console.md) → service → HTTP. The only
 * place that wires: `buildRelay` makes every part from a Config (tests and
 * the bench start from it, with overrides), `startRelay` listens and starts
 * what runs in the background, and ./lifecycle.ts stops it all.
 */
import { randomBytes } from "node:crypto";
import type { AddressInfo } from "node:net";
import { CallbackWorker, type CallbackWorkerOptions } from "./callbacks/worker.js";
import { loadConfig, type AgentToken, type Config } from "./config/config.js";
import { redisStartLine, redisWhere } from "./config/redis.js";
import { RelayMetrics } from "./http/metrics.js";
import { createHttpApp, listenHttp, type HttpDeps } from "./http/server.js";
import type { HttpApp } from "./http/transport.js";
import { createLogger, type Logger } from "./logger.js";
import { writeLocalRelay } from "./protocol/local-relay.js";
import { ConsoleSessions } from "./console/sessions.js";
import { SlackOpenId } from "./console/slack-openid.js";
import type { AuditLog } from "./requests/audit.js";
import { AuditTrail } from "./requests/audit-trail.js";
import type { RequestMessenger } from "./requests/delivery.js";
import type { PeopleDirectory } from "./requests/directory.js";
import { HookCalls } from "./requests/hooks/calls.js";
import { RequestListing } from "./requests/listing.js";
import { RequestService } from "./requests/service.js";
import { createSlackApp, createSlackClient, type SlackApp } from "./slack/app.js";
import { ChannelQueue } from "./slack/channel-queue.js";
import { SlackPeopleDirectory } from "./slack/directory.js";
import { MessageLookup } from "./slack/message-lookup.js";
import { MessageLinks } from "./slack/permalinks.js";
import { createSlackMessenger, type SlackMessengerDeps } from "./slack/messenger.js";
import { createMemoryAuditLog } from "./store/memory-audit.js";
import { openAuditExport } from "./store/audit-export.js";
import { createMemoryStore } from "./store/memory-store.js";
import type { OutageListener } from "./store/redis-connection.js";
import { createMemoryRuleStore } from "./store/memory-rules.js";
import { createMemorySignInStore } from "./store/memory-sign-ins.js";
import { DEFAULT_STORE_TIMEOUT_MS, type RequestStore } from "./requests/store.js";
import type { RuleStore } from "./requests/rules.js";
import type { SignInStore } from "./requests/sign-ins.js";
import { settleBefore } from "./protocol/timing.js";
import { RelayLifecycle } from "./lifecycle.js";

export { MEMORY_STORE_LOST_REASON } from "./lifecycle.js";

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

/**
 * What a test or the bench may put in place of what buildRelay would make
 * from the config. Every part left out is made as `approval-relay serve`
 * makes it.
 */
export interface RelayOverrides {
  logger?: Logger;
  /** The clock (Unix ms) of the service, the Slack side, the audit trail and the callback worker. */
  now?: () => number;
  /** A new request's id; default: the store's. */
  newId?: () => string;
  /** Storage; each left out is opened from the config (Redis or memory) and closed with the relay; one given here is the caller's to close. */
  store?: RequestStore;
  auditLog?: AuditLog;
  ruleStore?: RuleStore;
  /** The console's sign-in links, sessions and started Sign in with Slack. */
  signInStore?: SignInStore;
  metrics?: RelayMetrics;
  /**
   * Slack: `messenger` stands in for the whole Slack side (no Web API client,
   * Bolt app or token check; requests are posted through it). Otherwise the
   * Slack side is made from the config, with the messenger's waits and
   * jitter (`sleep`, `random`) and the home workspace given here.
   */
  slack?: { messenger?: RequestMessenger; directory?: PeopleDirectory; homeTeamId?: string } & Pick<SlackMessengerDeps, "sleep" | "random">;
  /** Milliseconds a poster holds a new request before another instance may post it. */
  postLeaseMs?: number;
  /** The callback worker's settings (its pacing, a token secret that went away). */
  callbacks?: Partial<Omit<CallbackWorkerOptions, "store" | "logger">>;
  /** HTTP settings the config does not carry (e.g. the largest `?wait=`). */
  http?: Partial<Omit<HttpDeps, "service" | "hookCalls" | "listing" | "audit" | "logger">>;
  /** Aborted while storage is being opened: the build stops and throws StartInterrupted. */
  signal?: AbortSignal;
}

/** Every part of one relay, built and not yet listening. */
export interface Relay {
  config: Config;
  logger: Logger;
  service: RequestService;
  /** Where this instance records audit events (GET /v1/audit reads them). */
  audit: AuditTrail;
  store: RequestStore;
  hookCalls: HookCalls;
  http: HttpApp;
  /** The Slack side, unless the relay runs without Slack (local mode) or a messenger stands in for it. */
  slack: { app: SlackApp; directory: SlackPeopleDirectory } | undefined;
  callbacks: CallbackWorker;
  metrics: RelayMetrics;
  /** The agent tokens: RELAY_TOKENS, or the one local mode made. */
  tokens: AgentToken[];
  /** The console's sign-ins: local mode's link, Sign in with Slack. */
  consoleSessions: ConsoleSessions;
  /** Shutdown: drain, hand over, close (./lifecycle.ts). */
  lifecycle: RelayLifecycle;
  /** Opens the HTTP port; resolves the base URL (http://127.0.0.1:… for every interface). */
  listen(port: number, host?: string): Promise<string>;
  /** Starts what runs in the background (the sweeper, the callback worker): the relay now serves, and close drains first. */
  serve(sweepIntervalMs: number): void;
  close(): Promise<void>;
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
  /** Drains (see ./lifecycle.ts), then stops everything; what SIGTERM runs. */
  close(): Promise<void>;
}

/** Errors Slack gives for a bot token it will never accept. */
const FATAL_AUTH_ERRORS = new Set(["invalid_auth", "not_authed", "account_inactive", "token_revoked", "token_expired"]);

/** `task`, unless `signal` aborts first (SIGTERM): waits on Slack or Redis never hold a stop. */
function interruptibleBy(signal: AbortSignal | undefined) {
  return <T>(task: Promise<T>): Promise<T> =>
    settleBefore(task, { signal }, () => {
      throw new StartInterrupted();
    });
}

/** Every part of a relay from `config`, with `overrides` in place of what they name; nothing listens or runs yet. */
export async function buildRelay(config: Config, overrides: RelayOverrides = {}): Promise<Relay> {
  const logger = overrides.logger ?? createLogger({ level: config.logLevel });
  const metrics = overrides.metrics ?? new RelayMetrics({ logger });
  const now = overrides.now ?? Date.now;
  if (overrides.signal?.aborted) throw new StartInterrupted();
  // A file that cannot be opened stops the start before anything else opens.
  const auditExport = config.auditExportPath === undefined ? undefined : await openAuditExport(config.auditExportPath, logger);
  const { store, auditLog, ruleStore, signInStore } = await openStorage(
    config,
    logger,
    metrics.storeOutage,
    interruptibleBy(overrides.signal),
    overrides,
  ).catch(async (error: unknown) => {
    await auditExport?.close();
    throw error;
  });
  const audit = new AuditTrail({ log: auditLog, logger, now, ...(auditExport ? { export: auditExport } : {}) });
  const queue = new ChannelQueue({ now, ...(overrides.slack?.sleep ? { sleep: overrides.slack.sleep } : {}) });
  // No Slack token: local mode, no Slack at all (no client, directory, messenger or Bolt app).
  const slackParts = config.local || overrides.slack?.messenger ? undefined : slackSide(config, logger, metrics, queue, now, overrides.slack);
  const messenger = overrides.slack?.messenger ?? slackParts?.messenger;
  const directory = overrides.slack?.directory ?? slackParts?.directory;
  const tokens = config.local && config.tokens.length === 0 ? [{ name: LOCAL_TOKEN_NAME, token: randomBytes(24).toString("hex") }] : config.tokens;
  const service = new RequestService({
    store,
    ...(messenger ? { messenger } : {}),
    ...(directory ? { directory } : {}),
    ...(slackParts ? { messageCopies: slackParts.lookup } : {}),
    logger,
    now,
    ...(overrides.newId ? { newId: overrides.newId } : {}),
    ...(overrides.postLeaseMs === undefined ? {} : { postLeaseMs: overrides.postLeaseMs }),
    defaultTimeoutSeconds: config.defaultTimeoutSeconds,
    maxPendingPerToken: config.maxPendingPerToken,
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
    now,
    ...overrides.callbacks,
  });
  const slack = slackParts?.app(service);
  // The console: local mode's one person signs in through the printed link; with Slack, people Sign in with Slack
  // (SLACK_CLIENT_ID) and admin tokens open a read-only view. Kept in the store: any instance serves any signed-in person.
  const consoleSessions = new ConsoleSessions({ store: signInStore, now });
  const hookCalls = new HookCalls({ service, logger, now });
  metrics.watch({ service, hookCalls, store, queue });
  const http = createHttpApp({
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
    createRateLimit: config.createRateLimit,
    metrics,
    ...(config.metricsToken === undefined ? {} : { metricsToken: config.metricsToken }),
    ...(slack?.requestListener ? { slackListener: slack.requestListener } : {}),
    ...(slackParts ? { messageLinks: () => slackParts.links.linker() } : {}),
    console: {
      sessions: consoleSessions,
      links: config.local,
      ...(slackParts ? { messageLinks: () => slackParts.links.linker() } : {}),
      ...(config.publicUrl ? { publicUrl: config.publicUrl } : {}),
      ...(config.slackSignIn && config.publicUrl
        ? {
            slackSignIn: new SlackOpenId({ ...config.slackSignIn, apiUrl: config.slack.apiUrl, publicUrl: config.publicUrl, store: signInStore, now }),
          }
        : {}),
    },
    readiness: async () => {
      // Without Slack there is no Slack to be down.
      const [storeUp, slackUp] = await Promise.all([store.ping(), slack ? slack.ping() : true]);
      const slackProblem = slack?.socketProblem();
      return { store: storeUp, slack: slackUp && slackProblem === undefined, ...(slackProblem === undefined ? {} : { slackProblem }) };
    },
    ...overrides.http,
  });
  const lifecycle = new RelayLifecycle({
    service,
    hookCalls,
    http,
    ...(slack ? { slack } : {}),
    // Storage a caller gave is the caller's to close.
    closers: [
      () => callbacks.stop(),
      () => audit.idle(),
      ...(auditExport ? [() => auditExport.close()] : []),
      ...(overrides.auditLog ? [] : [() => auditLog.close()]),
      ...(overrides.ruleStore ? [] : [() => ruleStore.close()]),
      ...(overrides.signInStore ? [] : [() => signInStore.close()]),
      ...(overrides.store ? [] : [() => store.close()]),
    ],
    logger,
    graceSeconds: config.shutdownGraceSeconds,
    handOver: config.redis !== undefined,
  });
  return {
    config,
    logger,
    service,
    audit,
    store,
    hookCalls,
    http,
    slack: slack && slackParts ? { app: slack, directory: slackParts.directory } : undefined,
    callbacks,
    metrics,
    tokens,
    consoleSessions,
    lifecycle,
    async listen(port, host) {
      await listenOn(http, port, host);
      const address = http.server.address() as AddressInfo;
      const where = address.family === "IPv6" ? `[${address.address}]` : address.address;
      return `http://${where === "[::]" || where === "0.0.0.0" ? "127.0.0.1" : where}:${address.port}`;
    },
    serve(sweepIntervalMs) {
      const stopSweeper = service.startSweeper(sweepIntervalMs);
      callbacks.start();
      // With a shared store, the callbacks go to the instances that stay once this one is drained: a claim it made
      // while closing would wait for the end of its close to be handed back (its attempt stopped), and then for
      // another instance's next look at the queue. With the memory store it delivers until its last closer.
      const handOverCallbacks = config.redis === undefined ? [] : [() => void callbacks.stop()];
      lifecycle.serve(stopSweeper, ...handOverCallbacks);
    },
    close: () => lifecycle.close(),
  };
}

export async function startRelay(options: StartOptions = {}): Promise<RunningRelay> {
  const config = loadConfig(options.env);
  const interruptible = interruptibleBy(options.signal);
  const relay = await buildRelay(config, { ...(options.logger ? { logger: options.logger } : {}), ...(options.signal ? { signal: options.signal } : {}) });
  const { logger, slack, tokens } = relay;
  let url: string;
  try {
    // Slack's round trip runs while the store connects and the server starts listening, so it does
    // not delay /healthz; a refused token still stops the start before startRelay returns. Its outcome
    // is logged only once the port is open: nothing claims success after a failed start.
    const tokenChecked = slack ? checkBotToken(slack.app.client) : undefined;
    tokenChecked?.catch(() => undefined);
    await interruptible(relay.store.ready());
    // Local mode answers on the loopback interface only: its console has one local person, whoever reaches it.
    url = await relay.listen(options.port ?? config.port, config.local ? "127.0.0.1" : options.host);
    if (slack && tokenChecked) {
      // Socket Mode's first attempt runs beside the bot token check; a refusal of either stops the start.
      relay.lifecycle.slackStarting();
      const linking = slack.app.start();
      linking.catch(() => undefined);
      const token = await interruptible(tokenChecked);
      if (token.accepted) {
        logger.info({ team: token.team, bot: token.bot }, "slack bot token accepted");
        if (token.teamId !== undefined) slack.directory.knowHomeTeamId(token.teamId);
      } else {
        logger.warn({ error: token.error }, "could not verify the Slack bot token at start; /readyz will report Slack as down until it answers");
      }
      await interruptible(linking);
    }
    if (options.signal?.aborted) throw new StartInterrupted();
  } catch (error) {
    await relay.close();
    throw error;
  }
  relay.serve(options.sweepIntervalMs ?? 1000);

  if (config.local) {
    const file = tokens === config.tokens ? undefined : writeLocalRelay({ url, token: tokens[0]!.token }, config.localStateHome);
    const signIn = `${url}/console/signin#${await relay.consoleSessions.newLink(LOCAL_PERSON)}`;
    logger.info({ url, store: storeName(config), tokens: tokens.map((t) => t.name), ...(file ? { localRelayFile: file } : {}) }, localStartLine(signIn, file));
  } else {
    logger.info(
      {
        url,
        slackMode: slack?.app.mode === "socket" ? "socket mode" : "http (POST /slack/events)",
        store: storeName(config),
        tokens: tokens.map((t) => t.name),
        adminTokens: config.adminTokens.map((t) => t.name),
        auditMaxEvents: config.auditMaxEvents,
      },
      "relay started",
    );
  }
  return { url, config, service: relay.service, audit: relay.audit, close: () => relay.close() };
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
function slackSide(config: Config, logger: Logger, metrics: RelayMetrics, queue: ChannelQueue, now: () => number, given: RelayOverrides["slack"] = {}) {
  const botToken = config.slack.botToken!;
  const client = createSlackClient({ botToken, apiUrl: config.slack.apiUrl, logger, onCall: metrics.slackCall });
  const directory = new SlackPeopleDirectory({ client, logger, now, ...(given.homeTeamId === undefined ? {} : { homeTeamId: given.homeTeamId }) });
  // One lookup of the relay's own messages: the poster finds a post whose reply was lost, the service a click on such a copy.
  const lookup = new MessageLookup(client);
  const messenger = createSlackMessenger({
    client,
    logger,
    queue,
    now,
    lookup,
    ...(given.sleep ? { sleep: given.sleep } : {}),
    ...(given.random ? { random: given.random } : {}),
  });
  // Links to requests' messages: the App Home tab and the web console share the workspace URL's one lookup.
  const links = new MessageLinks({ client, logger, now });
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
      now,
      links,
    });
  return { directory, messenger, lookup, app, links };
}

/**
 * The request store, the audit log, the rule store and the console's sign-ins: all on Redis (a
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
  given: Pick<RelayOverrides, "store" | "auditLog" | "ruleStore" | "signInStore"> = {},
): Promise<{ store: RequestStore; auditLog: AuditLog; ruleStore: RuleStore; signInStore: SignInStore }> {
  const maxEvents = config.auditMaxEvents;
  const retentionMs = config.auditRetentionMs;
  const target = config.redis;
  if (given.store && given.auditLog && given.ruleStore && given.signInStore) {
    return { store: given.store, auditLog: given.auditLog, ruleStore: given.ruleStore, signInStore: given.signInStore };
  }
  if (target) {
    const [{ connectRedisStore }, { connectRedisAuditLog }, { connectRedisRuleStore }, { connectRedisSignInStore }, { probeRedis }] = await Promise.all([
      import("./store/redis-store.js"),
      import("./store/redis-audit.js"),
      import("./store/redis-rules.js"),
      import("./store/redis-sign-ins.js"),
      import("./store/redis-probe.js"),
    ]);
    const windowMs = config.storeTimeoutMs ?? DEFAULT_STORE_TIMEOUT_MS;
    logger.info({ redis: redisWhere(target), waitMs: windowMs }, "connecting to Redis");
    const problem = await interruptible(probeRedis(target, { windowMs }));
    if (problem) throw new Error(redisStartLine(target, problem));
    const options = { logger, prefix: config.redisPrefix, onUnavailable, ...(config.storeTimeoutMs === undefined ? {} : { timeoutMs: config.storeTimeoutMs }) };
    return {
      store: given.store ?? connectRedisStore(target, options),
      auditLog: given.auditLog ?? connectRedisAuditLog(target, { ...options, maxEvents, retentionMs }),
      ruleStore: given.ruleStore ?? connectRedisRuleStore(target, options),
      signInStore: given.signInStore ?? connectRedisSignInStore(target, options),
    };
  }
  if (!given.store) {
    logger.warn(
      "None of REDIS_URL, REDIS_CLUSTER_NODES and REDIS_SENTINELS is set: using the in-memory store. Pending requests and the audit log are lost when the relay restarts, and only one relay instance may run.",
    );
  }
  return {
    store: given.store ?? createMemoryStore(),
    auditLog: given.auditLog ?? createMemoryAuditLog({ maxEvents, retentionMs }),
    ruleStore: given.ruleStore ?? createMemoryRuleStore(),
    signInStore: given.signInStore ?? createMemorySignInStore(),
  };
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
