/**
 * `npm start` as a developer or an operator runs it: with the build current
 * it starts the built relay at once (no TypeScript build on the way), and
 * when the sources changed since the last build it builds first, so an edit
 * is never silently ignored (scripts/ensure-build.mjs, scripts/build-stamp.mjs);
 * and the bundle it runs works.
 */
import { spawn, spawnSync } from "node:child_process";
import { readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BuildProject, recordingBuild } from "../../helpers/build-project.js";
import { Action } from "../../../src/slack/ids.js";
import { buttonValue } from "../../helpers/full-relay.js";
import { freePort } from "../../helpers/ports.js";
import { connectTestRedis, deleteKeysUnder, REDIS_TEST_URL, uniquePrefix } from "../../helpers/redis.js";
import { blockAction, BOT_TOKEN, CHANNEL, postToSlackEndpoint, SIGNING_SECRET } from "../../helpers/slack.js";
import { startSlackWebApi, type SlackWebApiStandIn } from "../../helpers/slack-web-api.js";
import { startSocketModeServer } from "../../helpers/socket-mode-server.js";
import { until } from "../../helpers/until.js";

const root = fileURLToPath(new URL("../../..", import.meta.url));

describe("npm start", () => {
  let slack: SlackWebApiStandIn;
  beforeAll(async () => {
    // What `npm start` itself would do first when src/ changed since the last build (a developer
    // running the tests after an edit): build, so the test below measures a start with a current build.
    const built = spawnSync(process.execPath, ["--import", "./scripts/ensure-build.mjs", "-e", ""], { cwd: root, encoding: "utf8" });
    if (built.status !== 0) throw new Error(`npm run build failed:\n${built.stderr}`);
    slack = await startSlackWebApi({ botToken: "xoxb-1-npm-start" });
  }, 300_000);
  afterAll(async () => {
    await slack.close();
  });

  it("with the build current, reaches a healthy /healthz within 5 s and builds nothing", async () => {
    const port = await freePort();
    const started = Date.now();
    const child = spawn("npm", ["start"], {
      cwd: root,
      // A group of its own (npm → sh → node) so the whole start can be stopped; only what the relay reads.
      detached: true,
      env: {
        PATH: process.env.PATH ?? "",
        HOME: process.env.HOME ?? tmpdir(),
        SLACK_BOT_TOKEN: "xoxb-1-npm-start",
        SLACK_SIGNING_SECRET: "0f9e8d7c6b5a49382716a5b4c3d2e1f0",
        SLACK_API_URL: slack.url,
        RELAY_TOKENS: "ci:tok_npm_start_0123456789",
        PORT: String(port),
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
    child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
    const exited = new Promise((resolve) => child.once("exit", resolve));
    try {
      await until(
        () =>
          fetch(`http://127.0.0.1:${port}/healthz`).then(
            (r) => r.ok,
            () => false,
          ),
        20_000,
        `/healthz; output:\n${output}`,
      );
      const elapsed = Date.now() - started;
      expect(output).not.toMatch(/building/);
      expect(elapsed, `start → healthy took ${elapsed} ms`).toBeLessThan(5000);
    } finally {
      process.kill(-child.pid!, "SIGTERM");
      await exited;
    }
  });
});

describe("npm start's build check", () => {
  let project: BuildProject;
  beforeAll(() => {
    project = new BuildProject(["scripts/build-stamp.mjs", "scripts/ensure-build.mjs"]);
  });
  afterAll(() => project.remove());
  const builtAt = (buildScript: string) => project.builtAt(buildScript);
  const start = () =>
    spawnSync(process.execPath, ["--import", "./scripts/ensure-build.mjs", "-e", "process.stdout.write('relay started')"], {
      cwd: project.dir,
      encoding: "utf8",
    });

  it("when nothing changed since the build, it starts without building", () => {
    builtAt(recordingBuild);
    const result = start();
    expect(result.stdout).toBe("relay started");
    expect(result.stderr).toBe("");
    expect(project.built).toBe(false);
  });

  it("when a source file changed since the build, it builds first, then starts", () => {
    builtAt(recordingBuild);
    project.touchSource();
    const result = start();
    expect(result.stderr).toContain("npm start: building approval-relay once (src/ changed since the last build; npm run build, about half a minute)…");
    expect(project.built).toBe(true);
    expect(result.stdout).toBe("relay started");
  });

  it("when a source file was added or removed since the build, it builds first", () => {
    builtAt(recordingBuild);
    rmSync(join(project.dir, "src", "store", "store.ts"));
    const result = start();
    expect(project.built).toBe(true);
    expect(result.stdout).toBe("relay started");
  });

  it("when there is no complete build, it builds first", () => {
    builtAt(recordingBuild);
    project.removeStamp();
    const result = start();
    expect(result.stderr).toContain("npm start: building approval-relay once (no complete build in dist/; npm run build, about half a minute)…");
    expect(project.built).toBe(true);
  });

  it("when the build fails, it does not start and says how to start what is built anyway", () => {
    builtAt("process.exit(2);\n");
    project.touchSource();
    const result = start();
    expect(result.status).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).toContain(
      "npm start: the build failed (see above); fix the errors, or run what is in dist/ anyway with `node dist/cli/main.js serve`.",
    );
  });
});

/**
 * The bundled relay (dist/bundle/approval-relay.js, scripts/bundle.mjs: what
 * `npm start` and the Docker image run) does what the tsc build does, with
 * the parts a bundle can break exercised: Bolt's Web API client and HTTP
 * receiver, the Redis store's Lua scripts (read from files next to the code),
 * the lazily loaded chunks (Redis store, OpenAPI document) and a clean stop.
 * In this file so that one build serves both.
 */
/** The bundle as the Docker image starts it, with only PATH and `env` in its environment; its output collected. */
function spawnBundle(env: Record<string, string>) {
  const child = spawn(process.execPath, ["dist/bundle/approval-relay.js", "serve"], {
    cwd: root,
    env: { PATH: process.env.PATH ?? "", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
  child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
  return { child, exited, output: () => output };
}

describe("the bundled relay npm start runs", () => {
  const TOKEN = "tok_bundle_0123456789abcdef";
  const prefix = uniquePrefix();
  let slack: SlackWebApiStandIn;

  beforeAll(async () => {
    // What `npm start` does first when src/ changed since the last build.
    const built = spawnSync(process.execPath, ["--import", "./scripts/ensure-build.mjs", "-e", ""], { cwd: root, encoding: "utf8" });
    if (built.status !== 0) throw new Error(`npm run build failed:\n${built.stderr}`);
    slack = await startSlackWebApi();
  }, 300_000);
  afterAll(async () => {
    await slack.close();
    const redis = connectTestRedis();
    await deleteKeysUnder(redis, prefix);
    await redis.quit();
  });

  it("serves the agent API on Redis, posts to Slack, takes a signed click, serves /openapi.json and stops cleanly on SIGTERM", async () => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const { child, exited, output } = spawnBundle({
      SLACK_BOT_TOKEN: BOT_TOKEN,
      SLACK_SIGNING_SECRET: SIGNING_SECRET,
      SLACK_API_URL: slack.url,
      SLACK_DEFAULT_CHANNEL: CHANNEL,
      RELAY_TOKENS: `ci:${TOKEN}`,
      REDIS_URL: REDIS_TEST_URL,
      REDIS_PREFIX: prefix,
      PORT: String(port),
    });
    const agent = (path: string, init: RequestInit = {}) =>
      fetch(url + path, { ...init, headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json", ...init.headers } });
    try {
      await until(
        () =>
          fetch(`${url}/readyz`).then(
            (r) => r.ok,
            () => false,
          ),
        15_000,
        () => `/readyz; output:\n${output()}`,
      );

      const created = await agent("/v1/requests", {
        method: "POST",
        body: JSON.stringify({ kind: "step_gate", toolName: "Bash", input: { command: "make deploy" } }),
      });
      expect(created.status).toBe(201);
      const { id } = (await created.json()) as { id: string };
      const { args } = await slack.waitFor("chat.postMessage");
      expect(args.channel).toBe(CHANNEL);

      const value = buttonValue(args.blocks, Action.stepYes);
      const click = await postToSlackEndpoint(
        `${url}/slack/events`,
        blockAction({ actionId: Action.stepYes, value, ts: String(args.ts), triggerId: "trigger-bundle" }),
      );
      expect(click.status).toBe(200);
      const answered = await agent(`/v1/requests/${id}?wait=10`);
      expect(await answered.json()).toMatchObject({ id, status: "answered", decision: { reply: "y" } });

      const openapi = await fetch(`${url}/openapi.json`);
      expect(openapi.status).toBe(200);
      expect(((await openapi.json()) as { openapi: string }).openapi).toBe("3.1.0");
      expect(slack.problems).toEqual([]);
    } finally {
      child.kill("SIGTERM");
    }
    expect(await exited, output()).toBe(0);
    expect(output()).not.toMatch(/"level":"(error|fatal)"/);
  });

  // Bolt's index requires every receiver, and with them Express and @slack/socket-mode (with its own undici): 1.7 MB of
  // the main chunk an HTTP-mode relay never runs, about 2 MB of its idle heap. The bundle requires them on first use.
  it("requires Bolt's Express, Socket Mode and Lambda receivers only when read", () => {
    const dir = join(root, "dist", "bundle");
    const main = readdirSync(dir).find((name) => /^main-\w+\.js$/.test(name));
    const text = readFileSync(join(dir, main!), "utf8");
    for (const receiver of ["ExpressReceiver", "SocketModeReceiver", "AwsLambdaReceiver"]) {
      expect(text).toContain(`Object.defineProperty(exports, "${receiver}", { enumerable: true, get: () => __importDefault(require_${receiver}()).default });`);
      expect(text).not.toMatch(new RegExp(`= __importDefault\\(require_${receiver}\\(\\)\\)`));
    }
  });

  it("in Socket Mode, loads Bolt's socket receiver when it starts and connects", async () => {
    const standIn = await startSocketModeServer({ botToken: BOT_TOKEN });
    const port = await freePort();
    const { child, exited, output } = spawnBundle({
      SLACK_BOT_TOKEN: BOT_TOKEN,
      SLACK_APP_TOKEN: "xapp-1-A0BUNDLE-test",
      SLACK_API_URL: standIn.url,
      RELAY_TOKENS: "ci:tok_bundle_socket_0123456789",
      PORT: String(port),
    });
    try {
      await Promise.race([standIn.connected(), exited.then(() => Promise.reject(new Error(`the relay exited:\n${output()}`)))]);
      await until(
        () => /"msg":"slack socket mode connected"/.test(output()),
        15_000,
        () => `connected; output:\n${output()}`,
      );
    } finally {
      child.kill("SIGTERM");
    }
    expect(await exited, output()).toBe(0);
    await standIn.close();
  });

  // V8 keeps every loaded script's source for the life of the process, two bytes a character as soon as one character
  // is past Latin-1: one curly quote in a dependency's comment made the 5.3 MB main chunk 10.6 MB of heap (scripts/bundle.mjs).
  it("is ASCII only, so V8 holds each chunk's source at one byte a character", () => {
    const dir = join(root, "dist", "bundle");
    const chunks = readdirSync(dir).filter((name) => name.endsWith(".js"));
    expect(chunks.length).toBeGreaterThan(1);
    const notAscii = chunks.filter((name) => /[\u0080-\uffff]/.test(readFileSync(join(dir, name), "utf8")));
    expect(notAscii).toEqual([]);
  });
});
