/**
 * The console with Slack configured (src/main.ts as `approval-relay serve`
 * runs it, Slack's Web API and OpenID endpoints a local stand-in): people
 * Sign in with Slack and answer as their Slack user, under the same policy
 * as a click (an approver allowed, anyone else refused); state and nonce
 * are checked; an admin token opens a read-only view of every request and
 * the audit log. The test plays the browser: it follows each redirect and
 * carries the cookies itself.
 */
import { afterEach, describe, expect, it } from "vitest";
import { agentCall, startFullRelay, type FullRelay } from "../../helpers/full-relay.js";
import { configFiles } from "../../helpers/config-files.js";
import { cookieOf, getWithHost } from "../../helpers/console.js";
import { CLIENT_ID, CLIENT_SECRET } from "../../helpers/slack-openid.js";
import { ALICE, BOB } from "../../fixtures/people.js";

const ADMIN = "tok_console_admin_0123456789";
const PUBLIC_URL = "https://relay.example.test";
const configFile = configFiles("yaml");
let relay: FullRelay | undefined;
afterEach(async () => {
  await relay?.close();
  relay = undefined;
});

async function start(env: Record<string, string> = {}): Promise<FullRelay> {
  relay = await startFullRelay({
    env: {
      SLACK_CLIENT_ID: CLIENT_ID,
      SLACK_CLIENT_SECRET: CLIENT_SECRET,
      RELAY_PUBLIC_URL: PUBLIC_URL,
      RELAY_ADMIN_TOKENS: `ops:${ADMIN}`,
      RELAY_CONFIG_FILE: configFile(`default:\n  approvers: { users: [${ALICE.id}] }\n`),
      ...env,
    },
  });
  return relay;
}

/** The relay's address for a URL the relay sent the browser to under RELAY_PUBLIC_URL (the test reaches it on loopback). */
const onRelay = (url: string) => url.replace(PUBLIC_URL, relay!.url);

/** Starts a Sign in with Slack: the redirect to Slack's authorize page and the state cookie. */
async function startSignIn(relay: FullRelay) {
  const started = await fetch(`${relay.url}/console/signin/slack`, { redirect: "manual" });
  expect(started.status).toBe(303);
  const authorize = new URL(started.headers.get("location")!);
  expect(authorize.href.startsWith(new URL("/openid/connect/authorize", relay.slack.url).href)).toBe(true);
  expect(Object.fromEntries(authorize.searchParams)).toMatchObject({
    client_id: CLIENT_ID,
    response_type: "code",
    scope: "openid profile",
    redirect_uri: `${PUBLIC_URL}/console/signin/slack/callback`,
  });
  const stateCookie = cookieOf(started, "relay_console_signin")!;
  expect(started.headers.getSetCookie().find((c) => c.startsWith("relay_console_signin="))).toMatch(/HttpOnly/i);
  // Slack's authorize page signs the person in and sends the browser back with a code and the state.
  const slack = await fetch(authorize, { redirect: "manual" });
  expect(slack.status).toBe(302);
  return { callback: onRelay(slack.headers.get("location")!), stateCookie };
}

/** The whole sign-in as `person`: a session cookie and its CSRF token, and a caller for the console API. */
async function signInAs(relay: FullRelay, person: { id: string; name: string }) {
  relay.slack.openId.signInAs({ ...person, teamId: "T0TEAM" });
  const { callback, stateCookie } = await startSignIn(relay);
  const back = await fetch(callback, { headers: { cookie: stateCookie }, redirect: "manual" });
  expect(back.status).toBe(303);
  expect(back.headers.get("location")).toBe("/console");
  return consoleCaller(relay, cookieOf(back, "relay_console")!);
}

