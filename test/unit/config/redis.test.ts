/**
 * The Redis variables through loadConfig (src/config/redis.ts): REDIS_URL with
 * its user, password, database and TLS; Sentinel's REDIS_SENTINELS and
 * REDIS_SENTINEL_NAME with the master's and the sentinels' credentials;
 * REDIS_CLUSTER_NODES, seed node URLs with their user, password and TLS;
 * REDIS_TLS_CA_FILE. One line for every bad input, naming the variable and
 * never quoting a value (a URL may carry a password), and the lines the
 * start stops with when the store refuses it or does not answer.
 */
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../../src/config/config.js";
import { redisStartLine, type RedisStartProblem, type RedisTarget } from "../../../src/config/redis.js";
import { configFiles } from "../../helpers/config-files.js";

const base = {
  SLACK_BOT_TOKEN: "xoxb-1234567890-0987654321-AbCdEfGhIjKlMnOpQrStUvWx",
  SLACK_APP_TOKEN: "xapp-1-A0-1-abcdef",
  RELAY_TOKENS: "ci:ci0123456789abcdef0123",
};
const sentinels = { REDIS_SENTINELS: "sentinel-1:26379, 10.0.0.7:26380,[fd00::7]:26381", REDIS_SENTINEL_NAME: "relay-master" };
const PASSWORD = "pa55-w0rd_never-shown";
const file = configFiles("yaml");
const PEM = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";

const redisOf = (env: Record<string, string>) => loadConfig({ ...base, ...env }).redis;

function lineFor(env: Record<string, string>): string {
  try {
    loadConfig({ ...base, ...env });
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    const { message } = error as ConfigError;
    expect(message).not.toContain("\n");
    expect(message).not.toContain(PASSWORD);
    return message;
  }
  throw new Error("loadConfig accepted the environment");
}

describe("REDIS_URL", () => {
  it.each([
    ["redis://cache.internal", { address: { host: "cache.internal", port: 6379 }, db: 0 }],
    ["redis://cache.internal:6380/", { address: { host: "cache.internal", port: 6380 }, db: 0 }],
    [`redis://:${PASSWORD}@10.0.0.5/4`, { address: { host: "10.0.0.5", port: 6379 }, db: 4, password: PASSWORD }],
    [`rediss://relay:${encodeURIComponent("p@ss:w/rd")}@cache.internal:6380/2`, { username: "relay", password: "p@ss:w/rd", db: 2, tls: {} }],
    ["redis://[::1]:6379", { address: { host: "::1", port: 6379 } }],
  ])("reads %s: host, port, database, user and password (decoded), TLS for rediss://", (url, expected) => {
    expect(redisOf({ REDIS_URL: url })).toMatchObject({ mode: "single", ...expected });
  });

  const NOT_REDIS = "its scheme is not redis:// (or rediss:// for TLS)";
  const QUERY = "it has a query or a fragment (?… or #…), and every option has a variable of its own";
  it.each([
    ["http://cache.internal:6379", NOT_REDIS],
    ["cache.internal:6379", NOT_REDIS],
    ["redis://", "it names no host"],
    ["redis://cache.internal?family=6", QUERY],
    ["redis://cache.internal/zero", "its path is not a database number (/0 to /9999)"],
    ["redis://cache.internal:65536", "it is not a valid URL (a port is 1 to 65535; percent-encode a password's special characters)"],
    [`redis://relay@cache.internal`, "it names a user without a password (redis://user:password@host)"],
    [`redis://relay:${PASSWORD}@cache.internal/1#x`, QUERY],
  ])("refuses %s in one line saying which rule it broke and which forms it takes, never the URL", (url, rule) => {
    expect(lineFor({ REDIS_URL: url })).toBe(
      `REDIS_URL is invalid: ${rule}; use redis://[user:password@]host[:port][/db] (rediss:// for TLS, redis://:password@host for a password alone), or unset it for the in-memory store`,
    );
  });
});

