/**
 * The App Home tab's gathering and publishing (src/slack/home-tab.ts) on the
 * RequestService, people directory and WebClient of a relay built as
 * `npm start` builds it (memory stores), the Web API played by the loopback
 * stand-in: which pending requests
 * wait on a person, how many are shown and counted, links built from the
 * workspace URL asked once, one view per person at a time, and every
 * failure logged and shown, never thrown.
 */
import type { HomeView } from "@slack/types";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createLogger } from "../../../src/logger.js";
import { buildRelay, type Relay } from "../../../src/main.js";
import type { RequestPolicy, RequestRecord } from "../../../src/requests/model.js";
import type { RequestStore } from "../../../src/requests/store.js";
import { StoreUnavailableError } from "../../../src/requests/errors.js";
import { HOME_LIMITS, type HomeWaiting } from "../../../src/slack/blocks/index.js";
import { ChannelQueue } from "../../../src/slack/channel-queue.js";
import { HomeTab } from "../../../src/slack/home-tab.js";
import { MessageLinks } from "../../../src/slack/permalinks.js";
import { createMemoryStore } from "../../../src/store/memory-store.js";
import { ALICE, BOB } from "../../fixtures/people.js";
import { deployPolicy, ONCALL } from "../../fixtures/policies.js";
import { CREATED_AT, permissionRecord } from "../../fixtures/records.js";
import { sectionText } from "../../helpers/blocks.js";
import { relayConfig } from "../../helpers/relay-config.js";
import { BOT_TOKEN, TEAM_ID } from "../../helpers/slack.js";
import { SlackScript } from "../../helpers/slack-script.js";
import { startSlackWebApi } from "../../helpers/slack-web-api.js";

const NOW = CREATED_AT + 60_000;
const WORKSPACE = { ok: true, url: "https://acme.slack.com/" };
const ALICE_ONLY: RequestPolicy = { alwaysAllow: "tool", approvers: { users: [ALICE.id] } };

let api: SlackScript;
let relay: Relay | undefined;
let clock: { t: number };
let logs: string[];
let store: RequestStore;
let home: HomeTab;
let seq: number;

/** A relay on `storeOverride` (the test's store by default) and the test's clock, and a Home tab on its service and Web API client. */
async function start(storeOverride?: RequestStore) {
  await relay?.close();
  const logger = createLogger({ level: "warn", write: (line) => logs.push(line) });
  const now = () => clock.t;
  const config = relayConfig({ SLACK_BOT_TOKEN: BOT_TOKEN, SLACK_API_URL: api.url, RELAY_DEFAULT_TIMEOUT: "600" });
  relay = await buildRelay(config, { store: storeOverride ?? store, now, logger, slack: { homeTeamId: TEAM_ID } });
  const client = relay.slack!.app.client;
  home = new HomeTab({ service: relay.service, client, links: new MessageLinks({ client, logger, now }), queue: new ChannelQueue({ now }), logger, now });
}

/** Stores a pending request created `seq` ms after the last, its message at ts 1700000000.000<seq>. */
async function seed(overrides: Partial<RequestRecord> = {}, body: Parameters<typeof permissionRecord>[0] = {}): Promise<RequestRecord> {
  seq += 1;
  const ts = `1700000000.${String(seq).padStart(6, "0")}`;
  const record = permissionRecord(body, {
    id: `req-${seq}`,
    createdAt: CREATED_AT + seq,
    policy: ALICE_ONLY,
    slack: { channel: "C0123456789", ts },
    ...overrides,
  });
  await store.create(record);
  return record;
}

const waitingOf = async (person = ALICE) => (await home.content(person)).waiting as HomeWaiting;
const ids = (waiting: HomeWaiting) => waiting.shown.map((item) => item.record.id);
const published = () => api.callsTo("views.publish").map((call) => call.args.view as HomeView);

beforeEach(async () => {
  api = new SlackScript(await startSlackWebApi());
  clock = { t: NOW };
  logs = [];
  seq = 0;
  store = createMemoryStore({ now: () => clock.t });
  await start();
});
afterEach(async () => {
  await home.idle();
  await relay?.close();
  relay = undefined;
  await api.standIn.close();
  expect(api.unexpected).toEqual([]);
});

