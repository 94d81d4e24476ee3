/**
 * The relay's Slack side, made from its Config: the Web API client, the
 * people directory, the messenger, the lookup of its own messages, message
 * links and (once the service exists) the Bolt app; and the bot token check
 * a start makes. Part of the one composition root (../main.ts).
 */
import type { Config } from "../config/config.js";
import type { RelayMetrics } from "../http/metrics.js";
import type { Logger } from "../logger.js";
import type { RequestMessenger } from "../requests/delivery.js";
import type { PeopleDirectory } from "../requests/directory.js";
import type { RequestService } from "../requests/service.js";
import { createSlackApp, createSlackClient } from "../slack/app.js";
import type { ChannelQueue } from "../slack/channel-queue.js";
import { SlackPeopleDirectory } from "../slack/directory.js";
import { MessageLookup } from "../slack/message-lookup.js";
import { createSlackMessenger, type SlackMessengerDeps } from "../slack/messenger.js";
import { MessageLinks } from "../slack/permalinks.js";

/**
 * Slack parts a test or the bench gives: `messenger` stands in for the whole
 * Slack side (no Web API client, Bolt app or token check; requests are
 * posted through it). Otherwise the Slack side is made from the config, with
 * the messenger's waits and jitter (`sleep`, `random`) and the home
 * workspace given here.
 */
export type SlackOverrides = { messenger?: RequestMessenger; directory?: PeopleDirectory; homeTeamId?: string } & Pick<SlackMessengerDeps, "sleep" | "random">;

export interface SlackSideDeps {
  config: Config;
  logger: Logger;
  metrics: RelayMetrics;
  /** The per-channel line every Slack call waits its turn in. */
  queue: ChannelQueue;
  /** Unix time in milliseconds. */
  now: () => number;
  given?: SlackOverrides;
}

/** The Slack side of a relay with Slack: the Web API client, its people directory, the messenger and (once the service exists) the Bolt app. */
export function slackSide({ config, logger, metrics, queue, now, given = {} }: SlackSideDeps) {
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

export type SlackSide = ReturnType<typeof slackSide>;

/** Errors Slack gives for a bot token it will never accept. */
const FATAL_AUTH_ERRORS = new Set(["invalid_auth", "not_authed", "account_inactive", "token_revoked", "token_expired"]);

/** What Slack said of the bot token at start: accepted (with the workspace), or not reachable. */
export type TokenCheck = { accepted: true; team: unknown; bot: unknown; teamId?: string } | { accepted: false; error: unknown };

/**
 * Stops the start when Slack refuses the bot token for good; only reports
 * when Slack cannot be reached. Logs nothing itself: the start logs the
 * outcome once it listens.
 */
export async function checkBotToken(client: ReturnType<typeof createSlackClient>): Promise<TokenCheck> {
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
