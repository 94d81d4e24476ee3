/**
 * The relay under test, in a child process started exactly as the README's
 * quick start starts it: the command of package.json's `start` script
 * (`node --import ./scripts/ensure-build.mjs dist/bundle/approval-relay.js
 * serve`: the bundle, the CLI's `serve`, the same node flags), read from
 * package.json so the two cannot drift, and spawned with this node directly
 * (not through npm) so its pid is the relay's own. How the process is started
 * changes its memory (V8 sizes its heap by what it is given), so figures taken
 * from any other start would not be the ones a user gets. It listens on PORT
 * (a free loopback port); stops on SIGTERM (the CLI's graceful shutdown), and
 * when the bench exits. Its memory is read from /proc/<pid>/status, its heap
 * from the relay's own GET /metrics (prom-client's Node.js metrics), so no
 * flag is added for the bench (no --expose-gc: heap figures are as they are,
 * garbage not yet collected included).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { appendFileSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { freePort } from "../test/helpers/ports.js";
import { until } from "../test/helpers/until.js";

export interface RelayProcessOptions {
  /** The repository root: package.json's `start` script runs from here. */
  root: string;
  /** Environment the relay's loadConfig reads (SLACK_*, RELAY_TOKENS, REDIS_URL, LOG_LEVEL…); PORT is set here. */
  env: Record<string, string>;
  /** Listen on this port (a relay started again where its clients and proxies know it); default: a free one. */
  port?: number;
  /** Append everything the relay writes (stdout and stderr) to this file. */
  logFile?: string;
  /** Extra node flags, put before the start script's own, e.g. ["--cpu-prof", "--cpu-prof-dir=…"]. */
  nodeFlags?: string[];
}

/** The V8 heap as the relay's /metrics reports it, in bytes. */
export interface HeapReading {
  heapUsed: number;
  heapTotal: number;
}

export interface RelayProcess {
  /** Base URL, e.g. http://127.0.0.1:41234 */
  url: URL;
  pid: number;
  /** The node arguments it was started with (for the report). */
  args: string[];
  /** Resident set size in bytes (VmRSS). */
  rss(): number;
  /** Largest resident set size so far, in bytes (VmHWM). */
  peakRss(): number;
  /** CPU time used so far, user + system, in milliseconds. */
  cpuMs(): number;
  /** The relay's heap (nodejs_heap_size_*_bytes of GET /metrics), as it is: no collection forced. */
  heap(): Promise<HeapReading>;
  /** The child's last output lines (for error reports). */
  output(): string;
  stop(): Promise<void>;
}

/** The node arguments of package.json's `start` script ("node <args>"); anything else is refused. */
export function startScriptArgs(root: string): string[] {
  const { scripts } = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { scripts?: Record<string, string> };
  const words = (scripts?.start ?? "").trim().split(/\s+/);
  if (words[0] !== "node" || words.some((w) => /["'$&|;<>`]/.test(w))) {
    throw new Error(`package.json's start script must be a plain "node <args>" command for the bench to start it the same way, got: ${scripts?.start}`);
  }
  return words.slice(1);
}

/** Relays still running; stopped when the bench exits, whatever the reason. */
const running = new Set<ChildProcess>();
process.once("exit", () => {
  for (const child of running) child.kill("SIGKILL");
});
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    for (const child of running) child.kill("SIGKILL");
    process.exit(130);
  });
}

export async function startRelayProcess({ root, env, port: fixedPort, logFile, nodeFlags = [] }: RelayProcessOptions): Promise<RelayProcess> {
  const port = fixedPort ?? (await freePort());
  const url = new URL(`http://127.0.0.1:${port}`);
  const args = [...nodeFlags, ...startScriptArgs(root)];
  const child = spawn(process.execPath, args, {
    cwd: root,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", ...env, PORT: String(port) },
    stdio: ["ignore", "pipe", "pipe"],
  });
  running.add(child);
  const lines: string[] = [];
  const keep = (chunk: Buffer) => {
    if (logFile !== undefined) appendFileSync(logFile, chunk);
    lines.push(...chunk.toString("utf8").split("\n").filter(Boolean));
    if (lines.length > 40) lines.splice(0, lines.length - 40);
  };
  child.stdout!.on("data", keep);
  child.stderr!.on("data", keep);
  const exited = new Promise<void>((resolve) =>
    child.once("exit", () => {
      running.delete(child);
      resolve();
    }),
  );
  try {
    await untilHealthy(url, child, lines);
  } catch (error) {
    await kill(child, exited);
    throw error;
  }

  return {
    url,
    pid: child.pid!,
    args,
    rss: () => readStatus(child.pid!, "VmRSS"),
    peakRss: () => readStatus(child.pid!, "VmHWM"),
    cpuMs: () => readCpuMs(child.pid!),
    heap: () => readHeap(url, env.METRICS_TOKEN),
    output: () => lines.join("\n"),
    stop: () => kill(child, exited),
  };
}

/** Polls GET /healthz until a 200; fails when the relay exits first or takes over 60 s (a build may run first). */
async function untilHealthy(url: URL, child: ChildProcess, lines: string[]): Promise<void> {
  const healthy = async () => {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`the relay exited (${child.exitCode ?? child.signalCode}) before it started:\n${lines.join("\n")}`);
    return fetch(new URL("/healthz", url)).then(
      (r) => r.ok,
      () => false,
    );
  };
  await until(healthy, 60_000, () => `the relay to answer /healthz:\n${lines.join("\n")}`, 20);
}

/** nodejs_heap_size_used_bytes and nodejs_heap_size_total_bytes from GET /metrics. */
async function readHeap(url: URL, token: string | undefined): Promise<HeapReading> {
  const response = await fetch(new URL("/metrics", url), token === undefined ? {} : { headers: { authorization: `Bearer ${token}` } });
  if (!response.ok) throw new Error(`GET /metrics: HTTP ${response.status}`);
  const text = await response.text();
  const gauge = (name: string) => {
    const match = new RegExp(`^${name} (\\S+)`, "m").exec(text);
    if (!match) throw new Error(`GET /metrics has no ${name}`);
    return Number(match[1]);
  };
  return { heapUsed: gauge("nodejs_heap_size_used_bytes"), heapTotal: gauge("nodejs_heap_size_total_bytes") };
}

/** SIGTERM, then SIGKILL when the relay has not exited within 8 s. */
async function kill(child: ChildProcess, exited: Promise<void>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 8000);
  await exited;
  clearTimeout(timer);
}

/** A "<field>: N kB" line of /proc/<pid>/status, in bytes. */
function readStatus(pid: number, field: "VmRSS" | "VmHWM"): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const match = new RegExp(`^${field}:\\s+(\\d+)\\s+kB`, "m").exec(status);
  if (!match) throw new Error(`no ${field} in /proc/${pid}/status`);
  return Number(match[1]) * 1024;
}

/** utime + stime from /proc/<pid>/stat, in clock ticks of 10 ms (USER_HZ is 100 on Linux). */
export function readCpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10;
}
