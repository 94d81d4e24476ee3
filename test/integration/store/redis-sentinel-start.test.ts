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
import { makeCertificates, type Certificates } from "../../helpers/certificates.js";
import { createAndAnswer, startFailure, startFullRelay, type FullRelay } from "../../helpers/full-relay.js";
import { MASTER_NAME, startSentinelGroup, type SentinelGroup } from "../../helpers/redis-sentinel.js";
import { relayAclUser } from "../../helpers/redis-server.js";

const MASTER_PASSWORD = "master-pw-41c9e2";
const RELAY_PASSWORD = "relay-pw-7b02fd";
const SENTINEL_PASSWORD = "sentinel-pw-c83a15";
const SECRETS = new RegExp(`${MASTER_PASSWORD}|${RELAY_PASSWORD}|${SENTINEL_PASSWORD}|wrong-pw`);

let group: SentinelGroup | undefined;
let relay: FullRelay | undefined;
let certificates: Certificates | undefined;
afterEach(async () => {
  await relay?.close();
  await group?.stop();
  certificates?.remove();
  group = relay = certificates = undefined;
});

describe("the start on Sentinel", () => {
  it("a master name no sentinel knows stops the start at once, naming REDIS_SENTINEL_NAME and the sentinels asked", async () => {
    group = await startSentinelGroup();
    const started = Date.now();
    const line = await startFailure({ ...group.env, REDIS_SENTINEL_NAME: "no-such-master" }, SECRETS);
    expect(line).toBe(
      `REDIS_SENTINEL_NAME is invalid: no sentinel knows a master named "no-such-master" (asked 127.0.0.1:${group.sentinel.port}); use the name of their \`sentinel monitor <name> …\` line`,
    );
    expect(Date.now() - started).toBeLessThan(3_000);
  });

  it(
    "with the sentinels' password and the master's ACL user, the relay signs in to both and answers requests; a wrong or missing password stops the start with one line naming its variable",
    { timeout: 40_000 },
    async () => {
      group = await startSentinelGroup({
        serverArgs: ["--requirepass", MASTER_PASSWORD, "--masterauth", MASTER_PASSWORD, ...relayAclUser("sauth", RELAY_PASSWORD)],
        sentinelConfig: [`requirepass ${SENTINEL_PASSWORD}`, `sentinel auth-pass ${MASTER_NAME} ${MASTER_PASSWORD}`],
        serverAuth: { password: MASTER_PASSWORD },
        sentinelAuth: { password: SENTINEL_PASSWORD },
      });
      const env = { ...group.env, REDIS_PREFIX: "sauth", REDIS_USERNAME: "relay", REDIS_PASSWORD: RELAY_PASSWORD, REDIS_SENTINEL_PASSWORD: SENTINEL_PASSWORD };

      expect(await startFailure({ ...env, REDIS_PASSWORD: "wrong-pw" }, SECRETS)).toMatch(
        /^REDIS_PASSWORD: the master "relaymaster" refused the relay \(WRONGPASS invalid username-password pair or user is disabled\.\): check REDIS_USERNAME and REDIS_PASSWORD/,
      );
      const { REDIS_SENTINEL_PASSWORD: _omitted, ...withoutSentinelPassword } = env;
      expect(await startFailure(withoutSentinelPassword, SECRETS)).toMatch(/^REDIS_SENTINEL_PASSWORD: the sentinels refused the relay \(NOAUTH /);
      expect(await startFailure({ ...env, REDIS_SENTINEL_PASSWORD: "wrong-pw" }, SECRETS)).toMatch(
        /^REDIS_SENTINEL_PASSWORD: the sentinels refused the relay \(WRONGPASS /,
      );

      relay = await startFullRelay({ env });
      await createAndAnswer(relay);
      expect(relay.logs.join("\n")).not.toMatch(SECRETS);
    },
  );

  it("over TLS (REDIS_TLS=true): trusting the CA of REDIS_TLS_CA_FILE, the relay asks the sentinels and signs in to the master over TLS; without it the start stops with one line naming REDIS_TLS", async () => {
    certificates = makeCertificates(["localhost", "IP:127.0.0.1"]);
    group = await startSentinelGroup({ tls: certificates });
    const env = { ...group.env, REDIS_PREFIX: "stls", REDIS_TLS: "true" };
    expect(await startFailure(env, SECRETS)).toMatch(/^REDIS_TLS: the TLS handshake with the sentinels failed \(.+\): set REDIS_TLS_CA_FILE to the CA/);
    relay = await startFullRelay({ env: { ...env, REDIS_TLS_CA_FILE: certificates.caFile } });
    await createAndAnswer(relay);
  });
});
