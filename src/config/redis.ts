/**
 * Where the shared store lives: one Redis server (REDIS_URL, user, password,
 * database and TLS in the URL), a Redis Cluster (REDIS_CLUSTER_NODES, seed
 * node URLs of that form without the database), or the master a group of Sentinels names
 * (REDIS_SENTINELS and REDIS_SENTINEL_NAME, the master's user and password in
 * REDIS_USERNAME / REDIS_PASSWORD, the sentinels' own in
 * REDIS_SENTINEL_USERNAME / REDIS_SENTINEL_PASSWORD, TLS for both with
 * REDIS_TLS=true), and REDIS_TLS_CA_FILE for a CA of one's own. Here are the
 * checks that look across these variables, and the lines that say why the
 * relay could not use its store at start (src/store/redis-probe.ts finds out;
 * this module words it with the variables an operator sets). No line quotes
 * a value: a URL or a password may be in it.
 */
import { readFileSync } from "node:fs";
import { commaList, isRefusal, refuse, type Refusal } from "./rules.js";

export interface RedisAddress {
  host: string;
  port: number;
}

/** The credentials and TLS of every connection to the Redis servers. */
export interface RedisAccess {
  /** ACL user; undefined → Redis's `default` user. */
  username?: string;
  password?: string;
  /** Set → TLS; `ca` (PEM, from REDIS_TLS_CA_FILE) replaces Node's trusted CAs. */
  tls?: { ca?: string };
}

export interface SingleRedis extends RedisAccess {
  mode: "single";
  address: RedisAddress;
  /** Database number (the URL's path). */
  db: number;
}

export interface SentinelRedis extends RedisAccess {
  mode: "sentinel";
  sentinels: RedisAddress[];
  /** The master's name (the sentinels' `sentinel monitor <name> …`). */
  name: string;
  /** The sentinels' own ACL user and password (their requirepass), when they ask for one. */
  sentinelUsername?: string;
  sentinelPassword?: string;
}

export interface ClusterRedis extends RedisAccess {
  mode: "cluster";
  /** Seed nodes: ioredis asks them for the cluster's slots and finds every master from there. */
  nodes: RedisAddress[];
}

export type RedisTarget = SingleRedis | SentinelRedis | ClusterRedis;

/** The Redis variables as ./config.ts read them (each already checked alone). */
export interface RedisVariables {
  url?: SingleRedis;
  cluster?: ClusterRedis;
  sentinels?: RedisAddress[];
  name?: string;
  username?: string;
  password?: string;
  tls?: boolean;
  caFile?: string;
  sentinelUsername?: string;
  sentinelPassword?: string;
}

/** How to fix REDIS_TLS_CA_FILE (its hint in ./variables.ts, and the line for a file that cannot be read). */
export const CA_FILE_HINT = "point it at a readable PEM file of the CA that signed Redis's certificate";

/** A Redis setting that is wrong for what else is set; its message is the whole line. */
export class RedisSettingsError extends Error {}

/**
 * REDIS_URL: `redis[s]://[[user]:password@]host[:port][/db]`, nothing else (no
 * query: every option has a variable); or the rule it broke, in words that
 * never quote it (it may hold a password).
 */
export function readRedisUrl(value: string): SingleRedis | Refusal {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return refuse("it is not a valid URL (a port is 1 to 65535; percent-encode a password's special characters)");
  }
  if (url.protocol !== "redis:" && url.protocol !== "rediss:") return refuse("its scheme is not redis:// (or rediss:// for TLS)");
  if (!url.hostname) return refuse("it names no host");
  if (url.search || url.hash) return refuse("it has a query or a fragment (?… or #…), and every option has a variable of its own");
  const db = url.pathname === "" || url.pathname === "/" ? 0 : /^\/\d{1,4}$/.test(url.pathname) ? Number(url.pathname.slice(1)) : undefined;
  if (db === undefined) return refuse("its path is not a database number (/0 to /9999)");
  const port = url.port === "" ? 6379 : Number(url.port);
  let username: string, password: string;
  try {
    [username, password] = [decodeURIComponent(url.username), decodeURIComponent(url.password)];
  } catch {
    return refuse("its user or password is not valid percent-encoding (%XX)");
  }
  // A user signs in with a password: `redis://user@host` would send an empty one.
  if (username && !password) return refuse("it names a user without a password (redis://user:password@host)");
  return {
    mode: "single",
    address: { host: url.hostname.replace(/^\[|\]$/g, ""), port },
    db,
    ...(username ? { username } : {}),
    ...(password ? { password } : {}),
    ...(url.protocol === "rediss:" ? { tls: {} } : {}),
  };
}

