/**
 * The relay's HTTP side, made from its Config: the Fastify app with the
 * agent API, the operator API, the console, metrics, readiness and (in HTTP
 * mode) Slack's events; and the listen that names PORT when it fails. Part
 * of the one composition root (../main.ts).
 */
import type { AddressInfo } from "node:net";
import type { AgentToken, Config } from "../config/config.js";
import type { ConsoleSessions } from "../console/sessions.js";
import { SlackOpenId } from "../console/slack-openid.js";
import type { RelayMetrics } from "../http/metrics.js";
import { createHttpApp, listenHttp, type HttpDeps } from "../http/server.js";
import type { HttpApp } from "../http/transport.js";
import type { Logger } from "../logger.js";
import type { AuditTrail } from "../requests/audit-trail.js";
import type { HookCalls } from "../requests/hooks/calls.js";
import { RequestListing } from "../requests/listing.js";
import type { RequestService } from "../requests/service.js";
import type { SignInStore } from "../requests/sign-ins.js";
import type { RequestStore } from "../requests/store.js";
import type { SlackApp } from "../slack/app.js";
import type { SlackSide } from "./slack.js";

/** HTTP settings a test gives that the config does not carry (e.g. the largest `?wait=`). */
export type HttpOverrides = Partial<Omit<HttpDeps, "service" | "hookCalls" | "listing" | "audit" | "logger">>;

export interface HttpSideDeps {
  config: Config;
  service: RequestService;
  hookCalls: HookCalls;
  store: RequestStore;
  audit: AuditTrail;
  logger: Logger;
  metrics: RelayMetrics;
  /** The agent tokens: RELAY_TOKENS, or the one local mode made. */
  tokens: AgentToken[];
  consoleSessions: ConsoleSessions;
  /** Where Sign in with Slack keeps the sign-ins it started (any instance finishes them). */
  signInStore: SignInStore;
  /** Unix time in milliseconds. */
  now: () => number;
  /** The Bolt app and the Slack side it came from; absent without Slack. */
  slack?: { app: SlackApp; side: SlackSide };
  given?: HttpOverrides;
}

/** The relay's Fastify app, not listening yet. */
export function httpSide(deps: HttpSideDeps): HttpApp {
  const { config, service, hookCalls, store, audit, logger, metrics, tokens, consoleSessions, signInStore, now, slack, given } = deps;
  const messageLinks = slack ? { messageLinks: () => slack.side.links.linker() } : {};
  return createHttpApp({
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
    ...(slack?.app.requestListener ? { slackListener: slack.app.requestListener } : {}),
    ...messageLinks,
    // The console: local mode's one person signs in through the printed link; with Slack, people Sign in with Slack
    // (SLACK_CLIENT_ID) and admin tokens open a read-only view.
    console: {
      sessions: consoleSessions,
      links: config.local,
      ...messageLinks,
      ...(config.publicUrl ? { publicUrl: config.publicUrl } : {}),
      ...(config.slackSignIn && config.publicUrl
        ? { slackSignIn: new SlackOpenId({ ...config.slackSignIn, apiUrl: config.slack.apiUrl, publicUrl: config.publicUrl, store: signInStore, now }) }
        : {}),
    },
    readiness: async () => {
      // Without Slack there is no Slack to be down.
      const [storeUp, slackUp] = await Promise.all([store.ping(), slack ? slack.app.ping() : true]);
      const slackProblem = slack?.app.socketProblem();
      return { store: storeUp, slack: slackUp && slackProblem === undefined, ...(slackProblem === undefined ? {} : { slackProblem }) };
    },
    ...given,
  });
}

/** Node's listen errors an operator fixes with PORT, and how. */
const PORT_PROBLEMS: Record<string, (port: number) => string> = {
  EADDRINUSE: (port) => `port ${port} is already in use (EADDRINUSE): stop what listens there, or set PORT to a free port`,
  EACCES: (port) => `this user may not listen on port ${port} (EACCES): set PORT to 1024 or above, or give node the right to bind it`,
};

/**
 * Opens the HTTP port and resolves the base URL (http://127.0.0.1:… for
 * every interface); a port in use or not allowed stops the start with one
 * line naming PORT.
 */
export async function listenOn(app: HttpApp, port: number, host?: string): Promise<string> {
  try {
    await listenHttp(app, port, host);
  } catch (error) {
    const problem = PORT_PROBLEMS[String((error as { code?: unknown }).code)];
    throw problem ? new Error(`PORT: ${problem(port)}`, { cause: error }) : error;
  }
  const address = app.server.address() as AddressInfo;
  const where = address.family === "IPv6" ? `[${address.address}]` : address.address;
  return `http://${where === "[::]" || where === "0.0.0.0" ? "127.0.0.1" : where}:${address.port}`;
}
