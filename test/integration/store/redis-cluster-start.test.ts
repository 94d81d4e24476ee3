/**
 * The relay on Redis Cluster (REDIS_CLUSTER_NODES), against a 3-master
 * cluster the file starts (helpers/redis-cluster.ts) with docs/operations.md's ACL
 * user on every master: the relay signs in with the user and password of the
 * node URLs, takes a request and answers it on a click (over TLS too, on a
 * second cluster that speaks TLS only); with two instances,
 * a long-poll held on A is answered by a click that lands on B; a wrong
 * password stops the start with one line naming REDIS_CLUSTER_NODES, and a
 * cluster that does not answer, or does not serve every slot, is unreachable
 * once the probe's window passes.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { redisStartLine, type RedisTarget } from "../../../src/config/redis.js";
import { Action } from "../../../src/slack/ids.js";
import { probeRedis } from "../../../src/store/redis-probe.js";
import { makeCertificates } from "../../helpers/certificates.js";
import { agentCall, createAndAnswer, startFailure, startFullRelay, type FullRelay } from "../../helpers/full-relay.js";
import { freePort } from "../../helpers/ports.js";
import { startRedisCluster, type RedisCluster } from "../../helpers/redis-cluster.js";
import { relayAclUser, startRedisServer } from "../../helpers/redis-server.js";
import { startSlackWebApi, type SlackWebApiStandIn } from "../../helpers/slack-web-api.js";

const PREFIX = "cstart";
const RELAY_PASSWORD = "relay-pw-5d1c9a";
const SECRETS = new RegExp(`${RELAY_PASSWORD}|wrong-pw`);

let cluster: RedisCluster;
let slack: SlackWebApiStandIn | undefined;
const relays: FullRelay[] = [];

beforeAll(async () => {
  cluster = await startRedisCluster({ args: relayAclUser(PREFIX, RELAY_PASSWORD) });
}, 60_000);
afterEach(async () => {
  await Promise.all(relays.splice(0).map((relay) => relay.close()));
  await slack?.close();
  slack = undefined;
});
afterAll(async () => {
  await cluster?.stop();
});

/** REDIS_CLUSTER_NODES with `password` for the ACL user in every node's URL. */
const nodesWith = (password: string) => cluster.masters.map(({ port }) => `redis://relay:${password}@127.0.0.1:${port}`).join(",");

async function relay(env: Record<string, string>): Promise<FullRelay> {
  const started = await startFullRelay({ env: { REDIS_PREFIX: PREFIX, ...env }, ...(slack ? { slack } : {}) });
  relays.push(started);
  return started;
}

describe("the relay on Redis Cluster", () => {
  it("signs in to every master as the ACL user of the node URLs, takes a request and answers it on a click", async () => {
    const started = await relay({ REDIS_CLUSTER_NODES: nodesWith(RELAY_PASSWORD) });
    await createAndAnswer(started);
    expect(started.logs.join("\n")).not.toMatch(SECRETS);
    expect(started.logs.some((line) => line.includes('"store":"redis cluster"'))).toBe(true);
  });

  it("with two instances, a long-poll held on A is answered by the click that lands on B", async () => {
    slack = await startSlackWebApi();
    const env = { REDIS_CLUSTER_NODES: nodesWith(RELAY_PASSWORD) };
    const [a, b] = [await relay(env), await relay(env)];
    const created = await agentCall(a.url, "/v1/requests", { body: { kind: "step_gate", toolName: "Bash", input: { command: "make deploy" } } });
    expect(created.status).toBe(201);
    const id = String(created.body!.id);
    const posted = await a.message(0);
    const held = agentCall(a.url, `/v1/requests/${id}?wait=20`);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const clickedAt = Date.now();
    await b.click(posted, Action.stepYes);
    expect(await held).toMatchObject({ status: 200, body: { id, status: "answered", decision: { reply: "y" } } });
    expect(Date.now() - clickedAt).toBeLessThan(2_000);
    expect([...a.errors(), ...b.errors()]).toEqual([]);
  });

  it("over TLS (rediss:// nodes): trusting the CA of REDIS_TLS_CA_FILE, the relay reaches every master and answers a request; without it the start stops with one line naming REDIS_CLUSTER_NODES", async () => {
    const certificates = makeCertificates(["localhost", "IP:127.0.0.1"]);
    const tlsCluster = await startRedisCluster({ tls: certificates });
    try {
      const env = { REDIS_PREFIX: "ctls", REDIS_CLUSTER_NODES: tlsCluster.nodes };
      expect(await startFailure(env, SECRETS)).toMatch(
        /^REDIS_CLUSTER_NODES: the TLS handshake with the cluster at .+ failed \(.+\): set REDIS_TLS_CA_FILE to the CA/,
      );
      await createAndAnswer(await relay({ ...env, REDIS_TLS_CA_FILE: certificates.caFile }));
    } finally {
      await Promise.all(relays.splice(0).map((started) => started.close()));
      await tlsCluster.stop();
      certificates.remove();
    }
  });

  it("a wrong password stops the start with one line naming REDIS_CLUSTER_NODES, never the password", async () => {
    expect(await startFailure({ REDIS_PREFIX: PREFIX, REDIS_CLUSTER_NODES: nodesWith("wrong-pw") }, SECRETS)).toMatch(
      /^REDIS_CLUSTER_NODES: the cluster at 127\.0\.0\.1:\d+, 127\.0\.0\.1:\d+, 127\.0\.0\.1:\d+ refused the relay \(WRONGPASS [^)]*\): check the user and password in the node URLs/,
    );
  });

  it("a cluster that does not serve every slot: unreachable once the probe's window has passed, saying its cluster_state", async () => {
    const lone = await startRedisServer(undefined, { args: ["--cluster-enabled", "yes"] });
    try {
      const target: RedisTarget = { mode: "cluster", nodes: [{ host: "127.0.0.1", port: lone.port }] };
      const problem = await probeRedis(target, { windowMs: 600 });
      expect(problem).toMatchObject({ kind: "unreachable", by: "server", seconds: 0.6 });
      expect(redisStartLine(target, problem!)).toMatch(
        new RegExp(
          `^REDIS_CLUSTER_NODES: the cluster at 127\\.0\\.0\\.1:${lone.port} did not answer as a cluster within 0\\.6 s \\(.+; 127\\.0\\.0\\.1:${lone.port} says cluster_state:fail\\): check`,
        ),
      );
    } finally {
      await lone.stop();
    }
  });

  it("seed nodes where nothing listens: unreachable once the probe's window has passed, in a line naming REDIS_CLUSTER_NODES", async () => {
    const target: RedisTarget = { mode: "cluster", nodes: [{ host: "127.0.0.1", port: await freePort() }] };
    const problem = await probeRedis(target, { windowMs: 600 });
    expect(problem).toMatchObject({ kind: "unreachable", by: "server", seconds: 0.6 });
    expect(redisStartLine(target, problem!)).toMatch(/^REDIS_CLUSTER_NODES: the cluster at 127\.0\.0\.1:\d+ did not answer as a cluster within 0\.6 s \(/);
  });
});