/** REDIS_URL's form (tests and the bench name their Redis so); undefined when it is not one. */
export function parseRedisUrl(value: string): SingleRedis | undefined {
  const read = readRedisUrl(value);
  return isRefusal(read) ? undefined : read;
}

/**
 * REDIS_CLUSTER_NODES: comma-separated `redis[s]://[[user]:password@]host[:port]`
 * seed nodes, one scheme and one user and password for all (ioredis signs in
 * to every node alike), no database (a cluster has only database 0).
 */
export function readClusterNodes(value: string): ClusterRedis | Refusal {
  const entries = commaList(value);
  if (entries.length === 0) return refuse("it lists no node");
  const nodes: SingleRedis[] = [];
  for (const [index, entry] of entries.entries()) {
    const node = readRedisUrl(entry);
    if (isRefusal(node)) return refuse(`node ${index + 1}: ${node.refused}`);
    if (!/^rediss?:\/\/[^/]*\/?$/.test(entry)) return refuse(`node ${index + 1} names a database, and a cluster has only database 0`);
    nodes.push(node);
  }
  const [first] = nodes as [SingleRedis, ...SingleRedis[]];
  const access = (node: SingleRedis) => JSON.stringify([node.username, node.password, node.tls !== undefined]);
  if (nodes.some((node) => access(node) !== access(first))) {
    return refuse("the nodes differ in scheme, user or password, and the relay signs in to every node alike");
  }
  return {
    mode: "cluster",
    nodes: nodes.map((node) => node.address),
    ...(first.username === undefined ? {} : { username: first.username }),
    ...(first.password === undefined ? {} : { password: first.password }),
    ...(first.tls === undefined ? {} : { tls: {} }),
  };
}

/** REDIS_SENTINELS: comma-separated `host:port` (IPv6 in brackets); undefined when an entry is not one. */
export function parseAddresses(value: string): RedisAddress[] | undefined {
  const entries = commaList(value);
  const addresses = entries.map((entry) => {
    const match = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/.exec(entry);
    const port = Number(match?.[2]);
    return match && port >= 1 && port <= 65535 ? { host: match[1]!.replace(/^\[|\]$/g, ""), port } : undefined;
  });
  return addresses.length > 0 && addresses.every((a) => a !== undefined) ? addresses : undefined;
}

