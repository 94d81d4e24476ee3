/**
 * The web console's HTTP side on the relay as `approval-relay serve` starts
 * it in local mode (src/main.ts): sign-in through the printed single-use
 * link, the session cookie, the Host allowlist, Origin and CSRF on every
 * state-changing call, answers checked by the same policy as a Slack click
 * and audited with `via: "console"`, and the live stream of changes.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createLogger } from "../../../src/logger.js";
import { startRelay, type RunningRelay } from "../../../src/main.js";
import { configFiles } from "../../helpers/config-files.js";
import { getWithHost } from "../../helpers/console.js";
import { until } from "../../helpers/until.js";

const AGENT = "tok_console_agent_0123456789";
const ADMIN = "tok_console_admin_0123456789";
const configFile = configFiles("yaml");
let relay: RunningRelay | undefined;
let stateHome: string | undefined;
afterEach(async () => {
  await relay?.close();
  relay = undefined;
  if (stateHome) rmSync(stateHome, { recursive: true, force: true });
});

async function startLocal(env: Record<string, string> = {}) {
  const logs: string[] = [];
  stateHome = mkdtempSync(join(tmpdir(), "console-state-"));
  relay = await startRelay({
    env: { RELAY_TOKENS: `ci-bot:${AGENT}`, RELAY_ADMIN_TOKENS: `ops:${ADMIN}`, XDG_STATE_HOME: stateHome, RELAY_SHUTDOWN_GRACE: "0", ...env },
    port: 0,
    logger: createLogger({ write: (line) => logs.push(line) }),
    sweepIntervalMs: 100,
  });
  const line = logs.find((l) => l.includes("local mode"))!;
  const link = /(http:\/\/127\.0\.0\.1:\d+\/console\/signin#[\w-]+)/.exec(line)![1]!;
  return { url: relay.url, link, secret: link.split("#")[1]!, logs };
}

async function signIn(url: string, secret: string, origin: string | null = url) {
  return fetch(`${url}/console/api/signin`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(origin ? { origin } : {}) },
    body: JSON.stringify({ secret }),
  });
}

async function session(url: string, secret: string) {
  const reply = await signIn(url, secret);
  expect(reply.status).toBe(200);
  const cookie = reply.headers.get("set-cookie")!.split(";")[0]!;
  const { csrf } = (await reply.json()) as { csrf: string };
  const call = (path: string, init: { method?: string; body?: unknown; csrf?: string | null; origin?: string | null } = {}) =>
    fetch(`${url}${path}`, {
      method: init.method ?? "GET",
      headers: {
        cookie,
        ...(init.body === undefined ? {} : { "content-type": "application/json" }),
        ...(init.csrf === null ? {} : { "x-csrf-token": init.csrf ?? csrf }),
        ...(init.origin === null ? {} : { origin: init.origin ?? url }),
      },
      ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
    });
  return { cookie, csrf, call };
}

async function create(url: string, body: Record<string, unknown>) {
  const reply = await fetch(`${url}/v1/requests`, {
    method: "POST",
    headers: { authorization: `Bearer ${AGENT}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  expect(reply.status).toBe(201);
  return ((await reply.json()) as { id: string }).id;
}

const STEP = { kind: "step_gate", toolName: "Bash", input: { command: "ls" } };

describe("console sign-in", () => {
  it("the printed link's secret is in the fragment, opens one HttpOnly SameSite=Strict session, and works once", async () => {
    const { url, link, secret } = await startLocal();
    expect(new URL(link).search).toBe("");
    const first = await signIn(url, secret);
    expect(first.status).toBe(200);
    const cookie = first.headers.get("set-cookie")!;
    expect(cookie).toMatch(/^relay_console=[\w-]+;/);
    expect(cookie).toMatch(/HttpOnly/i);
    expect(cookie).toMatch(/SameSite=Strict/i);
    expect(cookie).toMatch(/Path=\/console/);
    expect(cookie).toMatch(/Max-Age=\d+/);
    expect(await first.json()).toMatchObject({ person: { id: "local" }, csrf: expect.any(String) });
    expect((await signIn(url, secret)).status).toBe(401);
  });

  it("refuses a sign-in from another site or with no Origin, and an unknown secret", async () => {
    const { url, secret } = await startLocal();
    expect((await signIn(url, secret, "https://evil.example.com")).status).toBe(403);
    expect((await signIn(url, secret, null)).status).toBe(403);
    expect((await signIn(url, "not-the-secret")).status).toBe(401);
    // Refusals did not use the link up.
    expect((await signIn(url, secret)).status).toBe(200);
  });

  it("answers only to its own Host names: a rebinding page's Host is refused", async () => {
    const { url } = await startLocal();
    const port = new URL(url).port;
    expect(await getWithHost(url, "/console/api/session", `evil.example.com:${port}`)).toBe(403);
    expect(await getWithHost(url, "/console/api/session", `localhost:${port}`)).toBe(401);
  });

  it("without a session, the API says to sign in", async () => {
    const { url } = await startLocal();
    const reply = await fetch(`${url}/console/api/requests`);
    expect(reply.status).toBe(401);
    expect(await reply.json()).toMatchObject({ error: { code: "relay_unauthorized" } });
  });

  it("serves its page with a CSP that allows no inline script and no framing", async () => {
    const { url } = await startLocal();
    const reply = await fetch(`${url}/console/api/session`);
    const csp = reply.headers.get("content-security-policy")!;
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain("unsafe-inline");
    expect(csp).toContain("frame-ancestors 'none'");
  });
});

describe("answering in the console", () => {
  it("an agent's request is listed and answered; the waiting agent gets the exact decision, and the audit says via console", async () => {
    const { url, secret } = await startLocal();
    const { call } = await session(url, secret);
    const id = await create(url, STEP);
    const listed = (await (await call("/console/api/requests")).json()) as { pending: Array<{ id: string; body: unknown }> };
    expect(listed.pending.map((r) => r.id)).toEqual([id]);
    expect(listed.pending[0]!.body).toMatchObject(STEP);
    const waiting = fetch(`${url}/v1/requests/${id}?wait=10`, { headers: { authorization: `Bearer ${AGENT}` } });
    const answer = await call(`/console/api/requests/${id}/answer`, { method: "POST", body: { decision: { reply: "y" } } });
    expect(answer.status).toBe(200);
    const seen = (await (await waiting).json()) as Record<string, unknown>;
    expect(seen).toMatchObject({ status: "answered", decision: { reply: "y" }, answeredBy: { id: "local", via: "console" } });
    await until(async () => {
      const audit = (await (await fetch(`${url}/v1/audit?requestId=${id}`, { headers: { authorization: `Bearer ${ADMIN}` } })).json()) as {
        events: Array<{ type: string; person?: unknown }>;
      };
      return audit.events.some(
        (e) => e.type === "answered" && JSON.stringify(e.person) === JSON.stringify({ id: "local", name: "local console", via: "console" }),
      );
    }, 5000);
    const again = await call(`/console/api/requests/${id}/answer`, { method: "POST", body: { decision: { reply: "n" } } });
    expect(again.status).toBe(409);
  });

  it("refuses a state-changing call without the CSRF token, with a wrong one, or from another origin, and changes nothing", async () => {
    const { url, secret } = await startLocal();
    const { call } = await session(url, secret);
    const id = await create(url, STEP);
    const answer = (init: { csrf?: string | null; origin?: string | null }) =>
      call(`/console/api/requests/${id}/answer`, { method: "POST", body: { decision: { reply: "y" } }, ...init });
    expect((await answer({ csrf: null })).status).toBe(403);
    expect((await answer({ csrf: "wrong" })).status).toBe(403);
    expect((await answer({ origin: "https://evil.example.com" })).status).toBe(403);
    expect((await answer({ origin: null })).status).toBe(403);
    const still = (await (await call(`/console/api/requests/${id}`)).json()) as { status: string };
    expect(still.status).toBe("pending");
  });

  it("is checked by the same policy as Slack: a route whose approvers leave the local person out refuses the answer", async () => {
    const file = configFile(`routes:\n  - match: { token: ci-bot }\n    approvers: { users: [U0ALICE01] }\n`);
    const { url, secret } = await startLocal({ RELAY_CONFIG_FILE: file });
    const { call } = await session(url, secret);
    const id = await create(url, STEP);
    const refused = await call(`/console/api/requests/${id}/answer`, { method: "POST", body: { decision: { reply: "y" } } });
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({ error: { code: "relay_forbidden", details: { reason: "not_approver" } } });
  });

  it("checks answers as the Slack modal does: a decision of the wrong kind, a missing required answer or a pattern miss is a 400 naming the field", async () => {
    const { url, secret } = await startLocal();
    const { call } = await session(url, secret);
    const id = await create(url, {
      kind: "interactive_questions",
      questions: [{ id: "version", question: "Which version?", type: "text", pattern: "^v\\d+$" }],
    });
    const post = (decision: unknown) => call(`/console/api/requests/${id}/answer`, { method: "POST", body: { decision } });
    const wrongKind = await post({ reply: "y" });
    expect(wrongKind.status).toBe(400);
    const miss = await post({ answers: { version: "latest" } });
    expect(miss.status).toBe(400);
    expect(JSON.stringify(await miss.json())).toContain("decision.answers.version");
    expect((await post({ answers: {} })).status).toBe(400);
    expect((await post({ answers: { version: "v2" } })).status).toBe(200);
  });
});

describe("what a permission request offers, as its Slack message does", () => {
  const BASH = { kind: "permission", toolName: "Bash", input: { command: "npm test" }, agent: { name: "claude", sessionId: "s-1" } };
  const suggestion = (toolName: string) => ({ type: "addRules", rules: [{ toolName, ruleContent: "npm test" }], behavior: "allow", destination: "session" });

  it("lists the offers, and Always allow passes back exactly the rules it grants, never another suggestion", async () => {
    const { url, secret } = await startLocal();
    const { call } = await session(url, secret);
    const id = await create(url, { ...BASH, suggestions: [suggestion("Bash"), suggestion("Write")] });
    const listed = (await (await call(`/console/api/requests/${id}`)).json()) as { offers: Record<string, unknown> };
    expect(listed.offers).toEqual({ allow: "Allow", rule: "Allow for 15 min", alwaysAllow: [suggestion("Bash")], edit: true });
    const post = (decision: unknown) => call(`/console/api/requests/${id}/answer`, { method: "POST", body: { decision } });
    const more = await post({ behavior: "allow", updatedInput: BASH.input, updatedPermissions: [suggestion("Bash"), suggestion("Write")] });
    expect(more.status).toBe(400);
    expect(await more.json()).toMatchObject({ error: { details: [{ path: "decision.updatedPermissions" }] } });
    const granted = await post({ behavior: "allow", updatedInput: BASH.input, updatedPermissions: [suggestion("Bash")] });
    expect(granted.status).toBe(200);
    expect(await granted.json()).toMatchObject({ request: { status: "answered", decision: { updatedPermissions: [suggestion("Bash")] } } });
  });

  it("under a quorum: Approve, no Edit…, no rule and no Always allow; an edited input is a 400 before any policy check", async () => {
    const file = configFile(`default:\n  quorum: 2\n  approvers: { users: [U0BOB0001, U0ALICE01] }\n`);
    const { url, secret } = await startLocal({ RELAY_CONFIG_FILE: file });
    const { call } = await session(url, secret);
    const id = await create(url, { ...BASH, suggestions: [suggestion("Bash")] });
    const listed = (await (await call(`/console/api/requests/${id}`)).json()) as { offers: Record<string, unknown> };
    expect(listed.offers).toEqual({ allow: "Approve", edit: false });
    const edited = await call(`/console/api/requests/${id}/answer`, {
      method: "POST",
      body: { decision: { behavior: "allow", updatedInput: { command: "rm -rf /" } } },
    });
    expect(edited.status).toBe(400);
    expect(await edited.json()).toMatchObject({ error: { details: [{ path: "decision.updatedInput" }] } });
  });
});

describe("the live stream", () => {
  it("a request an agent creates, and its answer, reach an open stream within a second", async () => {
    const { url, secret } = await startLocal();
    const { cookie, call } = await session(url, secret);
    const stream = await fetch(`${url}/console/api/events`, { headers: { cookie } });
    expect(stream.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const reader = stream.body!.getReader();
    let text = "";
    const read = async (want: RegExp) => {
      const end = Date.now() + 1000;
      while (!want.test(text)) {
        const left = end - Date.now();
        if (left <= 0) throw new Error(`not seen within 1 s: ${want}; got ${text}`);
        const chunk = await Promise.race([reader.read(), new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`timeout: ${text}`)), left))]);
        text += new TextDecoder().decode(chunk.value);
      }
    };
    const id = await create(url, STEP);
    await read(new RegExp(`"id":"${id}","kind":"step_gate","status":"pending"`));
    await call(`/console/api/requests/${id}/answer`, { method: "POST", body: { decision: { reply: "q" } } });
    await read(new RegExp(`"id":"${id}","kind":"step_gate","status":"answered"`));
    await reader.cancel();
  });
});
