/**
 * The relay as buildRelay (src/main.ts) makes it for integration tests of
 * its Slack side: a real RequestService and store, the real messenger and
 * Bolt HTTP receiver at POST /slack/events of the relay's HTTP server on
 * loopback, and Slack's Web API played by the loopback stand-in
 * (./slack-web-api.ts) from the test's script (./slack-script.ts). Clocks are
 * controllable so expiry and retries take no time; nothing runs in the
 * background (tests sweep when they mean to).
 */
import { afterEach, beforeEach, expect } from "vitest";
import { silentLogger } from "../../src/logger.js";
import type { RequestRecord } from "../../src/requests/model.js";
import { CreateRequestBody } from "../../src/protocol/request-body.js";
import type { RelayMetrics } from "../../src/http/metrics.js";
import { buildRelay } from "../../src/main.js";
import type { RequestService } from "../../src/requests/service.js";
import type { Route } from "../../src/requests/route-schema.js";
import { createMemoryStore } from "../../src/store/memory-store.js";
import { createMemoryRuleStore } from "../../src/store/memory-rules.js";
import type { RuleStore } from "../../src/requests/rules.js";
import type { AuditRecorder } from "../../src/requests/audit-entries.js";
import type { AuditEntry, AuditLog } from "../../src/requests/audit.js";
import { createMemoryAuditLog } from "../../src/store/memory-audit.js";
import type { RequestStore } from "../../src/requests/store.js";
import { relayConfig } from "./relay-config.js";
import { BOT_TOKEN, CHANNEL, postToSlackEndpoint, SIGNING_SECRET, TEAM_ID, type PostOptions } from "./slack.js";
import { SlackScript } from "./slack-script.js";
import { startSlackWebApi } from "./slack-web-api.js";

export interface SlackRelayOptions {
  store?: RequestStore;
  /** Where "Allow for a while" rules live; a fresh memory rule store by default. */
  rules?: RuleStore;
  /** Audit events go here; none by default. */
  audit?: AuditRecorder;
  /** The operator's approver routes (first match wins), as RELAY_CONFIG_FILE gives them. */
  routes?: Route[];
  /** The relay's metrics (they hear how every Web API call of its client ended); its own by default. */
  metrics?: RelayMetrics;
  /** A script on a stand-in shared with other instances (it is then not closed by close()); a stand-in of the relay's own by default. */
  api?: SlackScript;
}

export interface SlackRelay {
  /** Slack's Web API: the test's script, and through `api.standIn` the stand-in's own powers (refuse, dropReply, waitFor, …). */
  api: SlackScript;
  service: RequestService;
  /** URL of POST /slack/events on the loopback server. */
  url: string;
  /** Milliseconds the service's clock runs ahead of real time; raise it to make requests due. */
  advance(ms: number): void;
  /** Every wait the messenger's retries asked for, in milliseconds. */
  sleeps: number[];
  /** Creates a request as an agent would and waits until its message is posted (or refused). */
  create(input: unknown): Promise<RequestRecord>;
  /** Posts a signed payload as Slack does. */
  post(payload: { type: string }, options?: PostOptions): ReturnType<typeof postToSlackEndpoint>;
  /** Waits until every interaction and every Slack call it caused has finished. */
  settle(): Promise<void>;
  /** Web API calls the script did not expect. */
  unexpected: string[];
  /** Every audit event the service recorded, oldest first (also passed on to the `audit` option). */
  audited: AuditEntry[];
  close(): Promise<void>;
}

export async function startSlackRelay({ store, rules, audit, routes, metrics, api: shared }: SlackRelayOptions = {}): Promise<SlackRelay> {
  let offset = 0;
  const sleeps: number[] = [];
  const now = () => Date.now() + offset;
  const api = shared ?? new SlackScript(await startSlackWebApi());

  // Storage this helper makes is its own to close; what a test gives, the test closes.
  const owned = { store: store ?? createMemoryStore(), rules: rules ?? createMemoryRuleStore() };
  const audited: AuditEntry[] = [];
  const auditLog = tapped(createMemoryAuditLog({ maxEvents: 10_000 }), (entry) => {
    audited.push(entry);
    audit?.record(entry);
  });
  const config = relayConfig(
    { SLACK_BOT_TOKEN: BOT_TOKEN, SLACK_SIGNING_SECRET: SIGNING_SECRET, SLACK_API_URL: api.url, SLACK_DEFAULT_CHANNEL: CHANNEL, RELAY_DEFAULT_TIMEOUT: "600" },
    { routes: routes ?? [] },
  );
  const relay = await buildRelay(config, {
    logger: silentLogger,
    now,
    store: owned.store,
    ruleStore: owned.rules,
    auditLog,
    ...(metrics ? { metrics } : {}),
    // The workspace the payloads come from (slackUser's team) is the relay's own, as the start learns it from auth.test.
    slack: {
      homeTeamId: TEAM_ID,
      random: () => 0.5,
      sleep: async (ms) => {
        sleeps.push(ms);
        offset += ms;
      },
    },
  });
  const { service } = relay;
  const slack = relay.slack!.app;
  const url = `${await relay.listen(0, "127.0.0.1")}/slack/events`;

  const settle = async () => {
    await slack.idle();
    await service.idle();
  };

  return {
    api,
    service,
    url,
    sleeps,
    unexpected: api.unexpected,
    audited,
    advance: (ms) => {
      offset += ms;
    },
    async create(input) {
      const { record } = await service.create({ tokenName: "ci-bot", body: CreateRequestBody.parse(input) });
      await service.idle();
      return (await service.get(record.id))!;
    },
    post: (payload, options) => postToSlackEndpoint(url, payload, options),
    settle,
    async close() {
      await settle();
      relay.http.server.closeAllConnections();
      await relay.close();
      if (!shared) await api.standIn.close();
      await auditLog.close();
      if (!store) await owned.store.close();
      if (!rules) await owned.rules.close();
    },
  };
}

/** true when no block or element of a message is interactive (buttons, selects, overflow menus). */
export function hasNoButtons(blocks: unknown): boolean {
  return !/"type":"(actions|button|static_select|overflow|radio_buttons|checkboxes)"/.test(JSON.stringify(blocks));
}

/**
 * Registers the hooks most Slack integration files share: a fresh relay and
 * stand-in per test (handed to `use`), and after each test the relay closed
 * and no unexpected Web API call.
 */
export function useSlackRelay(use: (relay: SlackRelay) => void, options: SlackRelayOptions = {}): void {
  let relay: SlackRelay | undefined;
  beforeEach(async () => {
    relay = await startSlackRelay(options);
    use(relay);
  });
  afterEach(async () => {
    await relay?.close();
    expect(relay?.unexpected).toEqual([]);
  });
}

/** `log`, with every entry it is asked to append handed to `tap` first. */
function tapped(log: AuditLog, tap: (entry: AuditEntry) => void): AuditLog {
  return {
    ...log,
    append: (entry) => {
      tap(entry);
      return log.append(entry);
    },
  };
}
