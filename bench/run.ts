/**
 * `npm run bench`: builds the relay, then measures it on loopback against a
 * Slack Web API stand-in — click-to-agent latency, throughput, memory and per-request cost with
 * 1,000 to 10,000 pending requests held by long-polls and answered by clicks (scale), the Claude Code hook endpoint, and posting behind
 * Slack's per-channel rate limit (ratelimit), one token's flood of a
 * channel against another token's question there (fair), and what a route's approver
 * policy adds to a click (policy), and what 100 open web consoles add to a click (consoles) — with the memory store and with Redis, and
 * with --cluster on a Redis Cluster too. A benchmark, not a test: machines here are shared and
 * noisy, so it warms up, repeats rounds and reports the median round.
 * Redis: REDIS_TEST_URL when set (the bench's keys are removed afterwards),
 * otherwise a throwaway redis-server from the PATH for the run; with neither,
 * only the memory store is measured. The cluster (--cluster) is always a
 * throwaway one of three masters (test/helpers/redis-cluster.ts), stopped at
 * the end.
 *
 *   npm run bench -- [--quick] [--only latency,throughput,scale,hook,ratelimit,fair,policy,consoles]
 *                    [--memory] [--redis] [--cluster] (default: --memory --redis)
 *                    [--no-build] [--cpu-prof] [--log-level warn] [--write | --no-write]
 *                    [--node-flag=--max-semi-space-size=32 …]  (more node flags for the relay, to compare V8 settings)
 *                    [--scale-levels 1000,10000]  (scale: the numbers of pending requests, a fresh relay each)
 *                    [--slack-burst 3]  (ratelimit: posts Slack takes at once per channel; 1 = strictly 1/s)
 *
 * The relay runs as `npm start` runs it, with its defaults (LOG_LEVEL info) unless --log-level says otherwise.
 * Progress goes to stderr, the tables to stdout; a default run (not --quick, or with --write) also adds
 * them to bench/RESULTS.md, dated, with the machine and this exact command (--no-write: never).
 * --cpu-prof writes the relay's V8 CPU profiles (open them in Chrome DevTools);
 * profiling slows the relay, so its figures are not the ones to publish.
 */
