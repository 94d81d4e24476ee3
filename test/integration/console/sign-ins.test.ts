/**
 * Console sign-ins across relay instances on one real Redis: links,
 * sessions and Sign in with Slack's state are kept in the store, so any
 * instance serves any signed-in person. A link printed by instance A signs
 * in on B (in Chromium, then over HTTP) and that session answers a request
 * through A; a used link is refused on either; a sign-out on one holds on
 * the other; a forged, expired or Redis-expired cookie is refused on both;
 * a Sign in with Slack started on A comes back through B; a person's
 * sessions past their bound end their oldest; once Redis holds as many
 * started ones as it may, both refuse another with a 429; and on a real
 * Redis Cluster of the file's own, a link, its session and a sign-out hold
 * across two instances, with each kind's keys on one master. The session
 * lifetime and each person's bound follow RELAY_CONSOLE_SESSION_TTL and
 * RELAY_CONSOLE_SESSIONS_PER_PERSON, in Redis and in memory.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../../../src/logger.js";
import { startRelay, type RunningRelay } from "../../../src/main.js";
import { SIGN_INS_RETRY_AFTER_SECONDS } from "../../../src/requests/errors.js";
import { MAX_SESSIONS_PER_PERSON, MAX_SIGN_INS_PER_KIND, signInDigest } from "../../../src/requests/sign-ins.js";
import { CLUSTER_SHARDS, storeKeys } from "../../../src/store/keys.js";
import { createRedisSignInStore } from "../../../src/store/redis-sign-ins.js";
import { ALICE, BOB } from "../../fixtures/people.js";
import { CHROMIUM, consoleCaller, cookieOf, launchChromium, signInWithSlack, startSlackSignIn } from "../../helpers/console.js";
import { startFullRelay, type FullRelay } from "../../helpers/full-relay.js";
import { connectTestRedis, deleteKeysUnder, keysUnder, REDIS_TEST_URL, uniquePrefix } from "../../helpers/redis.js";
import { CLIENT_ID, CLIENT_SECRET } from "../../helpers/slack-openid.js";
import { startSlackWebApi, type SlackWebApiStandIn } from "../../helpers/slack-web-api.js";
import { useTestCluster } from "../../helpers/store-backends.js";

const AGENT = "tok_sign_ins_agent_0123456789";
const PUBLIC_URL = "https://relay.example.test";
let prefix = uniquePrefix();
let redis: Redis;
let slack: SlackWebApiStandIn;
const closers: Array<() => Promise<void>> = [];

beforeAll(() => {
  redis = connectTestRedis();
});
afterAll(async () => {
  await redis.quit();
});
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
  await deleteKeysUnder(redis, prefix);
});

/** A relay in local mode (no Slack) on the test Redis (or `redis`: another target) under this test's prefix, and the sign-in link it printed. */
async function localInstance(
  redis: Record<string, string> = { REDIS_URL: REDIS_TEST_URL },
  extra: Record<string, string> = {},
): Promise<{ relay: RunningRelay; url: string; secret: string }> {
  const logs: string[] = [];
  const stateHome = mkdtempSync(join(tmpdir(), "console-sign-ins-"));
  const relay = await startRelay({
    env: { RELAY_TOKENS: `ci-bot:${AGENT}`, XDG_STATE_HOME: stateHome, RELAY_SHUTDOWN_GRACE: "0", ...redis, REDIS_PREFIX: prefix, ...extra },
    port: 0,
    logger: createLogger({ write: (line) => logs.push(line) }),
    sweepIntervalMs: 100,
  });
  closers.push(async () => {
    await relay.close();
    rmSync(stateHome, { recursive: true, force: true });
  });
  const line = logs.find((l) => l.includes("local mode"))!;
  const secret = /\/console\/signin#([\w-]+)/.exec(line)![1]!;
  return { relay, url: relay.url, secret };
}

function signIn(url: string, secret: string) {
  return fetch(`${url}/console/api/signin`, { method: "POST", headers: { "content-type": "application/json", origin: url }, body: JSON.stringify({ secret }) });
}