describe("REDIS_SENTINELS and REDIS_SENTINEL_NAME", () => {
  it("reads the sentinels' host:port list (IPv6 in brackets) and the master's name, with every credential", () => {
    const target = redisOf({
      ...sentinels,
      REDIS_USERNAME: "relay",
      REDIS_PASSWORD: PASSWORD,
      REDIS_TLS: "true",
      REDIS_SENTINEL_USERNAME: "watcher",
      REDIS_SENTINEL_PASSWORD: "sentinel-secret",
    });
    expect(target).toEqual({
      mode: "sentinel",
      sentinels: [
        { host: "sentinel-1", port: 26379 },
        { host: "10.0.0.7", port: 26380 },
        { host: "fd00::7", port: 26381 },
      ],
      name: "relay-master",
      username: "relay",
      password: PASSWORD,
      sentinelUsername: "watcher",
      sentinelPassword: "sentinel-secret",
      tls: {},
    });
  });

  it("without credentials or TLS, has none, and REDIS_TLS=false is plain", () => {
    expect(redisOf({ ...sentinels, REDIS_TLS: "false" })).toEqual({ mode: "sentinel", sentinels: expect.any(Array), name: "relay-master" });
  });

  it("is read from the config file like every variable (REDIS_TLS quoted: the file's values are strings or numbers)", () => {
    const path = file(`REDIS_SENTINELS: "s1:26379"\nREDIS_SENTINEL_NAME: relay-master\nREDIS_PASSWORD: "${PASSWORD}"\nREDIS_TLS: "true"\n`);
    expect(redisOf({ RELAY_CONFIG_FILE: path })).toMatchObject({ mode: "sentinel", sentinels: [{ host: "s1", port: 26379 }], password: PASSWORD, tls: {} });
  });

  it.each([
    "sentinel-1",
    "sentinel-1:port",
    "sentinel-1:26379,sentinel-2",
    "sentinel-1:0",
    "sentinel-1:65536",
    "[fd00::7:26379",
    "user@sentinel-1:26379",
    " , ",
  ])("refuses the malformed list %j in one line naming REDIS_SENTINELS", (list) => {
    expect(lineFor({ ...sentinels, REDIS_SENTINELS: list })).toMatch(/^REDIS_SENTINELS is invalid: list the sentinels as comma-separated host:port pairs/);
  });

  it.each([
    ["REDIS_SENTINEL_NAME", "relay master", "sentinel monitor <name>"],
    ["REDIS_USERNAME", "relay user", "ACL user"],
    ["REDIS_PASSWORD", "x".repeat(513), "1 to 512 characters"],
    ["REDIS_TLS", "yes", "use true"],
    ["REDIS_SENTINEL_USERNAME", "watch er", "ACL user"],
    ["REDIS_SENTINEL_PASSWORD", "x".repeat(513), "1 to 512 characters"],
  ])("refuses a malformed %s in one line naming it", (name, value, fix) => {
    const line = lineFor({ ...sentinels, [name]: value });
    expect(line.startsWith(`${name} is invalid: `)).toBe(true);
    expect(line).toContain(fix);
  });

  it.each(["REDIS_PASSWORD", "REDIS_SENTINEL_PASSWORD"])("says which rule a refused %s broke, never quoting it", (name) => {
    const password = `${PASSWORD}${"x".repeat(500)}`;
    const line = lineFor({ ...sentinels, [name]: password });
    expect(line.startsWith(`${name} is invalid: it is 521 characters long, not 1 to 512; `), line).toBe(true);
    expect(line).not.toContain("xxxxxxxx");
  });
});