import { spawnSync } from "node:child_process";
import { cpus, loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { Redis } from "ioredis";
import { startRedisCluster, type RedisCluster } from "../test/helpers/redis-cluster.js";
import { findRedisServer, startRedisServer, type RedisServer } from "../test/helpers/redis-server.js";
import { randomBytes } from "node:crypto";
import { runConsoles } from "./consoles.js";
import { runConsoleRender } from "./console-render.js";
import { runFair } from "./fair.js";
import { runHook } from "./hook.js";
import { runLatency } from "./latency.js";
import { runRateLimit } from "./ratelimit.js";
import { runPolicy } from "./policy.js";
import { runScale } from "./scale.js";
import { startScriptArgs } from "./relay-process.js";
import { markdownByScenario, textReport, type Machine, type StoreResults } from "./report.js";
import { recordResults } from "./results-file.js";
import { BENCH_CREATE_RATE_LIMIT, withTarget, type StoreName, type TargetOptions } from "./target.js";
import { runThroughput } from "./throughput.js";

const ROOT = resolve(import.meta.dirname, "..");
const SCENARIOS = ["latency", "throughput", "scale", "hook", "ratelimit", "fair", "policy", "consoles"] as const;
type Scenario = (typeof SCENARIOS)[number];

const PROFILES = {
  default: {
    latency: { n: 1000, warmup: 200, rounds: 3, paced: { n: 20, idleMs: 1000 } },
    throughput: { concurrency: 32, durationMs: 8000, warmupMs: 1500, rounds: 3 },
    scale: { levels: [1000, 5000, 10_000], warmup: 100, probes: 200 },
    hook: { n: 500, warmup: 50, rounds: 3 },
    ratelimit: { n: 60, tightTimeoutSeconds: 30 },
    fair: { flood: 90, timeoutSeconds: 45 },
    policy: { n: 1000, warmup: 200, rounds: 3 },
    consoles: { n: 300, warmup: 100, rounds: 3, clients: 100 },
    consoleRender: { n: 1000, rounds: 5 },
  },
  quick: {
    latency: { n: 100, warmup: 20, rounds: 2, paced: { n: 5, idleMs: 1000 } },
    throughput: { concurrency: 8, durationMs: 2000, warmupMs: 500, rounds: 2 },
    scale: { levels: [200, 1000], warmup: 20, probes: 20 },
    hook: { n: 50, warmup: 10, rounds: 2 },
    ratelimit: { n: 10, tightTimeoutSeconds: 5 },
    fair: { flood: 20, timeoutSeconds: 20 },
    policy: { n: 100, warmup: 20, rounds: 2 },
    consoles: { n: 50, warmup: 10, rounds: 2, clients: 100 },
    consoleRender: { n: 1000, rounds: 2 },
  },
};

const USAGE = `usage: npm run bench -- [--quick] [--only ${SCENARIOS.join(",")}] [--memory] [--redis] [--cluster] [--no-build] [--cpu-prof] [--log-level warn] [--write | --no-write] [--slack-burst 3] [--node-flag F …] [--scale-levels N,N]\n`;

function parseOptions(argv: string[]) {
  const { values } = parseArgs({
    args: argv,
    options: {
      quick: { type: "boolean", default: false },
      only: { type: "string", multiple: true },
      memory: { type: "boolean", default: false },
      redis: { type: "boolean", default: false },
      cluster: { type: "boolean", default: false },
      "no-build": { type: "boolean", default: false },
      "cpu-prof": { type: "boolean", default: false },
      "node-flag": { type: "string", multiple: true },
      "scale-levels": { type: "string" },
      "log-level": { type: "string" },
      write: { type: "boolean" },
      "no-write": { type: "boolean", default: false },
      "slack-burst": { type: "string", default: "3" },
      help: { type: "boolean", short: "h", default: false },
    },
    strict: true,
  });
  const only = (values.only ?? [])
    .flatMap((v) => v.split(","))
    .map((v) => v.trim())
    .filter(Boolean);
  const unknown = only.filter((v) => !(SCENARIOS as readonly string[]).includes(v));
  if (unknown.length > 0) throw new Error(`unknown --only ${unknown.join(", ")}; choose from ${SCENARIOS.join(", ")}`);
  const chosen = (["memory", "redis", "cluster"] as const).filter((store) => values[store]);
  const stores: StoreName[] = chosen.length > 0 ? [...chosen] : ["memory", "redis"];
  return {
    help: values.help,
    profile: values.quick ? ("quick" as const) : ("default" as const),
    scenarios: (only.length > 0 ? only : SCENARIOS) as readonly Scenario[],
    stores,
    build: !values["no-build"],
    nodeFlags: values["node-flag"] ?? [],
    scaleLevels: values["scale-levels"] === undefined ? undefined : values["scale-levels"].split(",").map((v) => positiveInteger("--scale-levels", v.trim())),
    cpuProfileDir: values["cpu-prof"] ? join(tmpdir(), `relay-bench-profiles-${process.pid}`) : undefined,
    /** LOG_LEVEL for the relay; unset: the relay's default (info), as `npm start` runs it. */
    logLevel: values["log-level"],
    /** Add the tables to bench/RESULTS.md: default runs do, quick ones only with --write. */
    write: !values["no-write"] && (values.write ?? !values.quick),
    slackBurst: positiveInteger("--slack-burst", values["slack-burst"]),
  };
}

function positiveInteger(name: string, value: string): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < 1) throw new Error(`${name} must be a positive integer, got ${value}`);
  return n;
}

const started = performance.now();
const progress = (scope: string) => (line: string) =>
  process.stderr.write(`[${((performance.now() - started) / 1000).toFixed(0).padStart(3)} s ${scope}] ${line}\n`);

function build(): void {
  progress("build")("npm run build …");
  const result = spawnSync("npm", ["run", "build"], { cwd: ROOT, encoding: "utf8" });
  if (result.status !== 0) throw new Error(`npm run build failed; fix it or pass --no-build to use the current dist/:\n${result.stdout}${result.stderr}`);
}

/** The admin token the consoles scenario's consoles sign in with (a read-only session each). */
const CONSOLE_ADMIN_TOKEN = randomBytes(24).toString("hex");

/** This run's Redis key prefix: the bench leaves nothing behind in a shared Redis. */
const REDIS_PREFIX = `bench-${process.pid}-${Date.now().toString(36)}`;

