/**
 * `approval-relay serve` in Socket Mode, spawned for real, when Slack
 * misbehaves: a Slack that accepts connections and never answers, one that
 * answers auth.test but never opens a socket, and one that refuses the app
 * token. The relay must say what is wrong, report it on /readyz, and stop on
 * SIGTERM within its shutdown grace whatever Slack is doing; a second signal
 * stops it at once.
 */
import { createServer as createTcpServer, type Socket } from "node:net";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { freePort } from "../../helpers/ports.js";
import { startCli, type CliRun } from "../../helpers/cli.js";
import { startSocketModeServer } from "../../helpers/socket-mode-server.js";
import { BOT_TOKEN, CHANNEL, MESSAGE_TS } from "../../helpers/slack.js";
import { until } from "../../helpers/until.js";
import { startSlackWebApi } from "../../helpers/slack-web-api.js";

const TOKEN = "tok_socket_0123456789abcdef";
const APP_TOKEN = "xapp-1-A0RELAY-test";
const GRACE_SECONDS = 2;

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

/** A TCP server that accepts every connection and never says a word; its URL as SLACK_API_URL. */
async function silentSlack(): Promise<string> {
  const sockets = new Set<Socket>();
  const server = createTcpServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.resume();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  cleanups.push(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/`;
}

/** A Web API that answers each method with `reply(method)`, or never when it returns undefined. */
async function slackWebApi(reply: (method: string) => Record<string, unknown> | undefined): Promise<string> {
  const slack = await startSlackWebApi();
  slack.answer("*", (_args, call) => reply(call.method) ?? "hang");
  cleanups.push(() => slack.close());
  return slack.url;
}

async function serve(slackApiUrl: string, extra: Record<string, string> = {}): Promise<{ run: CliRun; url: string; output: () => string }> {
  const port = await freePort();
  const run = startCli(["serve"], {
    whole: true,
    env: {
      SLACK_BOT_TOKEN: BOT_TOKEN,
      SLACK_APP_TOKEN: APP_TOKEN,
      SLACK_API_URL: slackApiUrl,
      RELAY_TOKENS: `ci:${TOKEN}`,
      RELAY_SHUTDOWN_GRACE: String(GRACE_SECONDS),
      PORT: String(port),
      ...extra,
    },
  });
  let output = "";
  run.child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
  cleanups.push(async () => {
    if (run.child.exitCode === null) run.child.kill("SIGKILL");
    await run.done;
  });
  return { run, url: `http://127.0.0.1:${port}`, output: () => output };
}

const answers = (url: string) =>
  fetch(`${url}/healthz`).then(
    (r) => r.ok,
    () => false,
  );

/** Sends SIGTERM and resolves with the exit code and how long the process took to exit (ms). */
async function terminate(run: CliRun, signal: NodeJS.Signals = "SIGTERM"): Promise<{ code: number | null; ms: number; stderr: string }> {
  const sent = Date.now();
  run.child.kill(signal);
  const result = await run.done;
  return { code: result.code, ms: Date.now() - sent, stderr: result.stderr };
}

describe("approval-relay serve in Socket Mode", () => {
  it("when Slack accepts connections and never answers, SIGTERM during the start stops the relay within the grace, exit 0", async () => {
    const { run, url, output } = await serve(await silentSlack());
    await until(() => answers(url), 20_000, "the relay to listen");

    const stopped = await terminate(run);

    expect(stopped.code).toBe(0);
    expect(stopped.ms).toBeLessThan(GRACE_SECONDS * 1000);
    expect(stopped.stderr).toBe("");
    expect(output()).not.toMatch(/relay started|slack bot token accepted/);
  });

  it("when Slack answers auth.test but never opens the socket, the relay starts, /readyz says why with 503, the log says it retries with backoff, and SIGTERM stops it within the grace", async () => {
    const slackApiUrl = await slackWebApi((method) => (method === "auth.test" ? { ok: true, team: "Acme", team_id: "T0TEAM", user: "relay" } : undefined));
    const { run, url, output } = await serve(slackApiUrl);
    await until(() => /"msg":"relay started"/.test(output()), 20_000, "relay started");

    const ready = await fetch(`${url}/readyz`);
    expect(ready.status).toBe(503);
    const body = (await ready.json()) as { reasons: string[] };
    expect(body.reasons).toEqual([expect.stringMatching(/^slack: the Socket Mode connection is down \(.+\); retrying with backoff, next attempt in \d+ s$/)]);
    expect(output()).toMatch(/"msg":"slack socket mode is not connected: retrying with backoff"/);
    expect(output().indexOf("retrying with backoff")).toBeLessThan(output().indexOf('"msg":"relay started"'));

    const stopped = await terminate(run);
    expect(stopped.code).toBe(0);
    expect(stopped.ms).toBeLessThan(GRACE_SECONDS * 1000 + 2000);
    expect(output()).toMatch(/relay stopped/);
  });

  it("when Slack refuses the app token, it exits 1 with one line naming SLACK_APP_TOKEN and how to make one", async () => {
    const slackApiUrl = await slackWebApi((method) =>
      method === "auth.test" ? { ok: true, team: "Acme", team_id: "T0TEAM", user: "relay" } : { ok: false, error: "invalid_auth" },
    );
    const { run, output } = await serve(slackApiUrl);
    const result = await run.done;

    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      "approval-relay serve: SLACK_APP_TOKEN was refused by Slack (invalid_auth): create an app-level token with the connections:write scope (the app's Basic Information page → App-Level Tokens → Generate Token and Scopes) and set SLACK_APP_TOKEN to it (xapp-…), or unset SLACK_APP_TOKEN for HTTP mode\n",
    );
    expect(output()).not.toMatch(/relay started/);
  });

  it("once connected, /readyz is 200; while a long-poll is held, a second signal after SIGTERM exits at once", async () => {
    const standIn = await startSocketModeServer();
    standIn.answer("chat.postMessage", () => ({ ok: true, channel: CHANNEL, ts: MESSAGE_TS }));
    cleanups.push(() => standIn.close());
    const { run, url, output } = await serve(standIn.url, { RELAY_SHUTDOWN_GRACE: "60" });
    await until(() => /"msg":"relay started"/.test(output()), 20_000, "relay started");
    expect(output()).toMatch(/"msg":"slack socket mode connected"/);
    expect((await fetch(`${url}/readyz`)).status).toBe(200);

    const headers = { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" };
    const created = await fetch(`${url}/v1/requests`, {
      method: "POST",
      headers,
      body: JSON.stringify({ kind: "step_gate", toolName: "Bash", input: { command: "ls" }, channel: CHANNEL }),
    });
    const { id } = (await created.json()) as { id: string };
    void fetch(`${url}/v1/requests/${id}?wait=50`, { headers }).catch(() => undefined);
    await until(() => fetch(`${url}/metrics`).then(async (r) => /^relay_waiters 1$/m.test(await r.text())), 5000, "the long-poll to be held");

    run.child.kill("SIGTERM");
    await until(() => /shutting down: no new work/.test(output()), 5000, "the drain to begin");
    const stopped = await terminate(run, "SIGINT");
    expect(stopped.code).toBe(130);
    expect(stopped.ms).toBeLessThan(1000);
  });
});