async function create(url: string): Promise<string> {
  const reply = await fetch(`${url}/v1/requests`, {
    method: "POST",
    headers: { authorization: `Bearer ${AGENT}`, "content-type": "application/json" },
    body: JSON.stringify({ kind: "step_gate", toolName: "Bash", input: { command: "make deploy" } }),
  });
  expect(reply.status).toBe(201);
  return ((await reply.json()) as { id: string }).id;
}

/** The agent's long-poll for `id` on `url`. */
function waitFor(url: string, id: string): Promise<Record<string, unknown>> {
  return fetch(`${url}/v1/requests/${id}?wait=30`, { headers: { authorization: `Bearer ${AGENT}` } }).then((r) => r.json() as Promise<Record<string, unknown>>);
}

/** The status of GET /console/api/session on `url` with `cookie`. */
async function sessionStatus(url: string, cookie: string): Promise<number> {
  return (await fetch(`${url}/console/api/session`, { headers: { cookie } })).status;
}

describe("console sign-ins across instances (Redis)", () => {
  it.skipIf(!existsSync(CHROMIUM))(
    "in Chromium: the link A printed signs in on B, and the session answers a request through A's console",
    { timeout: 60_000 },
    async () => {
      prefix = uniquePrefix();
      const a = await localInstance();
      const b = await localInstance();
      const browser = await launchChromium();
      closers.push(() => browser.close());
      const page = await browser.newPage();
      await page.goto(`${b.url}/console/signin#${a.secret}`);
      await page.waitForSelector("header h1");
      // Cookies are per host, not per port: the browser sends B's session cookie to A, which finds it in Redis.
      await page.goto(`${a.url}/console`);
      await page.waitForSelector("header h1");
      const id = await create(a.url);
      const answered = waitFor(a.url, id);
      const card = page.locator(`article[data-id="${id}"]`);
      await card.waitFor({ timeout: 5000 });
      await card.getByRole("button", { name: "Yes", exact: true }).click();
      expect(await answered).toMatchObject({ status: "answered", decision: { reply: "y" }, answeredBy: { id: "local", via: "console" } });
    },
  );

  it("over HTTP: A's link signs in on B once (refused after on either), and the session answers through A", async () => {
    prefix = uniquePrefix();
    const a = await localInstance();
    const b = await localInstance();
    const first = await signIn(b.url, a.secret);
    expect(first.status).toBe(200);
    expect((await signIn(a.url, a.secret)).status).toBe(401);
    expect((await signIn(b.url, a.secret)).status).toBe(401);

    const onA = await consoleCaller(a.url, cookieOf(first, "relay_console")!);
    expect(onA.session).toMatchObject({ person: { id: "local" }, role: "answerer" });
    const id = await create(a.url);
    const answered = waitFor(a.url, id);
    const answer = await onA.call(`/console/api/requests/${id}/answer`, { decision: { reply: "n" } });
    expect(answer.status).toBe(200);
    expect(await answered).toMatchObject({ status: "answered", decision: { reply: "n" }, answeredBy: { id: "local", via: "console" } });
  });

  it("a sign-out on A ends the session on B; a forged cookie, one past its time, and one Redis expired are refused on both", async () => {
    prefix = uniquePrefix();
    const a = await localInstance();
    const b = await localInstance();
    const cookie = cookieOf(await signIn(a.url, a.secret), "relay_console")!;
    expect(await sessionStatus(b.url, cookie)).toBe(200);
    const onA = await consoleCaller(a.url, cookie);
    expect((await onA.call("/console/api/signout", {})).status).toBe(200);
    expect(await sessionStatus(b.url, cookie)).toBe(401);
    expect(await sessionStatus(a.url, cookie)).toBe(401);

    const forged = `relay_console=${"A".repeat(43)}`;
    expect(await sessionStatus(a.url, forged)).toBe(401);
    expect(await sessionStatus(b.url, forged)).toBe(401);

    const keyOf = (c: string) =>
      storeKeys(prefix)
        .signIns("session")
        .entry(signInDigest(c.split("=")[1]!));
    const late = cookieOf(await signIn(b.url, b.secret), "relay_console")!;
    const kept = JSON.parse((await redis.get(keyOf(late)))!) as Record<string, unknown>;
    await redis.set(keyOf(late), JSON.stringify({ ...kept, expiresAt: Date.now() - 1 }), "KEEPTTL");
    expect(await sessionStatus(a.url, late)).toBe(401);
    expect(await sessionStatus(b.url, late)).toBe(401);

    const third = await localInstance();
    const dropped = cookieOf(await signIn(third.url, third.secret), "relay_console")!;
    expect(await sessionStatus(a.url, dropped)).toBe(200);
    await redis.pexpire(keyOf(dropped), 1);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await sessionStatus(a.url, dropped)).toBe(401);
    expect(await sessionStatus(b.url, dropped)).toBe(401);
  });

  it("a Sign in with Slack started on A comes back through B (its state in Redis), once", async () => {
    const [a, b] = await slackPair();
    slack.openId.signInAs({ ...ALICE, name: ALICE.name!, teamId: "T0TEAM" });
    const { callback, stateCookie } = await startSlackSignIn(a, PUBLIC_URL);
    const onB = callback.replace(a.url, b.url);
    const back = await fetch(onB, { headers: { cookie: stateCookie }, redirect: "manual" });
    expect(back.status).toBe(303);
    const alice = await consoleCaller(a.url, cookieOf(back, "relay_console")!);
    expect(alice.session).toMatchObject({ person: { id: ALICE.id }, role: "answerer" });
    expect((await fetch(onB, { headers: { cookie: stateCookie }, redirect: "manual" })).status).toBe(403);
    expect((await fetch(callback, { headers: { cookie: stateCookie }, redirect: "manual" })).status).toBe(403);
    // The helper's whole round trip, across the pair, still works for a second person's browser.
    expect((await signInWithSlack(b, PUBLIC_URL, { id: ALICE.id, name: ALICE.name! })).session).toMatchObject({ person: { id: ALICE.id } });
    expect([...a.errors(), ...b.errors()]).toEqual([]);
  });

  it("a person signed in on one browser more than they may ends their oldest session, on both instances; another person's stays", async () => {
    const [a, b] = await slackPair();
    const bob = await signInWithSlack(b, PUBLIC_URL, { id: BOB.id, name: BOB.name! });
    const cookies: string[] = [];
    for (let i = 0; i <= MAX_SESSIONS_PER_PERSON; i += 1)
      cookies.push((await signInWithSlack(i % 2 ? a : b, PUBLIC_URL, { id: ALICE.id, name: ALICE.name! })).cookie);
    const [oldest, ...kept] = cookies;
    for (const relay of [a, b]) {
      expect(await sessionStatus(relay.url, oldest!)).toBe(401);
      for (const cookie of [...kept, bob.cookie]) expect(await sessionStatus(relay.url, cookie)).toBe(200);
    }
    const sessions = storeKeys(prefix).signIns("session");
    expect(await redis.zcard(sessions.ofPerson(ALICE.id))).toBe(MAX_SESSIONS_PER_PERSON);
    expect(await redis.zcard(sessions.live)).toBe(MAX_SESSIONS_PER_PERSON + 1);
    // A sign-out takes the session out of both indexes.
    expect((await (await consoleCaller(a.url, kept[0]!)).call("/console/api/signout", {})).status).toBe(200);
    expect(await redis.zcard(sessions.ofPerson(ALICE.id))).toBe(MAX_SESSIONS_PER_PERSON - 1);
    expect(await redis.zcard(sessions.live)).toBe(MAX_SESSIONS_PER_PERSON);
    expect([...a.errors(), ...b.errors()]).toEqual([]);
  });

  it("with RELAY_CONSOLE_SESSIONS_PER_PERSON=2 a third sign-in of one person ends their oldest session on both instances", async () => {
    const [a, b] = await slackPair({ RELAY_CONSOLE_SESSIONS_PER_PERSON: "2" });
    const cookies: string[] = [];
    for (let i = 0; i < 3; i += 1) cookies.push((await signInWithSlack(i % 2 ? a : b, PUBLIC_URL, { id: ALICE.id, name: ALICE.name! })).cookie);
    const [oldest, ...kept] = cookies;
    for (const relay of [a, b]) {
      expect(await sessionStatus(relay.url, oldest!)).toBe(401);
      for (const cookie of kept) expect(await sessionStatus(relay.url, cookie)).toBe(200);
    }
    expect(await redis.zcard(storeKeys(prefix).signIns("session").ofPerson(ALICE.id))).toBe(2);
  });

  it("with RELAY_CONSOLE_SESSION_TTL=30m a session lasts 30 minutes: its cookie, its expiry and its Redis key say so", async () => {
    prefix = uniquePrefix();
    const a = await localInstance(undefined, { RELAY_CONSOLE_SESSION_TTL: "30m" });
    const before = Date.now();
    const reply = await signIn(a.url, a.secret);
    expect(reply.status).toBe(200);
    expect(reply.headers.getSetCookie().find((c) => c.startsWith("relay_console="))).toMatch(/Max-Age=1800(;|$)/);
    const cookie = cookieOf(reply, "relay_console")!;
    const session = (await (await fetch(`${a.url}/console/api/session`, { headers: { cookie } })).json()) as { expiresAt: string | number };
    const expiresAt = new Date(session.expiresAt).getTime();
    expect(expiresAt).toBeGreaterThanOrEqual(before + 30 * 60_000);
    expect(expiresAt).toBeLessThanOrEqual(Date.now() + 30 * 60_000);
    const ttl = await redis.pttl(
      storeKeys(prefix)
        .signIns("session")
        .entry(signInDigest(cookie.split("=")[1]!)),
    );
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(30 * 60_000);
  });

  it("once Redis holds as many started Sign in with Slack as it may, a start on either instance is refused 429 with Retry-After and nothing is kept; a finished one frees its place", async () => {
    const [a, b] = await slackPair();
    // Fill the bound to one short, as a flood of starts would, through the store on the relays' Redis and prefix.
    const filler = createRedisSignInStore({ redis, prefix });
    const now = Date.now();
    for (let i = 0; i < MAX_SIGN_INS_PER_KIND - 1; i += 1_000) {
      const batch = Array.from({ length: Math.min(1_000, MAX_SIGN_INS_PER_KIND - 1 - i) }, (_, j) => `flood-${i + j}`);
      const kept = await Promise.all(batch.map((state) => filler.put("slack", signInDigest(state), { nonce: "n", expiresAt: now + 600_000 }, now)));
      expect(kept.every(Boolean)).toBe(true);
    }
    slack.openId.signInAs({ ...ALICE, name: ALICE.name!, teamId: "T0TEAM" });
    const last = await startSlackSignIn(a, PUBLIC_URL);
    const live = storeKeys(prefix).signIns("slack").live;
    expect(await redis.zcard(live)).toBe(MAX_SIGN_INS_PER_KIND);
    for (const relay of [a, b]) {
      const refused = await fetch(`${relay.url}/console/signin/slack`, { redirect: "manual" });
      expect(refused.status).toBe(429);
      expect(refused.headers.get("retry-after")).toBe(String(SIGN_INS_RETRY_AFTER_SECONDS));
      expect(await refused.json()).toMatchObject({ error: { code: "relay_rate_limited", message: expect.stringContaining("as many sign-ins as it may") } });
      expect(cookieOf(refused, "relay_console_signin")).toBeUndefined();
    }
    expect(await redis.zcard(live)).toBe(MAX_SIGN_INS_PER_KIND);
    expect((await keysUnder(redis, `${prefix}:console:slack`)).length).toBe(MAX_SIGN_INS_PER_KIND + 1);
    // The last one started comes back through B: its place is free, and a new start on A is kept.
    const back = await fetch(last.callback.replace(a.url, b.url), { headers: { cookie: last.stateCookie }, redirect: "manual" });
    expect(back.status).toBe(303);
    expect((await fetch(`${a.url}/console/signin/slack`, { redirect: "manual" })).status).toBe(303);
    expect([...a.errors(), ...b.errors()]).toEqual([]);
    expect(a.logs.some((line) => line.includes("as many sign-ins of this kind") && line.includes('"kind":"slack"'))).toBe(true);
  }, 60_000);
});