/** true when Redis answers. */
async function redisAvailable(url: string): Promise<boolean> {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1, retryStrategy: () => null });
  redis.on("error", () => undefined);
  try {
    await redis.connect();
    return (await redis.ping()) === "PONG";
  } catch {
    return false;
  } finally {
    redis.disconnect();
  }
}

/** Deletes every key of this run (SCAN + UNLINK); returns how many. */
async function removeBenchKeys(url: string): Promise<number> {
  const redis = new Redis(url, { maxRetriesPerRequest: 1 });
  let removed = 0;
  try {
    for await (const keys of redis.scanStream({ match: `${REDIS_PREFIX}:*`, count: 1000 })) {
      const batch = keys as string[];
      if (batch.length > 0) removed += await redis.unlink(...batch);
    }
  } finally {
    redis.disconnect();
  }
  return removed;
}

/** The Redis to measure against: REDIS_TEST_URL, or a throwaway redis-server; undefined when there is neither. */
async function openRedis(): Promise<{ url: string; server?: RedisServer } | undefined> {
  const log = progress("redis");
  const given = process.env.REDIS_TEST_URL;
  if (given) {
    if (await redisAvailable(given)) return { url: given };
    log("REDIS_TEST_URL does not answer: measuring the memory store only");
    return undefined;
  }
  const binary = findRedisServer();
  if (!binary) {
    log("no redis-server on the PATH and no REDIS_TEST_URL: measuring the memory store only");
    return undefined;
  }
  const server = await startRedisServer(binary);
  log(`throwaway redis-server at ${server.url}`);
  return { url: server.url, server };
}

/** A throwaway 3-master cluster; undefined (said why) when one cannot be started. */
async function openCluster(): Promise<RedisCluster | undefined> {
  const log = progress("cluster");
  if (!findRedisServer()) {
    log("no redis-server on the PATH: the cluster is not measured");
    return undefined;
  }
  try {
    const cluster = await startRedisCluster();
    log(`throwaway 3-master cluster at ${cluster.nodes}`);
    return cluster;
  } catch (error) {
    log(`could not start a cluster (${error instanceof Error ? error.message.split("\n")[0] : String(error)}): the cluster is not measured`);
    return undefined;
  }
}

async function runStore(store: StoreName, options: ReturnType<typeof parseOptions>, redisUrl: string, clusterNodes: string): Promise<StoreResults> {
  const settings = PROFILES[options.profile];
  const results: StoreResults = { store, problems: [] };
  for (const scenario of options.scenarios) {
    const log = progress(`${store} ${scenario}`);
    const target: TargetOptions = {
      store,
      root: ROOT,
      redisUrl,
      clusterNodes,
      redisPrefix: REDIS_PREFIX,
      ...(options.logLevel !== undefined ? { logLevel: options.logLevel } : {}),
      nodeFlags: [
        ...options.nodeFlags,
        ...(options.cpuProfileDir ? ["--cpu-prof", `--cpu-prof-dir=${options.cpuProfileDir}`, `--cpu-prof-name=relay-${store}-${scenario}.cpuprofile`] : []),
      ],
      // Slack's own limit on chat.postMessage: one a second per channel, short bursts tolerated, 429 + Retry-After: 1 beyond it.
      ...(scenario === "ratelimit" || scenario === "fair" ? { standIn: { postsPerSecond: 1, postBurst: options.slackBurst } } : {}),
      ...(scenario === "fair" ? { otherTokens: ["deploy"] } : {}),
      ...(scenario === "consoles" ? { env: { RELAY_ADMIN_TOKENS: `bench-console:${CONSOLE_ADMIN_TOKEN}` } } : {}),
    };
    try {
      // Two relays side by side (with and without a config file): the scenario starts them itself.
      if (scenario === "policy") results.policy = await runPolicy(target, settings.policy, log);
      // A fresh relay for each number of pending requests: the scenario starts them itself.
      else if (scenario === "scale")
        results.scale = await runScale(target, { ...settings.scale, ...(options.scaleLevels ? { levels: options.scaleLevels } : {}) }, log);
      else
        await withTarget(target, async ({ agent, relay, standIn, others }) => {
          log(`relay pid ${relay.pid} at ${relay.url.origin}`);
          if (scenario === "latency") results.latency = await runLatency(agent, { kind: "step_gate", root: ROOT, ...settings.latency }, log);
          if (scenario === "throughput") results.throughput = await runThroughput(agent, relay.cpuMs, { kind: "step_gate", ...settings.throughput }, log);
          if (scenario === "ratelimit") results.ratelimit = await runRateLimit(agent, standIn, { ...settings.ratelimit, slackBurst: options.slackBurst }, log);
          if (scenario === "fair") results.fair = await runFair(agent, others.get("deploy")!, standIn, settings.fair, log);
          if (scenario === "consoles") results.consoles = await runConsoles(agent, relay.url, CONSOLE_ADMIN_TOKEN, relay.cpuMs, settings.consoles, log);
          if (scenario === "hook") {
            const fixturePath = join(ROOT, "test", "fixtures", "claude-code", "pre-tool-use.json");
            results.hook = await runHook(agent, { ...settings.hook, fixturePath }, log);
          }
        });
      log("done");
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      log(`failed: ${message}`);
      results.problems.push(`${scenario} not measured: ${message.split("\n")[0]}`);
    }
    // The console's own page, once per run (local mode has the memory store whatever store is measured): with the first store.
    if (scenario === "consoles" && store === options.stores[0]) {
      try {
        results.consoleRender = await runConsoleRender(settings.consoleRender, progress("console render"));
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        progress("console render")(`failed: ${message}`);
        results.problems.push(`console render not measured: ${message.split("\n")[0]}`);
      }
    }
  }
  return results;
}

