/**
 * How long a start takes, from spawning the process to the first 200 from
 * GET /healthz, with the build current (`npm run bench:start`). Three ways,
 * interleaved round by round so load hits them alike:
 *   - relay:     `node dist/bundle/approval-relay.js serve` (the bundle; what the Dockerfile runs)
 *   - tsc:       `node dist/cli/main.js serve` (the unbundled tsc output, for comparison)
 *   - npm start: `npm start` (npm → sh → node, with the build check)
 *   - npm alone: `npm run env` (npm's own start, a script run and exit; none of our code)
 * The Slack Web API is a loopback stand-in answering auth.test; memory store.
 * A measurement, not a test: medians and spread of the rounds, with the load
 * average, for bench/RESULTS.md.
 *
 *   npm run bench:start -- [--rounds 15]
 */
import { spawn, spawnSync } from "node:child_process";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { cpus, loadavg, tmpdir } from "node:os";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { freePort } from "../test/helpers/ports.js";
import { until } from "../test/helpers/until.js";
import { median, ms, percentile } from "./stats.js";

const ROOT = resolve(import.meta.dirname, "..");
const { values } = parseArgs({ options: { rounds: { type: "string", default: "15" } } });
const rounds = Number(values.rounds);

const slack = createServer((req, res) => {
  req.resume();
  res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ ok: true, team: "T0BENCH", user: "relay" }));
});
await new Promise<void>((done) => slack.listen(0, "127.0.0.1", done));

const built = spawnSync(process.execPath, ["--import", "./scripts/ensure-build.mjs", "-e", ""], { cwd: ROOT, stdio: "inherit" });
if (built.status !== 0) throw new Error("the build failed");

function env(port: number): Record<string, string> {
  return {
    PATH: process.env.PATH ?? "",
    HOME: process.env.HOME ?? tmpdir(),
    SLACK_BOT_TOKEN: "xoxb-1-bench-start",
    SLACK_SIGNING_SECRET: "be4c5e1234567890abcdef1234567890",
    SLACK_API_URL: `http://127.0.0.1:${(slack.address() as AddressInfo).port}/api/`,
    RELAY_TOKENS: "bench:tok_bench_start_0123456789",
    LOG_LEVEL: "warn",
    PORT: String(port),
  };
}

/** Spawns `command`, polls /healthz every 2 ms, and returns ms from spawn to the first 200; stops the whole process group. */
async function timeToHealthy(command: string, args: string[]): Promise<number> {
  const port = await freePort();
  const started = performance.now();
  const child = spawn(command, args, { cwd: ROOT, env: env(port), detached: true, stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
  const exited = new Promise((done) => child.once("exit", done));
  try {
    const healthy = () => {
      if (child.exitCode !== null) throw new Error(`${command} ${args.join(" ")} exited ${child.exitCode}: ${stderr}`);
      return fetch(`http://127.0.0.1:${port}/healthz`).then(
        (r) => r.ok,
        () => false,
      );
    };
    await until(healthy, 20_000, () => `a healthy /healthz: ${stderr}`, 2);
    return performance.now() - started;
  } finally {
    process.kill(-child.pid!, "SIGTERM");
    await exited;
  }
}

/** Wall time of `npm run env` (a script npm has built in): npm's own start, script run and exit, none of our code. */
function npmOnly(): number {
  const started = performance.now();
  const result = spawnSync("npm", ["run", "--silent", "env"], { cwd: ROOT, env: env(0) });
  if (result.status !== 0) throw new Error(`npm run env failed: ${result.stderr.toString("utf8")}`);
  return performance.now() - started;
}

const samples = { tsc: [] as number[], relay: [] as number[], npmStart: [] as number[], npmOnly: [] as number[] };
const loadBefore = loadavg()[0]!;
for (let round = 0; round < rounds; round += 1) {
  samples.tsc.push(await timeToHealthy(process.execPath, ["dist/cli/main.js", "serve"]));
  samples.relay.push(await timeToHealthy(process.execPath, ["dist/bundle/approval-relay.js", "serve"]));
  samples.npmStart.push(await timeToHealthy("npm", ["start"]));
  samples.npmOnly.push(npmOnly());
  process.stderr.write(".");
}
process.stderr.write("\n");
const loadAfter = loadavg()[0]!;
slack.close();

const row = (name: string, values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return `| ${name.padEnd(42)} | ${ms(median(values)).padStart(6)} | ${ms(sorted[0]!).padStart(6)} | ${ms(percentile(sorted, 90)).padStart(6)} |`;
};
console.log(
  `Start → healthy /healthz, ms, ${rounds} rounds — ${new Date().toISOString().slice(0, 10)}, ${cpus().length} CPUs, Node ${process.versions.node}, load average ${loadBefore.toFixed(1)} → ${loadAfter.toFixed(1)}\n`,
);
console.log(`| ${"start".padEnd(42)} | median |    min |    p90 |`);
console.log(`| ${"-".repeat(42)} | -----: | -----: | -----: |`);
console.log(row("node dist/bundle/approval-relay.js serve", samples.relay));
console.log(row("node dist/cli/main.js serve (tsc output)", samples.tsc));
console.log(row("npm start", samples.npmStart));
console.log(row("npm run env (npm alone, no relay)", samples.npmOnly));