/** The store's target, or undefined (memory); throws RedisSettingsError when the variables do not fit together. */
export function redisTarget(v: RedisVariables): RedisTarget | undefined {
  const fail = (line: string): never => {
    throw new RedisSettingsError(line);
  };
  if (v.url && v.sentinels) {
    fail("REDIS_SENTINELS and REDIS_URL are both set: use REDIS_URL for one Redis server, or REDIS_SENTINELS with REDIS_SENTINEL_NAME for Sentinel, not both");
  }
  if (v.cluster) {
    const other = v.url ? "REDIS_URL" : v.sentinels ? "REDIS_SENTINELS" : undefined;
    if (other) {
      fail(
        `REDIS_CLUSTER_NODES and ${other} are both set: use REDIS_CLUSTER_NODES for Redis Cluster, REDIS_URL for one Redis server, or REDIS_SENTINELS for Sentinel, only one of them`,
      );
    }
    const forSentinel = { REDIS_SENTINEL_NAME: v.name, REDIS_SENTINEL_USERNAME: v.sentinelUsername, REDIS_SENTINEL_PASSWORD: v.sentinelPassword };
    const forMaster = { REDIS_USERNAME: v.username, REDIS_PASSWORD: v.password, REDIS_TLS: v.tls };
    const [name] = Object.entries({ ...forSentinel, ...forMaster }).find(([, value]) => value !== undefined) ?? [];
    if (name) {
      fail(
        `${name} is set with REDIS_CLUSTER_NODES: ${name in forMaster ? "put the user and password in each node's URL (redis://user:password@host:port), and use rediss:// for TLS" : "Sentinel's variables do not apply to Redis Cluster; unset it"}`,
      );
    }
    if (v.caFile !== undefined && v.cluster.tls === undefined) fail("REDIS_TLS_CA_FILE is set but TLS is off: use rediss:// node URLs in REDIS_CLUSTER_NODES");
    return { ...v.cluster, ...(v.cluster.tls === undefined ? {} : { tls: v.caFile === undefined ? {} : { ca: readCa(v.caFile) } }) };
  }
  if (!v.sentinels) {
    const forSentinel = { REDIS_SENTINEL_NAME: v.name, REDIS_SENTINEL_USERNAME: v.sentinelUsername, REDIS_SENTINEL_PASSWORD: v.sentinelPassword };
    const forMaster = { REDIS_USERNAME: v.username, REDIS_PASSWORD: v.password, REDIS_TLS: v.tls };
    const [name] = Object.entries({ ...forSentinel, ...forMaster }).find(([, value]) => value !== undefined) ?? [];
    if (name && v.url && name in forMaster) {
      fail(`${name} is set with REDIS_URL: put the user and password in the URL (redis://user:password@host:port/db), and use rediss:// for TLS`);
    }
    if (name) fail(`REDIS_SENTINELS is missing: ${name} is set; list the sentinels as host:port,host:port, or unset ${name}`);
  }
  if (v.sentinels && !v.name) fail("REDIS_SENTINEL_NAME is missing: set the name of the master the sentinels watch (their `sentinel monitor <name> …` line)");
  if (v.username && !v.password) fail("REDIS_PASSWORD is missing: REDIS_USERNAME is set, and an ACL user signs in with a password");
  if (v.sentinelUsername && !v.sentinelPassword) {
    fail("REDIS_SENTINEL_PASSWORD is missing: REDIS_SENTINEL_USERNAME is set, and an ACL user signs in with a password");
  }
  const tlsOn = v.url ? v.url.tls !== undefined : v.tls === true;
  if (v.caFile !== undefined && !tlsOn) fail("REDIS_TLS_CA_FILE is set but TLS is off: use a rediss:// REDIS_URL, or REDIS_TLS=true with REDIS_SENTINELS");
  const tls = tlsOn ? { tls: v.caFile === undefined ? {} : { ca: readCa(v.caFile) } } : {};
  if (v.url) return { ...v.url, ...tls };
  if (!v.sentinels) return undefined;
  return {
    mode: "sentinel",
    sentinels: v.sentinels,
    name: v.name!,
    ...(v.username ? { username: v.username } : {}),
    ...(v.password ? { password: v.password } : {}),
    ...(v.sentinelUsername ? { sentinelUsername: v.sentinelUsername } : {}),
    ...(v.sentinelPassword ? { sentinelPassword: v.sentinelPassword } : {}),
    ...tls,
  };
}

function readCa(path: string): string {
  let pem: string;
  try {
    pem = readFileSync(path, "utf8");
  } catch {
    throw new RedisSettingsError(`REDIS_TLS_CA_FILE is invalid: ${CA_FILE_HINT}`);
  }
  if (!pem.includes("-----BEGIN CERTIFICATE-----")) {
    throw new RedisSettingsError("REDIS_TLS_CA_FILE is invalid: the file holds no PEM certificate (-----BEGIN CERTIFICATE-----)");
  }
  return pem;
}

