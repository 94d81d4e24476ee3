/**
 * The line a started relay logs: where it listens, its store, Slack mode
 * and tokens; in local mode, where agents find it and the console's
 * single-use sign-in link. Part of the one composition root (../main.ts).
 */
import type { AgentToken, Config } from "../config/config.js";
import type { ConsoleSessions } from "../console/sessions.js";
import type { Logger } from "../logger.js";
import { writeLocalRelay } from "../protocol/local-relay.js";
import type { SlackApp } from "../slack/app.js";
import { storeName } from "./storage.js";

/** Who answers in local mode's console: the one person at this machine. */
export const LOCAL_PERSON = { id: "local", name: "local console" };
/** The name of the agent token local mode makes when RELAY_TOKENS is unset. */
export const LOCAL_TOKEN_NAME = "local";

export interface Started {
  config: Config;
  logger: Logger;
  /** Base URL of the HTTP server. */
  url: string;
  /** The agent tokens: RELAY_TOKENS, or the one local mode made. */
  tokens: AgentToken[];
  consoleSessions: ConsoleSessions;
  /** The Bolt app, unless the relay runs without Slack. */
  slack?: SlackApp;
}

/** Logs the start line; in local mode, first writes where agents find the relay (when it made their token). */
export async function logStarted({ config, logger, url, tokens, consoleSessions, slack }: Started): Promise<void> {
  if (config.local) {
    const file = tokens === config.tokens ? undefined : writeLocalRelay({ url, token: tokens[0]!.token }, config.localStateHome);
    const signIn = `${url}/console/signin#${await consoleSessions.newLink(LOCAL_PERSON)}`;
    logger.info({ url, store: storeName(config), tokens: tokens.map((t) => t.name), ...(file ? { localRelayFile: file } : {}) }, localStartLine(signIn, file));
    return;
  }
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

/** The one line local mode starts with: where agents find the relay, and how to connect Slack later. */
function localStartLine(signIn: string, file: string | undefined): string {
  const agents = file
    ? `agents on this machine find the relay through ${file} (approval-relay ask, hook and the client library read it)`
    : "agents use RELAY_TOKENS";
  return `relay started in local mode, without Slack, on 127.0.0.1 only: answer in the console, sign in at ${signIn} (single use, for 10 minutes); ${agents}; to connect Slack later, set SLACK_BOT_TOKEN and SLACK_APP_TOKEN (Socket Mode) or SLACK_SIGNING_SECRET (docs/slack.md)`;
}
