/**
 * The relay under test, in a child process running the built code
 * (dist/main.js, plain node, no loader), so the bench's own client work does
 * not share its event loop or its heap. Listens on loopback only; stops on
 * SIGTERM, and by itself when the bench dies (its IPC channel closes). Its
 * memory is read from /proc/<pid>/status; on request (IPC) it also reports its
 * heap, after a full garbage collection when started with --expose-gc.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

export interface RelayProcessOptions {
  /** dist/main.js of the built relay. */
  mainPath: string;
  /** Environment the relay's loadConfig reads (SLACK_*, RELAY_TOKENS, REDIS_URL, LOG_LEVEL…). */
  env: Record<string, string>;
  /** Extra node flags, e.g. ["--cpu-prof", "--cpu-prof-dir=…"]. */
  nodeFlags?: string[];
}

export interface RelayProcess {
  /** Base URL, e.g. http://127.0.0.1:41234 */
  url: URL;
  pid: number;
  /** Resident set size in bytes (VmRSS). */
  rss(): number;
  /** Largest resident set size so far, in bytes (VmHWM). */
  peakRss(): number;
  /** CPU time used so far, user + system, in milliseconds. */
  cpuMs(): number;
  /** The relay's process.memoryUsage(), after a full GC when it runs with --expose-gc. */
  memoryUsage(): Promise<NodeJS.MemoryUsage>;
  /** The child's last output lines (for error reports). */
  output(): string;
  stop(): Promise<void>;
}

/** Runs inside the child: start the relay on loopback, print its URL, stop cleanly. */
const CHILD = `
const { startRelay } = await import(process.argv[1]);
const relay = await startRelay({ port: 0, host: "127.0.0.1" });
process.stdout.write("BENCH_RELAY_URL " + relay.url + "\\n");
let stopping = false;
const stop = () => {
  if (stopping) return;
  stopping = true;
  relay.close().finally(() => process.exit(0));
  setTimeout(() => process.exit(0), 5000).unref();
};
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
process.on("disconnect", stop);
process.on("message", () => {
  globalThis.gc?.();
  process.send({ memory: process.memoryUsage() });
});
`;

export async function startRelayProcess({ mainPath, env, nodeFlags = [] }: RelayProcessOptions): Promise<RelayProcess> {
  const child = spawn(process.execPath, [...nodeFlags, "--input-type=module", "-e", CHILD, pathToFileURL(mainPath).href], {
    env: { PATH: process.env.PATH ?? "", ...env },
    stdio: ["ignore", "pipe", "pipe", "ipc"],
  });
  const lines: string[] = [];
  const keep = (chunk: Buffer) => {
    lines.push(...chunk.toString("utf8").split("\n").filter(Boolean));
    if (lines.length > 40) lines.splice(0, lines.length - 40);
  };
  child.stderr!.on("data", keep);
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const url = await new Promise<URL>((resolve, reject) => {
    let buffer = "";
    const onData = (chunk: Buffer) => {
      keep(chunk);
      buffer += chunk.toString("utf8");
      const match = /BENCH_RELAY_URL (\S+)/.exec(buffer);
      if (match) {
        child.stdout!.off("data", onData);
        child.stdout!.on("data", keep);
        resolve(new URL(match[1]!));
      }
    };
    child.stdout!.on("data", onData);
    child.once("exit", (code) => reject(new Error(`the relay exited (${code}) before it started:\n${lines.join("\n")}`)));
    setTimeout(() => reject(new Error(`the relay did not start within 20 s:\n${lines.join("\n")}`)), 20_000).unref();
  }).catch(async (error: unknown) => {
    await kill(child, exited);
    throw error;
  });

  return {
    url,
    pid: child.pid!,
    rss: () => readStatus(child.pid!, "VmRSS"),
    peakRss: () => readStatus(child.pid!, "VmHWM"),
    cpuMs: () => readCpuMs(child.pid!),
    memoryUsage: () =>
      new Promise((resolve) => {
        child.once("message", (message) => resolve((message as { memory: NodeJS.MemoryUsage }).memory));
        child.send("memory");
      }),
    output: () => lines.join("\n"),
    stop: () => kill(child, exited),
  };
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