describe("console sign-ins in memory (no Redis)", () => {
  it("with RELAY_CONSOLE_SESSIONS_PER_PERSON=1 a second sign-in of one person ends their first session; another person's stays", async () => {
    const standIn = await startSlackWebApi();
    slack = standIn;
    closers.push(() => standIn.close());
    const relay = await startFullRelay({
      slack: standIn,
      env: { SLACK_CLIENT_ID: CLIENT_ID, SLACK_CLIENT_SECRET: CLIENT_SECRET, RELAY_PUBLIC_URL: PUBLIC_URL, RELAY_CONSOLE_SESSIONS_PER_PERSON: "1" },
    });
    closers.push(() => relay.close());
    const bob = await signInWithSlack(relay, PUBLIC_URL, { id: BOB.id, name: BOB.name! });
    const first = await signInWithSlack(relay, PUBLIC_URL, { id: ALICE.id, name: ALICE.name! });
    const second = await signInWithSlack(relay, PUBLIC_URL, { id: ALICE.id, name: ALICE.name! });
    expect(await sessionStatus(relay.url, first.cookie)).toBe(401);
    for (const cookie of [second.cookie, bob.cookie]) expect(await sessionStatus(relay.url, cookie)).toBe(200);
    expect(relay.errors()).toEqual([]);
  });
});