describe("REDIS_CLUSTER_NODES", () => {
  it.each([
    ["redis://node-1:7000", { nodes: [{ host: "node-1", port: 7000 }] }],
    [
      ` redis://node-1:7000, redis://10.0.0.5:7001/ ,redis://[fd00::7]`,
      {
        nodes: [
          { host: "node-1", port: 7000 },
          { host: "10.0.0.5", port: 7001 },
          { host: "fd00::7", port: 6379 },
        ],
      },
    ],
    [
      `rediss://relay:${encodeURIComponent("p@ss")}@node-1:7000,rediss://relay:${encodeURIComponent("p@ss")}@node-2:7000`,
      { username: "relay", password: "p@ss", tls: {} },
    ],
    [`redis://:${PASSWORD}@node-1:7000`, { password: PASSWORD }],
  ])("reads %s: the seed nodes, one user and password (decoded), TLS for rediss://", (value, expected) => {
    expect(redisOf({ REDIS_CLUSTER_NODES: value })).toStrictEqual({ mode: "cluster", nodes: expect.any(Array), ...expected });
  });

  const MIXED = "the nodes differ in scheme, user or password, and the relay signs in to every node alike";
  it.each([
    ["node-1:7000,node-2:7000", "bare host:port entries", "node 1: its scheme is not redis:// (or rediss:// for TLS)"],
    ["redis://node-1:7000,http://node-2:7000", "a node that is not redis://", "node 2: its scheme is not redis:// (or rediss:// for TLS)"],
    ["redis://node-1:7000/1", "a database number", "node 1 names a database, and a cluster has only database 0"],
    ["redis://node-1:7000?family=6", "a query", "node 1: it has a query or a fragment (?… or #…), and every option has a variable of its own"],
    ["redis://node-1:7000,rediss://node-2:7000", "TLS on some nodes only", MIXED],
    [`redis://relay:${PASSWORD}@node-1:7000,redis://node-2:7000`, "a password on some nodes only", MIXED],
    [`redis://a:${PASSWORD}@node-1:7000,redis://b:${PASSWORD}@node-2:7000`, "two users", MIXED],
    [" , ,", "no node at all", "it lists no node"],
    ["redis://node-1:99999", "a port out of range", "node 1: it is not a valid URL (a port is 1 to 65535; percent-encode a password's special characters)"],
  ])("refuses %s (%s) in one line naming REDIS_CLUSTER_NODES and the rule it broke, never the value", (value, _what, rule) => {
    expect(lineFor({ REDIS_CLUSTER_NODES: value })).toBe(
      `REDIS_CLUSTER_NODES is invalid: ${rule}; list the cluster's seed nodes as comma-separated redis://[user:password@]host:port URLs, e.g. redis://redis-1:6379,redis://redis-2:6379 (rediss:// for TLS), all with one scheme, user and password and no database number`,
    );
  });

  it("takes a CA file with rediss:// nodes, and refuses one with redis:// nodes", () => {
    const ca = file(PEM, "pem");
    expect(redisOf({ REDIS_CLUSTER_NODES: "rediss://node-1:7000", REDIS_TLS_CA_FILE: ca })).toMatchObject({ mode: "cluster", tls: { ca: PEM } });
    expect(lineFor({ REDIS_CLUSTER_NODES: "redis://node-1:7000", REDIS_TLS_CA_FILE: ca })).toBe(
      "REDIS_TLS_CA_FILE is set but TLS is off: use rediss:// node URLs in REDIS_CLUSTER_NODES",
    );
  });
});