/**
 * Why the store could not be used at start: its credentials or its TLS were
 * refused (by the server, or by the sentinels), no sentinel knows the
 * master's name, or nothing answered within the start's wait. `reason` is the
 * error Redis or Node gave, which never holds a password.
 */
export type RedisStartProblem =
  | { kind: "refused" | "tls"; by: "server" | "sentinel"; reason: string }
  | { kind: "unknown-master"; name: string; asked: RedisAddress[] }
  | { kind: "unreachable"; by: "server" | "sentinel"; reason: string; seconds: number };

const at = (a: RedisAddress) => (a.host.includes(":") ? `[${a.host}]:${a.port}` : `${a.host}:${a.port}`);

/** Where the relay looks for its store, for the log (addresses and names only, never credentials). */
export function redisWhere(target: RedisTarget): string {
  if (target.mode === "single") return at(target.address);
  if (target.mode === "cluster") return `cluster ${target.nodes.map(at).join(", ")}`;
  return `master "${target.name}" of sentinels ${target.sentinels.map(at).join(", ")}`;
}

/** The one line the start stops with. */
export function redisStartLine(target: RedisTarget, problem: RedisStartProblem): string {
  const tlsFix = "set REDIS_TLS_CA_FILE to the CA that signed its certificate, and name the host its certificate names";
  if (problem.kind === "unknown-master") {
    return `REDIS_SENTINEL_NAME is invalid: no sentinel knows a master named "${problem.name}" (asked ${problem.asked.map(at).join(", ")}); use the name of their \`sentinel monitor <name> …\` line`;
  }
  if (target.mode === "single") {
    const server = at(target.address);
    switch (problem.kind) {
      case "refused":
        return `REDIS_URL: Redis at ${server} refused the relay (${problem.reason}): check the user and password in the URL, and that the ACL user may run the relay's commands`;
      case "tls":
        return `REDIS_URL: the TLS handshake with Redis at ${server} failed (${problem.reason}): ${tlsFix}`;
      default:
        return `REDIS_URL: Redis at ${server} did not answer within ${problem.seconds} s (${problem.reason}): check the address, and that Redis runs and accepts this host`;
    }
  }
  if (target.mode === "cluster") {
    const nodes = `the cluster at ${target.nodes.map(at).join(", ")}`;
    switch (problem.kind) {
      case "refused":
        return `REDIS_CLUSTER_NODES: ${nodes} refused the relay (${problem.reason}): check the user and password in the node URLs, and that the ACL user may run the relay's commands on every node`;
      case "tls":
        return `REDIS_CLUSTER_NODES: the TLS handshake with ${nodes} failed (${problem.reason}): ${tlsFix}`;
      default:
        return `REDIS_CLUSTER_NODES: ${nodes} did not answer as a cluster within ${problem.seconds} s (${problem.reason}): check the host:port list, and that the cluster is up (CLUSTER INFO says cluster_state:ok)`;
    }
  }
  const master = `the master "${target.name}"`;
  switch (problem.kind) {
    case "refused":
      return problem.by === "sentinel"
        ? `REDIS_SENTINEL_PASSWORD: the sentinels refused the relay (${problem.reason}): set REDIS_SENTINEL_USERNAME / REDIS_SENTINEL_PASSWORD to the sentinels' own user and password`
        : `REDIS_PASSWORD: ${master} refused the relay (${problem.reason}): check REDIS_USERNAME and REDIS_PASSWORD, and that the ACL user may run the relay's commands`;
    case "tls":
      return `REDIS_TLS: the TLS handshake with ${problem.by === "sentinel" ? "the sentinels" : master} failed (${problem.reason}): ${tlsFix}`;
    default:
      return problem.by === "sentinel"
        ? `REDIS_SENTINELS: no sentinel answered within ${problem.seconds} s (${problem.reason}): check the host:port list, and that the sentinels run`
        : `REDIS_SENTINEL_NAME: ${master} the sentinels name did not answer within ${problem.seconds} s (${problem.reason}): check that it runs, and what SENTINEL GET-MASTER-ADDR-BY-NAME ${target.name} says`;
  }
}