describe("console sign-ins across instances on a Redis Cluster", () => {
  const testCluster = useTestCluster();

  it("a link printed by A signs in on B, the session holds on A, a sign-out on A ends it on B, and a kind's keys sit on one master", async () => {
    prefix = testCluster.prefix();
    const nodes = { REDIS_CLUSTER_NODES: testCluster.cluster().nodes };
    const [a, b] = [await localInstance(nodes), await localInstance(nodes)];
    const cookie = cookieOf(await signIn(b.url, a.secret), "relay_console")!;
    expect(await sessionStatus(a.url, cookie)).toBe(200);
    expect((await signIn(a.url, a.secret)).status).toBe(401);
    const id = await create(a.url);
    const answered = waitFor(b.url, id);
    const onA = await consoleCaller(a.url, cookie);
    expect((await onA.call(`/console/api/requests/${id}/answer`, { decision: { reply: "y" } })).status).toBe(200);
    expect(await answered).toMatchObject({ status: "answered", answeredBy: { id: "local", via: "console" } });
    const session = storeKeys(prefix, CLUSTER_SHARDS).signIns("session");
    const perMaster = await testCluster.keysPerMaster(prefix);
    const holding = perMaster.filter((keys) => keys.some((key) => key.startsWith(session.live.replace(/:live$/, ""))));
    expect(holding).toHaveLength(1);
    expect(holding[0]).toEqual(expect.arrayContaining([session.live, session.ofPerson("local")]));
    expect((await onA.call("/console/api/signout", {})).status).toBe(200);
    expect(await sessionStatus(b.url, cookie)).toBe(401);
  });
});

/** Two relays with Sign in with Slack on the test Redis under a fresh prefix, and their Slack stand-in. */
async function slackPair(extra: Record<string, string> = {}): Promise<[FullRelay, FullRelay]> {
  prefix = uniquePrefix();
  const standIn = await startSlackWebApi();
  slack = standIn;
  closers.push(() => standIn.close());
  const env = {
    REDIS_URL: REDIS_TEST_URL,
    REDIS_PREFIX: prefix,
    SLACK_CLIENT_ID: CLIENT_ID,
    SLACK_CLIENT_SECRET: CLIENT_SECRET,
    RELAY_PUBLIC_URL: PUBLIC_URL,
    ...extra,
  };
  const relays: FullRelay[] = [];
  closers.push(async () => {
    for (const relay of relays) await relay.close();
  });
  for (let i = 0; i < 2; i += 1) relays.push(await startFullRelay({ slack: standIn, env }));
  return relays as [FullRelay, FullRelay];
}