/** [what is set, the environment, the line]. */
const misfits: Array<[string, Record<string, string>, string]> = [
  [
    "REDIS_URL and REDIS_SENTINELS",
    { REDIS_URL: "redis://cache.internal", ...sentinels },
    "REDIS_SENTINELS and REDIS_URL are both set: use REDIS_URL for one Redis server, or REDIS_SENTINELS with REDIS_SENTINEL_NAME for Sentinel, not both",
  ],
  [
    "REDIS_SENTINELS without REDIS_SENTINEL_NAME",
    { REDIS_SENTINELS: "s1:26379" },
    "REDIS_SENTINEL_NAME is missing: set the name of the master the sentinels watch (their `sentinel monitor <name> …` line)",
  ],
  [
    "REDIS_SENTINEL_NAME without REDIS_SENTINELS",
    { REDIS_SENTINEL_NAME: "relay-master" },
    "REDIS_SENTINELS is missing: REDIS_SENTINEL_NAME is set; list the sentinels as host:port,host:port, or unset REDIS_SENTINEL_NAME",
  ],
  [
    "REDIS_SENTINEL_NAME with REDIS_URL",
    { REDIS_URL: "redis://cache.internal", REDIS_SENTINEL_NAME: "relay-master" },
    "REDIS_SENTINELS is missing: REDIS_SENTINEL_NAME is set; list the sentinels as host:port,host:port, or unset REDIS_SENTINEL_NAME",
  ],
  [
    "REDIS_SENTINEL_PASSWORD without REDIS_SENTINELS",
    { REDIS_SENTINEL_PASSWORD: PASSWORD },
    "REDIS_SENTINELS is missing: REDIS_SENTINEL_PASSWORD is set; list the sentinels as host:port,host:port, or unset REDIS_SENTINEL_PASSWORD",
  ],
  [
    "REDIS_PASSWORD with no Redis at all",
    { REDIS_PASSWORD: PASSWORD },
    "REDIS_SENTINELS is missing: REDIS_PASSWORD is set; list the sentinels as host:port,host:port, or unset REDIS_PASSWORD",
  ],
  ...["REDIS_USERNAME", "REDIS_PASSWORD", "REDIS_TLS"].map((name): [string, Record<string, string>, string] => [
    `${name} with REDIS_URL`,
    { REDIS_URL: "redis://cache.internal", [name]: name === "REDIS_TLS" ? "true" : PASSWORD },
    `${name} is set with REDIS_URL: put the user and password in the URL (redis://user:password@host:port/db), and use rediss:// for TLS`,
  ]),
  ...["REDIS_URL", "REDIS_SENTINELS"].map((name): [string, Record<string, string>, string] => [
    `REDIS_CLUSTER_NODES and ${name}`,
    { REDIS_CLUSTER_NODES: "redis://node-1:7000", ...(name === "REDIS_URL" ? { REDIS_URL: "redis://cache.internal" } : sentinels) },
    `REDIS_CLUSTER_NODES and ${name} are both set: use REDIS_CLUSTER_NODES for Redis Cluster, REDIS_URL for one Redis server, or REDIS_SENTINELS for Sentinel, only one of them`,
  ]),
  ...["REDIS_USERNAME", "REDIS_PASSWORD", "REDIS_TLS"].map((name): [string, Record<string, string>, string] => [
    `${name} with REDIS_CLUSTER_NODES`,
    { REDIS_CLUSTER_NODES: "redis://node-1:7000", [name]: name === "REDIS_TLS" ? "true" : PASSWORD },
    `${name} is set with REDIS_CLUSTER_NODES: put the user and password in each node's URL (redis://user:password@host:port), and use rediss:// for TLS`,
  ]),
  [
    "REDIS_SENTINEL_NAME with REDIS_CLUSTER_NODES",
    { REDIS_CLUSTER_NODES: "redis://node-1:7000", REDIS_SENTINEL_NAME: "relay-master" },
    "REDIS_SENTINEL_NAME is set with REDIS_CLUSTER_NODES: Sentinel's variables do not apply to Redis Cluster; unset it",
  ],
  [
    "REDIS_USERNAME without REDIS_PASSWORD",
    { ...sentinels, REDIS_USERNAME: "relay" },
    "REDIS_PASSWORD is missing: REDIS_USERNAME is set, and an ACL user signs in with a password",
  ],
  [
    "REDIS_SENTINEL_USERNAME without REDIS_SENTINEL_PASSWORD",
    { ...sentinels, REDIS_SENTINEL_USERNAME: "watcher" },
    "REDIS_SENTINEL_PASSWORD is missing: REDIS_SENTINEL_USERNAME is set, and an ACL user signs in with a password",
  ],
];

describe("Redis variables that do not fit together", () => {
  it.each(misfits)("%s: one line naming the variable", (_, env, line) => {
    expect(lineFor(env)).toBe(line);
  });
});

describe("REDIS_TLS_CA_FILE", () => {
  it("puts the CA's PEM into the target, for rediss:// and for REDIS_TLS=true", () => {
    const ca = file(PEM, "pem");
    expect(redisOf({ REDIS_URL: "rediss://cache.internal", REDIS_TLS_CA_FILE: ca })).toMatchObject({ tls: { ca: PEM } });
    expect(redisOf({ ...sentinels, REDIS_TLS: "true", REDIS_TLS_CA_FILE: ca })).toMatchObject({ tls: { ca: PEM } });
  });

  const tlsOff = "REDIS_TLS_CA_FILE is set but TLS is off: use a rediss:// REDIS_URL, or REDIS_TLS=true with REDIS_SENTINELS";
  it.each([
    ["with redis://", { REDIS_URL: "redis://cache.internal" }, tlsOff],
    ["with REDIS_TLS=false", { ...sentinels, REDIS_TLS: "false" }, tlsOff],
    ["with no Redis", {}, tlsOff],
  ])("refuses a CA %s, in one line", (_, env, line) => {
    expect(lineFor({ ...env, REDIS_TLS_CA_FILE: file(PEM, "pem") })).toBe(line);
  });

  it("refuses a file it cannot read, and one that holds no PEM certificate", () => {
    expect(lineFor({ REDIS_URL: "rediss://cache.internal", REDIS_TLS_CA_FILE: `${file(PEM, "pem")}.missing` })).toBe(
      "REDIS_TLS_CA_FILE is invalid: point it at a readable PEM file of the CA that signed Redis's certificate",
    );
    expect(lineFor({ REDIS_URL: "rediss://cache.internal", REDIS_TLS_CA_FILE: file(PASSWORD, "pem") })).toBe(
      "REDIS_TLS_CA_FILE is invalid: the file holds no PEM certificate (-----BEGIN CERTIFICATE-----)",
    );
  });
});