describe("the requests waiting on a person", () => {
  it("are the pending ones they may answer, newest first, with a link to each message", async () => {
    api.on("auth.test", WORKSPACE);
    const older = await seed();
    const newer = await seed();
    await seed({ policy: { alwaysAllow: "tool", approvers: { users: [BOB.id] } } });
    const waiting = await waitingOf();
    expect(ids(waiting)).toStrictEqual([newer.id, older.id]);
    expect(waiting.shown[0]?.permalink).toBe("https://acme.slack.com/archives/C0123456789/p1700000000000002");
    api.done();
  });

  it("leave out those past their deadline, not posted yet, already approved by the person, or sent directly to someone else", async () => {
    api.on("auth.test", WORKSPACE);
    const kept = await seed();
    await seed({ expiresAt: NOW });
    await seed({ slack: undefined });
    await seed({ policy: deployPolicy({ requestedBy: undefined }), approvals: [{ person: ALICE, at: NOW }] });
    const direct = await seed({ channel: BOB.id, policy: { alwaysAllow: "tool" }, slack: { channel: "D0BOB0001", ts: "1700000000.000099" } });
    api.on("usergroups.users.list", { ok: true, users: [] });
    expect(ids(await waitingOf())).toStrictEqual([kept.id]);
    expect(ids(await waitingOf(BOB))).toStrictEqual([direct.id]);
    api.done();
  });

  it("count those Slack could not check (a user group it did not answer for) apart, and list none of them", async () => {
    api.on("auth.test", WORKSPACE).on("usergroups.users.list", { status: 500 });
    await seed({ policy: { alwaysAllow: "tool", approvers: { usergroups: [ONCALL] } } });
    await seed({ policy: { alwaysAllow: "tool", approvers: { usergroups: [ONCALL] } } });
    expect(await waitingOf()).toMatchObject({ shown: [], more: 0, unchecked: 2 });
    api.done();
  });

  it(`are shown ${HOME_LIMITS.requests} at most, the rest counted, with + once the relay has more pending than it looks at`, async () => {
    api.on("auth.test", WORKSPACE);
    for (let i = 0; i < HOME_LIMITS.requests + 5; i += 1) await seed();
    expect(await waitingOf()).toMatchObject({ more: 5, moreUncounted: false });
    for (let i = 0; i < HOME_LIMITS.scanned; i += 1) await seed({ policy: { alwaysAllow: "tool", approvers: { users: [BOB.id] } } });
    const crowded = await waitingOf();
    expect(crowded).toMatchObject({ shown: [], more: 0, moreUncounted: true });
    api.done();
  });
});

describe("links to messages", () => {
  it("come from the workspace URL auth.test gives, asked once per instance", async () => {
    api.on("auth.test", WORKSPACE);
    await seed();
    await waitingOf();
    expect((await waitingOf()).shown[0]?.permalink).toBe("https://acme.slack.com/archives/C0123456789/p1700000000000001");
    expect(api.callsTo("auth.test")).toHaveLength(1);
    api.done();
  });

  it("are left out while auth.test fails or gives no URL of Slack's shape, asked again after a minute", async () => {
    api.on("auth.test", { ok: false, error: "fatal_error" }).on("auth.test", { ok: true, url: "javascript:alert(1)//" }).on("auth.test", WORKSPACE);
    await seed();
    expect((await waitingOf()).shown[0]?.permalink).toBeUndefined();
    expect((await waitingOf()).shown[0]?.permalink).toBeUndefined();
    expect(api.callsTo("auth.test")).toHaveLength(1);
    clock.t += 60_000;
    expect((await waitingOf()).shown[0]?.permalink).toBeUndefined();
    clock.t += 60_000;
    expect((await waitingOf()).shown[0]?.permalink).toBe("https://acme.slack.com/archives/C0123456789/p1700000000000001");
    expect(logs.filter((line) => line.includes("workspace URL unknown"))).toHaveLength(2);
    api.done();
  });
});

describe("publishing", () => {
  it("builds one view per person at a time: asks while it is built give one more view after it, with the latest notice", async () => {
    api.on("auth.test", WORKSPACE).on("views.publish", { ok: true }, 2);
    home.show(ALICE, "first");
    home.show(ALICE, "second");
    home.show(ALICE, "third");
    await home.idle();
    expect(api.callsTo("views.publish").map((call) => call.args.user_id)).toStrictEqual([ALICE.id, ALICE.id]);
    expect(published().map((view) => sectionText(view, "notice"))).toStrictEqual(["first", "third"]);
    api.done();
  });

  it("logs a publish Slack refuses, never throws, and shows what could not be read", async () => {
    await start({ ...store, listRequests: () => Promise.reject(new StoreUnavailableError("test: the store is away")) });
    api.on("auth.test", WORKSPACE).on("views.publish", { ok: false, error: "not_enabled" }).on("views.publish");
    home.show(ALICE);
    await home.idle();
    expect(logs.filter((line) => line.includes("slack home tab not published"))).toHaveLength(1);
    home.show(ALICE);
    await home.idle();
    expect(published().map((view) => sectionText(view, "waiting_unavailable"))).toStrictEqual([
      "⚠️ The relay could not read its requests just now. Open this tab again in a moment.",
      "⚠️ The relay could not read its requests just now. Open this tab again in a moment.",
    ]);
    api.done();
  });

  it("refreshes after an answer only for someone who opened the tab within the last 15 minutes", async () => {
    api.on("auth.test", WORKSPACE).on("views.publish", { ok: true }, 2);
    home.acted(ALICE.id);
    home.opened(ALICE);
    await home.idle();
    clock.t += 15 * 60_000 - 1;
    home.acted(ALICE.id);
    await home.idle();
    clock.t += 1;
    home.acted(ALICE.id);
    await home.idle();
    expect(api.callsTo("views.publish")).toHaveLength(2);
    api.done();
  });
});
