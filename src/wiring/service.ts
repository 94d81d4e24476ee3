/**
 * The relay's domain, made from its Config: the RequestService (its policy,
 * routes, defaults, storage and Slack side) and the callback worker. Part of
 * the one composition root (../main.ts); nothing else builds a service.
 */
import { CallbackWorker, type CallbackWorkerOptions } from "../callbacks/worker.js";
import type { AgentToken, Config } from "../config/config.js";
import type { RelayMetrics } from "../http/metrics.js";
import type { Logger } from "../logger.js";
import type { AuditTrail } from "../requests/audit-trail.js";
import type { RequestMessenger } from "../requests/delivery.js";
import type { PeopleDirectory } from "../requests/directory.js";
import { RequestService } from "../requests/service.js";
import type { RuleStore } from "../requests/rules.js";
import type { RequestStore } from "../requests/store.js";
import type { MessageLookup } from "../slack/message-lookup.js";

/** The channel of a request in local mode that names none: the console is where it is answered. */
export const CONSOLE_CHANNEL = "console";

/** What a test gives in place of the service's defaults. */
export interface ServiceOverrides {
  /** A new request's id; default: the store's. */
  newId?: () => string;
  /** Milliseconds a poster holds a new request before another instance may post it. */
  postLeaseMs?: number;
}

export interface ServiceParts {
  store: RequestStore;
  ruleStore: RuleStore;
  audit: AuditTrail;
  metrics: RelayMetrics;
  logger: Logger;
  /** Unix time in milliseconds. */
  now: () => number;
  /** Slack, when the relay has it (or a messenger stands in for it). */
  messenger?: RequestMessenger;
  directory?: PeopleDirectory;
  /** The lookup of the relay's own messages (a click on a copy); only with the real Slack side. */
  messageCopies?: MessageLookup;
}

/** The RequestService of a relay run with `config`. */
export function requestService(config: Config, parts: ServiceParts, given: ServiceOverrides = {}): RequestService {
  const { store, ruleStore, audit, metrics, logger, now, messenger, directory, messageCopies } = parts;
  const defaultChannel = config.slack.defaultChannel || (config.local ? CONSOLE_CHANNEL : undefined);
  return new RequestService({
    store,
    ...(messenger ? { messenger } : {}),
    ...(directory ? { directory } : {}),
    ...(messageCopies ? { messageCopies } : {}),
    logger,
    now,
    ...(given.newId ? { newId: given.newId } : {}),
    ...(given.postLeaseMs === undefined ? {} : { postLeaseMs: given.postLeaseMs }),
    defaultTimeoutSeconds: config.defaultTimeoutSeconds,
    maxPendingPerToken: config.maxPendingPerToken,
    ...(defaultChannel ? { defaultChannel } : {}),
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
}

/** The callback worker's settings a test gives (its pacing, a token secret that went away). */
export type CallbackOverrides = Partial<Omit<CallbackWorkerOptions, "store" | "logger">>;

/** The worker that POSTs ended requests' callbacks, signed with their agent token's secret. */
export function callbackWorker(
  config: Config,
  { store, tokens, metrics, logger, now }: { store: RequestStore; tokens: AgentToken[]; metrics: RelayMetrics; logger: Logger; now: () => number },
  given: CallbackOverrides = {},
): CallbackWorker {
  const secrets = new Map(tokens.map((t) => [t.name, t.token]));
  return new CallbackWorker({
    store,
    tokenSecret: (name) => secrets.get(name),
    metrics: metrics.queues,
    ...(config.callbackHosts ? { callbackHosts: config.callbackHosts } : {}),
    logger,
    now,
    ...given,
  });
}
