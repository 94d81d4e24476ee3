/**
 * What the web console's tests do as a browser would: a call with a Host of
 * the test's choosing (DNS rebinding; fetch cannot), the cookies a reply
 * sets, Sign in with Slack against the Slack stand-in (each redirect
 * followed by hand, the cookies carried), calls with the session's CSRF
 * token, and the live stream read as events arrive.
 */
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium, type Browser } from "playwright-core";
import { expect } from "vitest";
import { CLIENT_ID } from "./slack-openid.js";
import type { SlackWebApiStandIn } from "./slack-web-api.js";
import { until } from "./until.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** GET with a Host of our choosing (fetch does not let a caller set it); resolves with the status. */
export function getWithHost(url: string, path: string, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${url}${path}`, { headers: { host } }, (res) => {
      res.resume();
      resolve(res.statusCode!);
    });
    req.on("error", reject);
    req.end();
  });
}

/** `name=value` of the cookie `name` that `reply` sets, as a browser would send it back; undefined when it sets none. */
export function cookieOf(reply: Response, name: string): string | undefined {
  return reply.headers
    .getSetCookie()
    .map((c) => c.split(";")[0]!)
    .find((c) => c.startsWith(`${name}=`));
}

/** An open `GET /console/api/events` stream, read as events arrive. */
export interface ConsoleStream {
  /** Resolves with the first `event: request` (from the stream's start) whose request matches, waiting up to `timeoutMs` (1 s: the console's promise). */
  next(match: (request: Record<string, unknown>) => boolean, timeoutMs?: number): Promise<Record<string, unknown>>;
  /** Every `event: request` from the stream's start, in order, after reading what arrives for `forMs` more. */
  received(forMs?: number): Promise<Record<string, unknown>[]>;
  close(): Promise<void>;
}

export async function consoleStream(url: string, cookie: string): Promise<ConsoleStream> {
  const reply = await fetch(`${url}/console/api/events`, { headers: { cookie } });
  if (!reply.headers.get("content-type")?.startsWith("text/event-stream")) throw new Error(`not an event stream: ${reply.status}`);
  const reader = reply.body!.getReader();
  const decoder = new TextDecoder();
  let text = "";
  // A read outlives a wait that gave up on it: the next wait takes it over, so no chunk is lost.
  let reading: ReturnType<typeof reader.read> | undefined;
  // Whole events only (a blank line ends each): a large one may still be arriving.
  const requests = () => [...text.matchAll(/^event: request\ndata: (.*)\n\n/gm)].map((m) => JSON.parse(m[1]!) as Record<string, unknown>);
  /** Reads one chunk into `text`, waiting up to `ms`. */
  const pull = async (ms: number) => {
    reading ??= reader.read();
    let timer: NodeJS.Timeout | undefined;
    const chunk = await Promise.race([reading, new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), ms)))]);
    clearTimeout(timer);
    if (!chunk) return;
    reading = undefined;
    if (chunk.value) text += decoder.decode(chunk.value, { stream: true });
  };
  return {
    async next(match, timeoutMs = 1000) {
      const end = Date.now() + timeoutMs;
      for (;;) {
        const found = requests().find(match);
        if (found) return found;
        const left = end - Date.now();
        if (left <= 0) throw new Error(`no matching event within ${timeoutMs} ms; the stream so far:\n${text}`);
        await pull(left);
      }
    },
    async received(forMs = 0) {
      const end = Date.now() + forMs;
      for (let left = forMs; left > 0; left = end - Date.now()) await pull(left);
      return requests();
    },
    close: () => reader.cancel(),
  };
}

/** A relay with Sign in with Slack on, and the Slack stand-in it signs in with. */
export interface SlackSignInRelay {
  url: string;
  slack: SlackWebApiStandIn;
}

/** Starts a Sign in with Slack: the redirect to Slack's authorize page, followed; the callback URL (on the relay's loopback address) and the state cookie. */
export async function startSlackSignIn(relay: SlackSignInRelay, publicUrl: string) {
  const started = await fetch(`${relay.url}/console/signin/slack`, { redirect: "manual" });
  expect(started.status).toBe(303);
  const authorize = new URL(started.headers.get("location")!);
  expect(authorize.href.startsWith(new URL("/openid/connect/authorize", relay.slack.url).href)).toBe(true);
  expect(Object.fromEntries(authorize.searchParams)).toMatchObject({
    client_id: CLIENT_ID,
    response_type: "code",
    scope: "openid profile",
    redirect_uri: `${publicUrl}/console/signin/slack/callback`,
  });
  const stateCookie = cookieOf(started, "relay_console_signin")!;
  expect(started.headers.getSetCookie().find((c) => c.startsWith("relay_console_signin="))).toMatch(/HttpOnly/i);
  // Slack's authorize page signs the person in and sends the browser back with a code and the state.
  const slack = await fetch(authorize, { redirect: "manual" });
  expect(slack.status).toBe(302);
  return { callback: slack.headers.get("location")!.replace(publicUrl, relay.url), stateCookie };
}

/** The whole Sign in with Slack as `person`: a caller for the console API with the session's cookie and CSRF token. */
export async function signInWithSlack(relay: SlackSignInRelay, publicUrl: string, person: { id: string; name: string }) {
  relay.slack.openId.signInAs({ ...person, teamId: "T0TEAM" });
  const { callback, stateCookie } = await startSlackSignIn(relay, publicUrl);
  const back = await fetch(callback, { headers: { cookie: stateCookie }, redirect: "manual" });
  expect(back.status).toBe(303);
  expect(back.headers.get("location")).toBe("/console");
  return consoleCaller(relay.url, cookieOf(back, "relay_console")!);
}

/** The session of `cookie` and a caller that sends it with Origin and the CSRF token (a body → POST). */
export async function consoleCaller(url: string, cookie: string) {
  const session = (await (await fetch(`${url}/console/api/session`, { headers: { cookie } })).json()) as { csrf: string; person: unknown; role: string };
  const call = (path: string, body?: unknown) =>
    fetch(`${url}${path}`, {
      method: body === undefined ? "GET" : "POST",
      headers: { cookie, origin: url, "x-csrf-token": session.csrf, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  return { session, call, cookie };
}

/** Debian's Chromium, which the browser tests drive with playwright-core (.ci/run installs it when missing). */
export const CHROMIUM = "/usr/bin/chromium";

/** Headless Chromium with no background networking (this machine's closed network refuses it), as the browser tests start it. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
  });
}

/** The relay as `npm start` runs it with no Slack settings, and the sign-in link it printed. */
export interface LocalRelay {
  /** http://127.0.0.1:<port> */
  url: string;
  /** The single-use sign-in link from the start log. */
  link: string;
  /** Stops the relay (SIGTERM to its process group) and removes its state directory. */
  stop(): Promise<void>;
}

/** Starts `npm start` in local mode on `port` (built first), with its own state directory and `env` added. */
export async function startLocalRelay(port: number, env: Record<string, string>): Promise<LocalRelay> {
  const built = spawnSync(process.execPath, ["--import", "./scripts/ensure-build.mjs", "-e", ""], { cwd: ROOT, encoding: "utf8" });
  if (built.status !== 0) throw new Error(`npm run build failed:\n${built.stderr}`);
  const stateHome = mkdtempSync(join(tmpdir(), "console-local-"));
  const child = spawn("npm", ["start"], {
    cwd: ROOT,
    detached: true,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? tmpdir(), PORT: String(port), XDG_STATE_HOME: stateHome, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
  child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
  const stop = async () => {
    if (child.pid && child.exitCode === null) {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      process.kill(-child.pid, "SIGTERM");
      await exited;
    }
    // npm exits at once; the relay it started (same process group) may take its shutdown grace. Never leave it running.
    if (child.pid) await groupGone(child.pid, 15_000);
    rmSync(stateHome, { recursive: true, force: true });
  };
  try {
    await until(() => /\/console\/signin#/.test(output), 30_000, `the sign-in link; output:\n${output}`);
  } catch (error) {
    await stop();
    throw error;
  }
  const link = /(https?:\/\/[^\s/]+\/console\/signin#[\w-]+)/.exec(output)![1]!;
  return { url: `http://127.0.0.1:${port}`, link, stop };
}

/** Waits until no process of group `pgid` is left, then kills what is (SIGKILL) once `ms` have passed. */
async function groupGone(pgid: number, ms: number): Promise<void> {
  const alive = () => {
    try {
      process.kill(-pgid, 0);
      return true;
    } catch {
      return false;
    }
  };
  const deadline = Date.now() + ms;
  while (alive() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
  if (alive()) process.kill(-pgid, "SIGKILL");
}
