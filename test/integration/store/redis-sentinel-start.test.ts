/**
 * The relay's start on Sentinel (src/store/redis-probe.ts), against a group
 * of the test's own (helpers/redis-sentinel.ts): a master name no sentinel
 * knows stops it at once with one line naming REDIS_SENTINEL_NAME; with
 * passwords on both sides (the sentinels' own requirepass, an ACL user on
 * the master and its replica) the right ones sign in and the relay takes
 * and answers requests, and a wrong or missing one stops the start with one
 * line naming the variable, never the password.
 */
import { afterEach, describe, expect, it } from "vitest";
import { Action } from "../../../src/slack/ids.js";
import { agentCall, startFullRelay, type FullRelay } from "../../helpers/full-relay.js";
import { sleep } from "../../helpers/redis.js";
import { MASTER_NAME, startSentinelGroup, type SentinelGroup } from "../../helpers/redis-sentinel.js";

const MASTER_PASSWORD = "master-pw-41c9e2";
const RELAY_PASSWORD = "relay-pw-7b02fd";
const SENTINEL_PASSWORD = "sentinel-pw-c83a15";
const SECRETS = new RegExp(`${MASTER_PASSWORD}|${RELAY_PASSWORD}|${SENTINEL_PASSWORD}|wrong-pw`);

let group: SentinelGroup | undefined;
let relay: FullRelay | undefined;
afterEach(async () => {
  await relay?.close();
  await group?.stop();
  group = relay = undefined;
});

/** The start's one line, which must hold no password. */
async function startLine(env: Record<string, string>): Promise<{ line: string; ms: number }> {
  const started = Date.now();
  const error = (await startFullRelay({ env }).then(
    () => expect.unreachable("the relay started"),
    (reason: unknown) => reason,
  )) as Error;
  expect(error.message).not.toContain("\n");
  expect(error.message).not.toMatch(SECRETS);
  return { line: error.message, ms: Date.now() - started };
}

describe("the start on Sentinel", () => {
  it("a master name no sentinel knows stops the start at once, naming REDIS_SENTINEL_NAME and the sentinels asked", async () => {
    group = await startSentinelGroup();
    const { line, ms } = await startLine({ ...group.env, REDIS_SENTINEL_NAME: "no-such-master" });
    expect(line).toBe(
      `REDIS_SENTINEL_NAME is invalid: no sentinel knows a master named "no-such-master" (asked 127.0.0.1:${group.sentinel.port}); use the name of their \`sentinel monitor <name> …\` line`,
    );
    expect(ms).toBeLessThan(3_000);
  });

  it(
    "with the sentinels' password and the master's ACL user, the relay signs in to both and answers requests; a wrong or missing password stops the start with one line naming its variable",
    { timeout: 40_000 },
    async () => {
      group = await startSentinelGroup({
        serverArgs: [
          "--requirepass",
          MASTER_PASSWORD,
          "--masterauth",
          MASTER_PASSWORD,
          "--user",
          "relay",
          "on",
          `>${RELAY_PASSWORD}`,
          "~sauth:*",
          "&sauth:*",
          "+@all",
          "-@dangerous",
          "+info",
        ],
        sentinelConfig: [`requirepass ${SENTINEL_PASSWORD}`, `sentinel auth-pass ${MASTER_NAME} ${MASTER_PASSWORD}`],
        serverAuth: { password: MASTER_PASSWORD },
        sentinelAuth: { password: SENTINEL_PASSWORD },
      });
      const env = { ...group.env, REDIS_PREFIX: "sauth", REDIS_USERNAME: "relay", REDIS_PASSWORD: RELAY_PASSWORD, REDIS_SENTINEL_PASSWORD: SENTINEL_PASSWORD };

      expect((await startLine({ ...env, REDIS_PASSWORD: "wrong-pw" })).line).toMatch(
        /^REDIS_PASSWORD: the master "relaymaster" refused the relay \(WRONGPASS invalid username-password pair or user is disabled\.\): check REDIS_USERNAME and REDIS_PASSWORD/,
      );
      const { REDIS_SENTINEL_PASSWORD: _omitted, ...withoutSentinelPassword } = env;
      expect((await startLine(withoutSentinelPassword)).line).toMatch(/^REDIS_SENTINEL_PASSWORD: the sentinels refused the relay \(NOAUTH /);
      expect((await startLine({ ...env, REDIS_SENTINEL_PASSWORD: "wrong-pw" })).line).toMatch(
        /^REDIS_SENTINEL_PASSWORD: the sentinels refused the relay \(WRONGPASS /,
      );

      relay = await startFullRelay({ env });
      const created = await agentCall(relay.url, "/v1/requests", { body: { kind: "step_gate", toolName: "Bash", input: { command: "make deploy" } } });
      expect(created.status).toBe(201);
      const message = await relay.message(0);
      const held = agentCall(relay.url, `/v1/requests/${String(created.body!.id)}?wait=20`);
      await sleep(100);
      await relay.click(message, Action.stepYes);
      expect(await held).toMatchObject({ status: 200, body: { status: "answered" } });
      expect(relay.errors()).toEqual([]);
      expect(relay.logs.join("\n")).not.toMatch(SECRETS);
    },
  );
});