describe("the lines the start stops with", () => {
  const single: RedisTarget = { mode: "single", address: { host: "cache.internal", port: 6380 }, db: 0, password: PASSWORD };
  const sentinel: RedisTarget = { mode: "sentinel", sentinels: [{ host: "s1", port: 26379 }], name: "relay-master", password: PASSWORD };
  const cluster: RedisTarget = {
    mode: "cluster",
    nodes: [
      { host: "node-1", port: 7000 },
      { host: "fd00::7", port: 7001 },
    ],
    password: PASSWORD,
  };
  const wrongPass = "WRONGPASS invalid username-password pair or user is disabled.";

  const lines: Array<[RedisTarget, RedisStartProblem, string]> = [
    [single, { kind: "refused", by: "server", reason: wrongPass }, `REDIS_URL: Redis at cache.internal:6380 refused the relay (${wrongPass}): check the user`],
    [
      single,
      { kind: "tls", by: "server", reason: "self-signed certificate" },
      "REDIS_URL: the TLS handshake with Redis at cache.internal:6380 failed (self-signed",
    ],
    [
      single,
      { kind: "unreachable", by: "server", reason: "connect ECONNREFUSED", seconds: 10 },
      "REDIS_URL: Redis at cache.internal:6380 did not answer within 10 s",
    ],
    [
      sentinel,
      { kind: "unknown-master", name: "relay-master", asked: [{ host: "fd00::7", port: 26379 }] },
      'REDIS_SENTINEL_NAME is invalid: no sentinel knows a master named "relay-master" (asked [fd00::7]:26379)',
    ],
    [sentinel, { kind: "refused", by: "sentinel", reason: wrongPass }, `REDIS_SENTINEL_PASSWORD: the sentinels refused the relay (${wrongPass})`],
    [
      sentinel,
      { kind: "refused", by: "server", reason: wrongPass },
      `REDIS_PASSWORD: the master "relay-master" refused the relay (${wrongPass}): check REDIS_USERNAME and REDIS_PASSWORD`,
    ],
    [sentinel, { kind: "tls", by: "sentinel", reason: "self-signed certificate" }, "REDIS_TLS: the TLS handshake with the sentinels failed"],
    [sentinel, { kind: "tls", by: "server", reason: "self-signed certificate" }, 'REDIS_TLS: the TLS handshake with the master "relay-master" failed'],
    [
      sentinel,
      { kind: "unreachable", by: "sentinel", reason: "s1:26379: connect ECONNREFUSED", seconds: 10 },
      "REDIS_SENTINELS: no sentinel answered within 10 s (s1:26379: connect ECONNREFUSED)",
    ],
    [
      sentinel,
      { kind: "unreachable", by: "server", reason: "connect ECONNREFUSED", seconds: 10 },
      'REDIS_SENTINEL_NAME: the master "relay-master" the sentinels name did not answer within 10 s',
    ],
    [
      cluster,
      { kind: "refused", by: "server", reason: wrongPass },
      `REDIS_CLUSTER_NODES: the cluster at node-1:7000, [fd00::7]:7001 refused the relay (${wrongPass}): check the user and password in the node URLs`,
    ],
    [cluster, { kind: "tls", by: "server", reason: "self-signed certificate" }, "REDIS_CLUSTER_NODES: the TLS handshake with the cluster at node-1:7000"],
    [
      cluster,
      { kind: "unreachable", by: "server", reason: "Failed to refresh slots cache.", seconds: 10 },
      "REDIS_CLUSTER_NODES: the cluster at node-1:7000, [fd00::7]:7001 did not answer as a cluster within 10 s (Failed to refresh slots cache.)",
    ],
  ];
  it.each(lines)("%#: names the variable to fix, in one line without the password", (target, problem, start) => {
    const line = redisStartLine(target, problem);
    expect(line.startsWith(start)).toBe(true);
    expect(line).not.toContain("\n");
    expect(line).not.toContain(PASSWORD);
  });
});
