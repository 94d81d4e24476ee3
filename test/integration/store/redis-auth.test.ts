/**
 * REDIS_URL with a password, an ACL user and TLS (issue 10 item 4), each
 * against a redis-server of the test's own (own port and dir, and for TLS a
 * CA and certificate made by the test), the whole relay as `serve` runs it:
 * the relay signs in and takes and answers requests; a wrong password, a
 * missing one, an unknown CA or a host the certificate does not name stop
 * the start with one line naming REDIS_URL; and no password ever reaches
 * the log.
 */
import { afterEach, describe, expect, it } from "vitest";
import { makeCertificates, type Certificates } from "../../helpers/certificates.js";
import { createAndAnswer, startFailure, startFullRelay, type FullRelay } from "../../helpers/full-relay.js";
import { freePort } from "../../helpers/ports.js";
import { relayAclUser, startRedisServer, type RedisServer } from "../../helpers/redis-server.js";

const PASSWORD = "relay-pw-9f3c1a7e";
const WRONG = "wrong-pw-5d2b8c41";
let server: RedisServer | undefined;
let relay: FullRelay | undefined;
let certificates: Certificates | undefined;
afterEach(async () => {
  await relay?.close();
  await server?.stop();
  certificates?.remove();
  server = relay = certificates = undefined;
});

const SECRETS = new RegExp(`${PASSWORD}|${WRONG}`);
const startLine = (env: Record<string, string>) => startFailure(env, SECRETS);

describe("a password and an ACL user in REDIS_URL", () => {
  it("with requirepass: the right password signs in; a wrong or missing one stops the start with one line naming REDIS_URL, without the password", async () => {
    server = await startRedisServer(undefined, { args: ["--requirepass", PASSWORD] });
    const at = `127.0.0.1:${server.port}`;
    expect(await startLine({ REDIS_URL: `redis://:${WRONG}@${at}` })).toMatch(
      new RegExp(
        `^REDIS_URL: Redis at ${at} refused the relay \\(WRONGPASS invalid username-password pair or user is disabled\\.\\): check the user and password in the URL`,
      ),
    );
    expect(await startLine({ REDIS_URL: `redis://${at}` })).toMatch(new RegExp(`^REDIS_URL: Redis at ${at} refused the relay \\(NOAUTH `));

    relay = await startFullRelay({ env: { REDIS_URL: `redis://:${PASSWORD}@${at}`, REDIS_PREFIX: "auth" } });
    await createAndAnswer(relay);
    expect(relay.logs.join("\n")).not.toContain(PASSWORD);
  });

  it("an ACL user limited to the relay's prefix (its keys and its channel) is all the relay needs; a wrong user's password stops the start", async () => {
    server = await startRedisServer(undefined, { args: ["--user", "default", "off", ...relayAclUser("acl", PASSWORD)] });
    const at = `127.0.0.1:${server.port}`;
    expect(await startLine({ REDIS_URL: `redis://relay:${WRONG}@${at}` })).toMatch(/^REDIS_URL: Redis at .* refused the relay \(WRONGPASS /);

    relay = await startFullRelay({ env: { REDIS_URL: `redis://relay:${PASSWORD}@${at}`, REDIS_PREFIX: "acl" } });
    await createAndAnswer(relay);
    const log = relay.logs.join("\n");
    expect(log).not.toContain(PASSWORD);
    expect(log).not.toContain("NOPERM");
  });
});

describe("rediss:// (TLS)", () => {
  /** A TLS-only redis-server with a password, its certificate for `localhost` only, signed by a CA of the test's own. */
  async function tlsServer(): Promise<string> {
    certificates = makeCertificates(["localhost"]);
    const port = await freePort();
    const { certFile, keyFile, caFile } = certificates;
    const tls = ["--port", "0", "--tls-port", String(port), "--tls-cert-file", certFile, "--tls-key-file", keyFile, "--tls-ca-cert-file", caFile];
    server = await startRedisServer(undefined, { port, args: [...tls, "--tls-auth-clients", "no", "--requirepass", PASSWORD] });
    return `${PASSWORD}@localhost:${port}`;
  }

  it("trusting the CA of REDIS_TLS_CA_FILE, the relay signs in over TLS and takes and answers requests", async () => {
    const at = await tlsServer();
    relay = await startFullRelay({ env: { REDIS_URL: `rediss://:${at}`, REDIS_TLS_CA_FILE: certificates!.caFile, REDIS_PREFIX: "tls" } });
    await createAndAnswer(relay);
    expect(relay.logs.join("\n")).not.toContain(PASSWORD);
  });

  it("without the CA, or to a host the certificate does not name, the start stops with one line saying what to fix", async () => {
    const at = await tlsServer();
    const fix = "set REDIS_TLS_CA_FILE to the CA that signed its certificate, and name the host its certificate names";
    expect(await startLine({ REDIS_URL: `rediss://:${at}` })).toMatch(
      new RegExp(`^REDIS_URL: the TLS handshake with Redis at localhost:\\d+ failed \\(.+\\): ${fix}$`),
    );
    const byIp = `rediss://:${at.replace("localhost", "127.0.0.1")}`;
    expect(await startLine({ REDIS_URL: byIp, REDIS_TLS_CA_FILE: certificates!.caFile })).toMatch(
      /^REDIS_URL: the TLS handshake with Redis at 127\.0\.0\.1:\d+ failed \(Hostname\/IP does not match certificate's altnames: .*\)/,
    );
  });
});
