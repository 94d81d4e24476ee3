/**
 * `approval-relay serve` (what `npm start` runs), spawned for real: it starts
 * the relay from the environment and stops it cleanly on SIGTERM, and stops
 * the start when the configuration is missing or Slack refuses the bot token.
 * Slack's Web API is a loopback stand-in that accepts everything unless a
 * test says otherwise.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { RelayClient } from "../../../src/client/index.js";
import { freePort } from "../../helpers/ports.js";
import { connectTestRedis, deleteKeysUnder, REDIS_TEST_URL, uniquePrefix } from "../../helpers/redis.js";
import { runCli, startCli } from "../../helpers/cli.js";
import { configFiles } from "../../helpers/config-files.js";
import { until } from "../../helpers/until.js";
import { startSlackWebApi, type SlackWebApiStandIn } from "../../helpers/slack-web-api.js";

const TOKEN = "tok_serve_0123456789abcdef";
const configFile = configFiles("yaml");
let slack: SlackWebApiStandIn;
/** What the Slack stand-in answers to every call. */
let slackReply: Record<string, unknown>;
beforeEach(async () => {
  slackReply = { ok: true, team: "T0TEAM", user: "relay" };
  slack = await startSlackWebApi({ botToken: "xoxb-1-serve-test" });
  slack.answer("auth.test", () => slackReply);
});
afterEach(async () => {
  await slack.close();
});

/** The relay's environment in HTTP mode, Slack's Web API on the stand-in. */
function relayEnv(): Record<string, string> {
  return {
    SLACK_BOT_TOKEN: "xoxb-1-serve-test",
    SLACK_SIGNING_SECRET: "0f9e8d7c6b5a49382716a5b4c3d2e1f0",
    SLACK_API_URL: slack.url,
    RELAY_TOKENS: `ci:${TOKEN}`,
  };
}

async function waitUntilHealthy(url: string): Promise<void> {
  const healthy = () =>
    fetch(`${url}/healthz`).then(
      (r) => r.ok,
      () => false,
    );
  await until(healthy, 15_000, `${url}/healthz to answer`);
}

