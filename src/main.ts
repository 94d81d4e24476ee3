/**
 * Composition root: config → store → Slack (none in local mode: no Slack
 * token, 127.0.0.1 only, see docs/console.md) → service → HTTP. The only
 * place that wires, with ./wiring (one file per side: storage, Slack, the
 * service and its workers, HTTP): `buildRelay` makes every part from a
 * Config (tests, the bench and the soak start from it, with overrides),
 * `startRelay` listens and starts what runs in the background, and
 * ./lifecycle.ts stops it all.
 */
import { randomBytes } from "node:crypto";
import type { CallbackWorker } from "./callbacks/worker.js";
import { loadConfig, type AgentToken, type Config } from "./config/config.js";
import { RelayMetrics } from "./http/metrics.js";
import type { HttpApp } from "./http/transport.js";
import { createLogger, type Logger } from "./logger.js";
import { ConsoleSessions } from "./console/sessions.js";
import { AuditTrail } from "./requests/audit-trail.js";
import { HookCalls } from "./requests/hooks/calls.js";
import type { RequestService } from "./requests/service.js";
import type { RequestStore } from "./requests/store.js";
import type { SlackApp } from "./slack/app.js";
import { ChannelQueue } from "./slack/channel-queue.js";
import type { SlackPeopleDirectory } from "./slack/directory.js";
import { openAuditExport } from "./store/audit-export.js";
import { settleBefore } from "./protocol/timing.js";
import { RelayLifecycle } from "./lifecycle.js";
import { httpSide, listenOn, type HttpOverrides } from "./wiring/http.js";
import { callbackWorker, CONSOLE_CHANNEL, requestService, type CallbackOverrides, type ServiceOverrides } from "./wiring/service.js";
import { checkBotToken, slackSide, type SlackOverrides } from "./wiring/slack.js";
import { LOCAL_PERSON, LOCAL_TOKEN_NAME, logStarted } from "./wiring/started.js";
import { openStorage, storageClosers, type StorageOverrides } from "./wiring/storage.js";

export { MEMORY_STORE_LOST_REASON } from "./lifecycle.js";
export { CONSOLE_CHANNEL, LOCAL_PERSON, LOCAL_TOKEN_NAME };

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
 * makes it. Storage given here (`store`, `auditLog`, `ruleStore`) is the
 * caller's to close; each left out is opened from the config and closed
 * with the relay.
 */
export interface RelayOverrides extends StorageOverrides, ServiceOverrides {
  logger?: Logger;
  /** The clock (Unix ms) of the service, the Slack side, the audit trail and the callback worker. */
  now?: () => number;
  metrics?: RelayMetrics;
  /** Slack parts (./wiring/slack.ts): a messenger standing in for all of Slack, or the waits, jitter and home workspace of the real one. */
  slack?: SlackOverrides;
  /** The callback worker's settings (its pacing, a token secret that went away). */
  callbacks?: CallbackOverrides;
  /** HTTP settings the config does not carry (e.g. the largest `?wait=`). */
  http?: HttpOverrides;
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
  const storage = await openStorage(config, logger, metrics.storeOutage, interruptibleBy(overrides.signal), overrides).catch(async (error: unknown) => {
    await auditExport?.close();
    throw error;
  });
  const { store, auditLog, ruleStore } = storage;
  const audit = new AuditTrail({ log: auditLog, logger, now, ...(auditExport ? { export: auditExport } : {}) });
  const queue = new ChannelQueue({ now, ...(overrides.slack?.sleep ? { sleep: overrides.slack.sleep } : {}) });
  // No Slack token: local mode, no Slack at all (no client, directory, messenger or Bolt app).
  const side =
    config.local || overrides.slack?.messenger
      ? undefined
      : slackSide({ config, logger, metrics, queue, now, ...(overrides.slack ? { given: overrides.slack } : {}) });
  const messenger = overrides.slack?.messenger ?? side?.messenger;
  const directory = overrides.slack?.directory ?? side?.directory;
  const tokens = config.local && config.tokens.length === 0 ? [{ name: LOCAL_TOKEN_NAME, token: randomBytes(24).toString("hex") }] : config.tokens;
  const service = requestService(
    config,
    {
      store,
      ruleStore,
      audit,
      metrics,
      logger,
      now,
      ...(messenger ? { messenger } : {}),
      ...(directory ? { directory } : {}),
      ...(side ? { messageCopies: side.lookup } : {}),
    },
    overrides,
  );
  const callbacks = callbackWorker(config, { store, tokens, metrics, logger, now }, overrides.callbacks);
  const slack = side ? { app: side.app(service), side } : undefined;
  // The console's sign-ins are kept in the store: any instance serves any signed-in person.
  const consoleSessions = new ConsoleSessions({ store: storage.signInStore, now, sessionTtlMs: config.consoleSessionTtlMs });
  const hookCalls = new HookCalls({ service, logger, now });
  metrics.watch({ service, hookCalls, store, queue });
  const http = httpSide({
    config,
    service,
    hookCalls,
    store,
    audit,
    logger,
    metrics,
    tokens,
    consoleSessions,
    signInStore: storage.signInStore,
    now,
    ...(slack ? { slack } : {}),
    ...(overrides.http ? { given: overrides.http } : {}),
  });
  const lifecycle = new RelayLifecycle({
    service,
    hookCalls,
    http,
    ...(slack ? { slack: slack.app } : {}),
    closers: [() => callbacks.stop(), () => audit.idle(), ...(auditExport ? [() => auditExport.close()] : []), ...storageClosers(storage, overrides)],
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
    slack: slack ? { app: slack.app, directory: slack.side.directory } : undefined,
    callbacks,
    metrics,
    tokens,
    consoleSessions,
    lifecycle,
    listen: (port, host) => listenOn(http, port, host),
    serve(sweepIntervalMs) {
      const stopSweeper = service.startSweeper(sweepIntervalMs);
      callbacks.start();
      // With a shared store, the callbacks go to the instances that stay once this one is drained: a claim it made
      // while closing would wait for the end of its close to be handed back (its attempt stopped), and then for
      // another instance's next look at the queue. A delivery in flight at the drain's end is let finish (within
      // the worker's stop grace), not thrown away to be made again elsewhere. With the memory store it delivers
      // until its last closer.
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

  await logStarted({ config, logger, url, tokens, consoleSessions: relay.consoleSessions, ...(slack ? { slack: slack.app } : {}) });
  return { url, config, service: relay.service, audit: relay.audit, close: () => relay.close() };
}
