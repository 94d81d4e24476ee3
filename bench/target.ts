/**
 * One relay under test with everything around it: a Slack stand-in, the relay
 * child process configured against it (memory store, one Redis server, or a
 * Redis Cluster) and a
 * BenchAgent to drive it. `withTarget` always tears all three down, whatever
 * the scenario throws.
 */
import { randomBytes } from "node:crypto";
import { BenchAgent } from "./agent.js";
import { startRelayProcess, type RelayProcess } from "./relay-process.js";
import { startSlackStandIn, type SlackStandIn, type StandInOptions } from "./slack-stand-in.js";

export type StoreName = "memory" | "redis" | "cluster";

export interface TargetOptions {
  store: StoreName;
  /** The repository root: the relay runs as its `npm start` does (./relay-process.ts). */
  root: string;
  redisUrl: string;
  /** REDIS_CLUSTER_NODES of the cluster (store "cluster"). */
  clusterNodes: string;
  /** Key prefix of this bench run (REDIS_PREFIX), removed at the end. */
  redisPrefix: string;
  /** LOG_LEVEL of the relay; unset: the relay's default (info). */
  logLevel?: string;
  /** Extra node flags for the relay (profiling). */
  nodeFlags?: string[];
  /** How the Slack stand-in behaves (rate limits, user groups). */
  standIn?: StandInOptions;
  /** More environment for the relay, e.g. RELAY_CONFIG_FILE. */
  env?: Record<string, string>;
  /** Names of more agent tokens than the bench's own, each with a BenchAgent of its own (`others`). */
  otherTokens?: string[];
}

export interface Target {
  store: StoreName;
  relay: RelayProcess;
  standIn: SlackStandIn;
  agent: BenchAgent;
  /** An agent per name in `otherTokens`, each with a token of its own. */
  others: Map<string, BenchAgent>;
}

export const BENCH_CHANNEL = "C0BENCH0001";
/** RELAY_CREATE_RATE_LIMIT for every bench relay: its largest value. Everything else is the relay's default. */
export const BENCH_CREATE_RATE_LIMIT = "1000000";

export async function withTarget<T>(options: TargetOptions, run: (target: Target) => Promise<T>): Promise<T> {
  const token = randomBytes(24).toString("hex");
  const signingSecret = randomBytes(16).toString("hex");
  const standIn = await startSlackStandIn(options.standIn);
  let relay: RelayProcess | undefined;
  let agent: BenchAgent | undefined;
  const others = new Map<string, BenchAgent>();
  const otherTokens = new Map((options.otherTokens ?? []).map((name) => [name, randomBytes(24).toString("hex")]));
  try {
    relay = await startRelayProcess({
      root: options.root,
      nodeFlags: options.nodeFlags ?? [],
      env: {
        SLACK_BOT_TOKEN: "xoxb-bench-0000000000",
        SLACK_SIGNING_SECRET: signingSecret,
        SLACK_API_URL: standIn.apiUrl,
        SLACK_DEFAULT_CHANNEL: BENCH_CHANNEL,
        RELAY_TOKENS: [`bench:${token}`, ...[...otherTokens].map(([name, secret]) => `${name}:${secret}`)].join(","),
        // The bench sends as one token what many agents would (thousands of creates a minute), so the per-token
        // create limit (default 600 a minute) is raised out of its way; the limiter still runs on every create.
        RELAY_CREATE_RATE_LIMIT: BENCH_CREATE_RATE_LIMIT,
        ...(options.logLevel === undefined ? {} : { LOG_LEVEL: options.logLevel }),
        ...(options.store === "redis" ? { REDIS_URL: options.redisUrl, REDIS_PREFIX: options.redisPrefix } : {}),
        ...(options.store === "cluster" ? { REDIS_CLUSTER_NODES: options.clusterNodes, REDIS_PREFIX: options.redisPrefix } : {}),
        ...options.env,
      },
    });
    agent = new BenchAgent({ base: relay.url, token, signingSecret, standIn });
    for (const [name, secret] of otherTokens) others.set(name, new BenchAgent({ base: relay.url, token: secret, signingSecret, standIn }));
    return await run({ store: options.store, relay, standIn, agent, others });
  } catch (error) {
    if (relay && error instanceof Error) error.message += `\n--- relay output (last lines) ---\n${relay.output()}`;
    throw error;
  } finally {
    agent?.close();
    for (const other of others.values()) other.close();
    await relay?.stop();
    await standIn.close();
  }
}