async function consoleCaller(relay: FullRelay, cookie: string) {
  const session = (await (await fetch(`${relay.url}/console/api/session`, { headers: { cookie } })).json()) as { csrf: string; person: unknown; role: string };
  const call = (path: string, body?: unknown) =>
    fetch(`${relay.url}${path}`, {
      method: body === undefined ? "GET" : "POST",
      headers: { cookie, origin: relay.url, "x-csrf-token": session.csrf, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  return { session, call };
}

async function stepGate(relay: FullRelay): Promise<string> {
  const created = await agentCall(relay.url, "/v1/requests", { body: { kind: "step_gate", toolName: "Bash", input: { command: "make deploy" } } });
  expect(created.status).toBe(201);
  return String(created.body!.id);
}

describe("Sign in with Slack", () => {
  it("an approver signs in as their Slack user, answers, the agent gets the decision and the Slack message is updated", async () => {
    const relay = await start();
    const id = await stepGate(relay);
    const posted = await relay.message(0);
    const alice = await signInAs(relay, ALICE);
    expect(alice.session).toMatchObject({ person: { id: ALICE.id, name: ALICE.name, teamId: "T0TEAM" }, role: "answerer" });
    const listed = (await (await alice.call(`/console/api/requests/${id}`)).json()) as { slackUrl?: string };
    expect(listed.slackUrl).toBe(`https://acme.slack.com/archives/${posted.channel}/p${posted.ts.replace(".", "")}`);
    const held = agentCall(relay.url, `/v1/requests/${id}?wait=20`);
    const answer = await alice.call(`/console/api/requests/${id}/answer`, { decision: { reply: "y" } });
    expect(answer.status).toBe(200);
    expect((await held).body).toMatchObject({ status: "answered", decision: { reply: "y" }, answeredBy: { id: ALICE.id, via: "console" } });
    expect(JSON.stringify(await relay.updated(posted))).toContain(ALICE.id);
    expect(relay.errors()).toEqual([]);
  });

  it("someone the route does not name signs in but may not answer: 403 not_approver, and the request stays pending", async () => {
    const relay = await start();
    const id = await stepGate(relay);
    const bob = await signInAs(relay, BOB);
    const answer = await bob.call(`/console/api/requests/${id}/answer`, { decision: { reply: "y" } });
    expect(answer.status).toBe(403);
    expect(await answer.json()).toMatchObject({ error: { code: "relay_forbidden", details: { reason: "not_approver" } } });
    expect((await agentCall(relay.url, `/v1/requests/${id}`)).body).toMatchObject({ status: "pending" });
  });

  it("a callback without the browser's state cookie is refused, and so is one whose state was used already", async () => {
    const relay = await start();
    const { callback, stateCookie } = await startSignIn(relay);
    const foreign = await fetch(callback, { redirect: "manual" });
    expect(foreign.status).toBe(403);
    expect(cookieOf(foreign, "relay_console")).toBeUndefined();
    // The state was spent by the refused attempt: the right browser cannot use it afterwards either.
    const replayed = await fetch(callback, { headers: { cookie: stateCookie }, redirect: "manual" });
    expect(replayed.status).toBe(403);
    expect(await replayed.json()).toMatchObject({ error: { code: "relay_forbidden", message: expect.stringContaining("sign in again") } });
  });

  it.each(["nonce", "audience", "expired"] as const)("an ID token with the wrong %s opens no session", async (how) => {
    const relay = await start();
    const { callback, stateCookie } = await startSignIn(relay);
    relay.slack.openId.spoilNext(how);
    const back = await fetch(callback, { headers: { cookie: stateCookie }, redirect: "manual" });
    expect(back.status).toBe(403);
    expect(await back.json()).toMatchObject({ error: { message: expect.stringContaining("did not check out") } });
    expect(cookieOf(back, "relay_console")).toBeUndefined();
  });

  it("without SLACK_CLIENT_ID there is no Sign in with Slack (404), and the console says which ways in there are", async () => {
    const relay = await start({ SLACK_CLIENT_ID: "", SLACK_CLIENT_SECRET: "" });
    expect((await fetch(`${relay.url}/console/signin/slack`, { redirect: "manual" })).status).toBe(404);
    expect(await (await fetch(`${relay.url}/console/api/signin`)).json()).toEqual({ link: false, slack: false, admin: true });
  });

  it("the console answers to RELAY_PUBLIC_URL's Host besides the loopback names, and refuses any other", async () => {
    const relay = await start();
    expect(await (await fetch(`${relay.url}/console/api/signin`)).json()).toEqual({ link: false, slack: true, admin: true });
    expect(await getWithHost(relay.url, "/console/api/signin", "relay.example.test")).toBe(200);
    expect(await getWithHost(relay.url, "/console/api/signin", "RELAY.example.test")).toBe(200);
    expect(await getWithHost(relay.url, "/console/api/signin", "relay.example.test.evil.example")).toBe(403);
    expect(await getWithHost(relay.url, "/console/signin/slack", "attacker.example")).toBe(403);
  });
});

describe("an admin token in the console", () => {
  async function signInAdmin(relay: FullRelay, token: string, origin: string = relay.url) {
    return fetch(`${relay.url}/console/api/signin/admin`, {
      method: "POST",
      headers: { "content-type": "application/json", origin },
      body: JSON.stringify({ token }),
    });
  }

  it("opens a read-only view: every request and the audit log, and no answer", async () => {
    const relay = await start();
    const id = await stepGate(relay);
    const reply = await signInAdmin(relay, ADMIN);
    expect(reply.status).toBe(200);
    const admin = await consoleCaller(relay, cookieOf(reply, "relay_console")!);
    expect(admin.session).toMatchObject({ role: "viewer", person: { id: "admin:ops" } });
    const listed = (await (await admin.call("/console/api/requests")).json()) as { pending: Array<{ id: string }> };
    expect(listed.pending.map((r) => r.id)).toEqual([id]);
    const audit = (await (await admin.call(`/console/api/audit?requestId=${id}`)).json()) as { events: Array<{ type: string }> };
    expect(audit.events.map((e) => e.type)).toContain("created");
    const answer = await admin.call(`/console/api/requests/${id}/answer`, { decision: { reply: "y" } });
    expect(answer.status).toBe(403);
    expect(await answer.json()).toMatchObject({ error: { code: "relay_forbidden", message: expect.stringContaining("read-only") } });
    expect((await admin.call(`/console/api/requests/${id}/more-time`, {})).status).toBe(403);
  });

  it("a wrong admin token is 401, an agent token too, and a cross-site sign-in is 403", async () => {
    const relay = await start();
    expect((await signInAdmin(relay, "tok_not_an_admin_0123456789")).status).toBe(401);
    expect((await signInAdmin(relay, "tok_sdk_agent_0123456789abcdef")).status).toBe(401);
    expect((await signInAdmin(relay, ADMIN, "https://evil.example")).status).toBe(403);
    const empty = await fetch(`${relay.url}/console/api/signin/admin`, {
      method: "POST",
      headers: { "content-type": "application/json", origin: relay.url },
      body: "{}",
    });
    expect(empty.status).toBe(400);
    expect(await empty.json()).toMatchObject({ error: { details: [{ path: "token" }] } });
  });

  it("the audit log is not for people signed in with Slack", async () => {
    const relay = await start();
    const alice = await signInAs(relay, ALICE);
    expect((await alice.call("/console/api/audit")).status).toBe(403);
  });
});
