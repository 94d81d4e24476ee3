/**
 * The Slack side of the relay wired for integration tests: a real
 * RequestService and store, the real messenger and Bolt HTTP receiver
 * mounted on a loopback server, and Slack's Web API stubbed with nock
 * (FakeSlackApi). Clocks are controllable so expiry and retries take no time.
 */
import { once } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import nock from "nock";
import { afterAll, afterEach, beforeAll, beforeEach, expect } from "vitest";
import { silentLogger } from "../../src/logger.js";
import type { RequestRecord } from "../../src/requests/model.js";
import { CreateRequestBody } from "../../src/protocol/request-body.js";
import { RequestService } from "../../src/requests/service.js";
import { createSlackApp, createSlackClient } from "../../src/slack/app.js";
import type { SlackCallRecorder } from "../../src/slack/counted-client.js";
import { createSlackMessenger } from "../../src/slack/messenger.js";
import { SlackPeopleDirectory } from "../../src/slack/directory.js";
import type { Route } from "../../src/requests/route-schema.js";
import { createMemoryStore } from "../../src/store/memory-store.js";
import { createMemoryRuleStore } from "../../src/store/memory-rules.js";
import type { RuleStore } from "../../src/requests/rules.js";
import type { AuditRecorder } from "../../src/requests/audit-entries.js";
import type { AuditEntry } from "../../src/requests/audit.js";
import type { RequestStore } from "../../src/requests/store.js";
import { BOT_TOKEN, CHANNEL, FakeSlackApi, postToSlackEndpoint, SIGNING_SECRET, SLACK_API_URL, TEAM_ID, type PostOptions } from "./slack.js";

export interface SlackRelayOptions {
  store?: RequestStore;
  /** Where "Allow for a while" rules live; a fresh memory rule store by default. */
  rules?: RuleStore;
  /** Audit events go here; none by default. */
  audit?: AuditRecorder;
  /** The operator's approver routes (first match wins), as RELAY_CONFIG_FILE gives them. */
  routes?: Route[];
  /** Hears how every Web API call of the relay's client ended (the metrics' recorder). */
  onSlackCall?: SlackCallRecorder;
}

export interface SlackRelay {
  api: FakeSlackApi;
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
  /** Web API requests nock did not expect. */
  unexpected: string[];
  /** Every audit event the service recorded, oldest first (also passed on to the `audit` option). */
  audited: AuditEntry[];
  close(): Promise<void>;
}

export async function startSlackRelay({
  store = createMemoryStore(),
  rules = createMemoryRuleStore(),
  audit,
  routes,
  onSlackCall,
}: SlackRelayOptions = {}): Promise<SlackRelay> {
  let offset = 0;
  const sleeps: number[] = [];
  const now = () => Date.now() + offset;
  const api = new FakeSlackApi();
  const unexpected: string[] = [];
  const onNoMatch = (req: { method?: string; href?: string; path?: string }) => {
    const where = req.href ?? req.path ?? "?";
    if (!where.includes("127.0.0.1")) unexpected.push(`${req.method ?? "?"} ${where}`);
  };
  nock.emitter.on("no match", onNoMatch);

  const client = createSlackClient({ botToken: BOT_TOKEN, apiUrl: SLACK_API_URL, logger: silentLogger, ...(onSlackCall ? { onCall: onSlackCall } : {}) });
  const messenger = createSlackMessenger({
    client,
    logger: silentLogger,
    now,
    random: () => 0.5,
    sleep: async (ms) => {
      sleeps.push(ms);
      offset += ms;
    },
  });
  // The workspace the payloads come from (slackUser's team) is the relay's own, as main learns it from auth.test.
  const directory = new SlackPeopleDirectory({ client, logger: silentLogger, now, homeTeamId: TEAM_ID });
  const audited: AuditEntry[] = [];
  const service = new RequestService({
    store,
    rules,
    messenger,
    directory,
    audit: {
      record: (entry) => {
        audited.push(entry);
        audit?.record(entry);
      },
    },
    defaultTimeoutSeconds: 600,
    defaultChannel: CHANNEL,
    logger: silentLogger,
    now,
    ...(routes ? { routes } : {}),
  });
  const slack = createSlackApp({ botToken: BOT_TOKEN, signingSecret: SIGNING_SECRET, apiUrl: SLACK_API_URL, logger: silentLogger, service, client, now });

  const server = createServer((req, res) => {
    if (req.method === "POST" && req.url?.split("?")[0] === "/slack/events") return slack.requestListener!(req, res);
    res.writeHead(404).end();
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/slack/events`;

  const settle = async () => {
    await slack.idle();
    await service.idle();
  };

  return {
    api,
    service,
    url,
    sleeps,
    unexpected,
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
      nock.emitter.removeListener("no match", onNoMatch);
      service.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await slack.stop();
    },
  };
}

/** true when no block or element of a message is interactive (buttons, selects, overflow menus). */
export function hasNoButtons(blocks: unknown): boolean {
  return !/"type":"(actions|button|static_select|overflow|radio_buttons|checkboxes)"/.test(JSON.stringify(blocks));
}

/**
 * Registers the hooks most Slack integration files share: no network but
 * loopback, a fresh relay per test (handed to `use`), and after each test the
 * relay closed, no unexpected Web API call, nock cleaned.
 */
export function useSlackRelay(use: (relay: SlackRelay) => void, options: SlackRelayOptions = {}): void {
  let relay: SlackRelay | undefined;
  beforeAll(() => {
    nock.disableNetConnect();
    nock.enableNetConnect("127.0.0.1");
  });
  afterAll(() => nock.enableNetConnect());
  beforeEach(async () => {
    relay = await startSlackRelay(options);
    use(relay);
  });
  afterEach(async () => {
    await relay?.close();
    expect(relay?.unexpected).toEqual([]);
    nock.cleanAll();
  });
}
