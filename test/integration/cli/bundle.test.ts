/**
 * The bundled relay (dist/bundle/approval-relay.js, scripts/bundle.mjs: what
 * `npm start` and the Docker image run) does what the tsc build does, with
 * the parts a bundle can break exercised: Bolt's Web API client and HTTP
 * receiver, the Redis store's Lua scripts (read from files next to the code),
 * the lazily loaded chunks (Redis store, OpenAPI document) and a clean stop.
 */
import { spawn, spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, expect, it } from "vitest";
import { Action } from "../../../src/slack/ids.js";
import { buttonValue } from "../../helpers/full-relay.js";
import { freePort } from "../../helpers/ports.js";
import { connectTestRedis, deleteKeysUnder, REDIS_TEST_URL, uniquePrefix, until } from "../../helpers/redis.js";
import { blockAction, BOT_TOKEN, CHANNEL, postToSlackEndpoint, SIGNING_SECRET } from "../../helpers/slack.js";
import { startSlackWebApi, type SlackWebApiStandIn } from "../../helpers/slack-web-api.js";

const root = fileURLToPath(new URL("../../../", import.meta.url));
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
  const child = spawn(process.execPath, ["dist/bundle/approval-relay.js", "serve"], {
    cwd: root,
    env: {
      PATH: process.env.PATH ?? "",
      SLACK_BOT_TOKEN: BOT_TOKEN,
      SLACK_SIGNING_SECRET: SIGNING_SECRET,
      SLACK_API_URL: slack.url,
      SLACK_DEFAULT_CHANNEL: CHANNEL,
      RELAY_TOKENS: `ci:${TOKEN}`,
      REDIS_URL: REDIS_TEST_URL,
      REDIS_PREFIX: prefix,
      PORT: String(port),
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
  child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
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
      `/readyz; output:\n${output}`,
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
  expect(await exited, output).toBe(0);
  expect(output).not.toMatch(/"level":"(error|fatal)"/);
});