async function main(): Promise<number> {
  const options = parseOptions(process.argv.slice(2));
  if (options.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  const loadAtStart = loadavg()[0]!;
  if (options.build) build();
  const redis = options.stores.includes("redis") ? await openRedis() : undefined;
  if (options.stores.includes("redis") && !redis) options.stores = options.stores.filter((s) => s !== "redis");
  const cluster = options.stores.includes("cluster") ? await openCluster() : undefined;
  if (!cluster) options.stores = options.stores.filter((s) => s !== "cluster");
  const results: StoreResults[] = [];
  try {
    for (const store of options.stores) results.push(await runStore(store, options, redis?.url ?? "", cluster?.nodes ?? ""));
  } finally {
    await cluster?.stop();
    if (redis?.server) await redis.server.stop();
    else if (redis) progress("redis")(`removed ${await removeBenchKeys(redis.url)} keys under ${REDIS_PREFIX}:*`);
  }

  const cpuList = cpus();
  const machine: Machine = {
    cpus: cpuList.length,
    cpuModel: cpuList[0]?.model.trim() ?? "unknown CPU",
    node: process.versions.node,
    date: new Date().toISOString().slice(0, 10),
    profile: options.profile,
    load: [loadAtStart, loadavg()[0]!],
  };
  process.stdout.write(`\n${textReport(results, machine)}\n`);
  if (options.write) {
    const command = ["npm run bench", ...(process.argv.length > 2 ? ["--", ...process.argv.slice(2)] : [])].join(" ");
    await recordResults(join(ROOT, "bench", "RESULTS.md"), {
      heading: `${machine.date} — ${options.profile} run, Node ${machine.node}`,
      facts: [
        `Command: \`${command}\``,
        `Machine: ${machine.cpus} CPUs (${machine.cpuModel}), Node ${machine.node}; load average ${machine.load.map((l) => l.toFixed(1)).join(" → ")}`,
        `The relay as \`npm start\` runs it (${startScriptArgs(ROOT).join(" ")}), LOG_LEVEL ${options.logLevel ?? "info (its default)"}, RELAY_CREATE_RATE_LIMIT ${BENCH_CREATE_RATE_LIMIT} (the bench is one token sending what many agents would), against the bench's Slack Web API stand-in, all on loopback`,
        ...results.flatMap((r) => r.problems.map((p) => `Not measured (${r.store}): ${p}`)),
      ],
      tables: markdownByScenario(results),
    });
    process.stderr.write("bench: the tables were added to bench/RESULTS.md\n");
  }
  if (options.cpuProfileDir) process.stdout.write(`\nCPU profiles of the relay: ${options.cpuProfileDir}\n`);
  return results.some((r) => r.problems.length > 0) ? 1 : 0;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`bench: ${error instanceof Error ? error.message : String(error)}\n${USAGE}`);
    process.exitCode = 1;
  },
);