describe("approval-relay serve", () => {
  it("when started, it serves the agent API until SIGTERM, then stops cleanly with exit 0", async () => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const run = startCli(["serve"], {
      whole: true,
      env: { ...relayEnv(), PORT: String(port) },
    });
    await waitUntilHealthy(url);
    const client = new RelayClient({ url, token: TOKEN, retries: 0 });
    await expect(client.get("no-such-request")).rejects.toMatchObject({ code: "relay_not_found" });
    run.child.kill("SIGTERM");
    const result = await run.done;
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/relay stopped/);
  });

  it("a body over the limit sent by Node's fetch (as the client library sends) gets 413 relay_body_too_large, never a broken pipe", async () => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const run = startCli(["serve"], { whole: true, env: { ...relayEnv(), PORT: String(port), LOG_LEVEL: "warn", RELAY_MAX_BODY: "1MB" } });
    await waitUntilHealthy(url);
    const outcomes: Array<number | string> = [];
    // Up to 16 MB past the limit the relay reads the rest before it answers.
    for (const megabytes of [5, 12, 5, 12, 5, 12]) {
      const body = JSON.stringify({ kind: "permission", toolName: "Bash", input: { command: "x".repeat(megabytes * 1024 * 1024) } });
      const response = await fetch(`${url}/v1/requests`, {
        method: "POST",
        body,
        headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
      }).catch((error: unknown) => String((error as { cause?: { code?: unknown } }).cause?.code ?? error));
      if (typeof response === "string") outcomes.push(response);
      else outcomes.push(response.status, ((await response.json()) as { error: { code: string } }).error.code);
    }
    run.child.kill("SIGTERM");
    await run.done;
    expect(outcomes).toEqual(Array(6).fill([413, "relay_body_too_large"]).flat());
  });

  it("when Slack refuses the bot token, it exits 1 saying to copy the token again, also with Redis connected", async () => {
    slackReply = { ok: false, error: "token_revoked" };
    const prefix = uniquePrefix();
    const result = await runCli(["serve"], {
      whole: true,
      env: { ...relayEnv(), PORT: String(await freePort()), REDIS_URL: REDIS_TEST_URL, REDIS_PREFIX: prefix },
    });
    const redis = connectTestRedis();
    await deleteKeysUnder(redis, prefix);
    await redis.quit();
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      "approval-relay serve: SLACK_BOT_TOKEN was refused by Slack (token_revoked): copy the Bot User OAuth Token again from the app's OAuth & Permissions page",
    );
  });

  it("when its port is in use, it exits 1 with one line naming PORT, logs no success after the failure, and does not linger on a Slack that never answers", async () => {
    // What holds the port is also a "Slack" that takes the bot token check and never answers it.
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
    const port = (taken.address() as AddressInfo).port;
    try {
      const run = startCli(["serve"], { whole: true, env: { ...relayEnv(), PORT: String(port), SLACK_API_URL: `http://127.0.0.1:${port}/api/` } });
      await until(() => run.output.stderr.includes("PORT:"), 20_000, "the PORT line");
      const failedAt = Date.now();
      const result = await run.done;
      // The pending auth.test would hold the process for its own timeout (10 s); a failed start exits at once.
      expect(Date.now() - failedAt).toBeLessThan(3_000);
      expect(result.code).toBe(1);
      expect(result.stderr).toBe(
        `approval-relay serve: PORT: port ${port} is already in use (EADDRINUSE): stop what listens there, or set PORT to a free port\n`,
      );
      expect(result.stdout).not.toMatch(/slack bot token accepted|relay started|could not verify/);
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  });

  it("when nothing listens on the Redis port, it logs the connection at once and exits 1 within the store timeout, with one line naming REDIS_URL", async () => {
    const redisPort = await freePort();
    const run = startCli(["serve"], {
      whole: true,
      env: { ...relayEnv(), PORT: String(await freePort()), REDIS_URL: `redis://127.0.0.1:${redisPort}`, RELAY_STORE_TIMEOUT_MS: "1500" },
    });
    const result = await run.done;
    const ended = Date.now();
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      `approval-relay serve: REDIS_URL: Redis at 127.0.0.1:${redisPort} did not answer within 1.5 s (connect ECONNREFUSED 127.0.0.1:${redisPort}): check the address, and that Redis runs and accepts this host\n`,
    );
    const connecting = result.stdout
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { msg: string; time: string; redis?: string; waitMs?: number })
      .find((entry) => entry.msg === "connecting to Redis");
    expect(connecting).toMatchObject({ redis: `127.0.0.1:${redisPort}`, waitMs: 1500 });
    // From the line to the process's end: the wait, plus the exit (under load).
    expect(ended - Date.parse(connecting!.time)).toBeLessThan(1500 + 1500);
    expect(result.stdout).not.toMatch(/slack bot token accepted|relay started/);
  });

  it("when the configuration is missing, it exits 1 with a message naming the variable", async () => {
    const result = await runCli(["serve"], { whole: true, env: { SLACK_APP_TOKEN: "xapp-1-A0123456789-1234567890123-abcdef0123456789" } });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/SLACK_BOT_TOKEN is missing/);
  });

  it("when RELAY_CONSOLE_SESSION_TTL is no lifetime, it exits 1 before listening, with one line naming it and saying how to write one", async () => {
    const port = await freePort();
    const result = await runCli(["serve"], { whole: true, env: { ...relayEnv(), PORT: String(port), RELAY_CONSOLE_SESSION_TTL: "forever" } });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^approval-relay serve: RELAY_CONSOLE_SESSION_TTL is invalid: .*such as 12h, from 5m to 30d\n$/);
  });

  it("when the config file holds a misspelt key (METRICS_TOKN), it exits 1 before listening, with one line naming it and the key meant", async () => {
    const port = await freePort();
    const file = configFile(`METRICS_TOKN: metrics-scraper-0123456789abcdef\nLOG_LEVEL: warn\n`);
    const result = await runCli(["serve"], {
      whole: true,
      env: { ...relayEnv(), PORT: String(port), RELAY_CONFIG_FILE: file },
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe("approval-relay serve: RELAY_CONFIG_FILE is invalid: METRICS_TOKN: is not a known key (did you mean METRICS_TOKEN?)\n");
    expect(result.stdout).not.toContain("metrics-scraper");
  });
});
