/**
 * Open consoles against click-to-agent latency (issue 17.7): the same
 * back-to-back click cycle as ./latency.ts, with no console open and with
 * `clients` consoles' live streams open (GET /console/api/events, each its
 * own session from an admin token, read in a process of their own as
 * browser tabs would take them), in alternating rounds so that both see the same
 * machine. Every change (the create, its post, its end) reaches every
 * stream (those within one flush window of src/console/feed.ts as one
 * write, each request in its last state), so the cost shows. Target: the
 * median p50 with the consoles open within 10 % of the one without.
 */
import { spawn } from "node:child_process";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { clickToAgent } from "./latency.js";
import type { BenchAgent } from "./agent.js";
import { median, medianRound, summarize, type LatencySummary } from "./stats.js";

export interface ConsolesOptions {
  /** Clicks per round. */
  n: number;
  warmup: number;
  /** Rounds of each (without, with), alternating. */
  rounds: number;
  /** Consoles open in the rounds with them. */
  clients: number;
}

/** One side's rounds: latency, and the relay's CPU time per click (user + system, ms; the median round's), which load inflates far less than latency. */
export interface ConsolesSide {
  rounds: LatencySummary[];
  median: LatencySummary;
  cpuPerClickMs: number;
}

export interface ConsolesResult {
  clients: number;
  none: ConsolesSide;
  open: ConsolesSide;
  /** Change events the open consoles received in all (each hears every request that changed, once per flush window it changed in). */
  events: number;
}

/** The ratio the issue allows: with the consoles open, p50 ≤ 1.1 × without. */
export const CONSOLES_TARGET_RATIO = 1.1;

type Log = (line: string) => void;

/** A console's session from the admin token (a read-only one: it sees every change). */
async function consoleCookie(base: URL, adminToken: string): Promise<string> {
  const reply = await fetch(new URL("/console/api/signin/admin", base), {
    method: "POST",
    headers: { "content-type": "application/json", origin: base.origin },
    body: JSON.stringify({ token: adminToken }),
  });
  if (reply.status !== 200) throw new Error(`console sign-in answered ${reply.status}: ${await reply.text()}`);
  return reply.headers.getSetCookie()[0]!.split(";")[0]!;
}

/** The open consoles, in a child process (./console-clients.mjs): resolves once every stream has its headers; `stop` closes them and gives the events they received. */
async function openStreams(base: URL, cookies: string[]): Promise<{ stop(): Promise<number> }> {
  const child = spawn(process.execPath, [join(import.meta.dirname, "console-clients.mjs")], {
    env: { ...process.env, CONSOLE_BASE: base.origin, CONSOLE_COOKIES: JSON.stringify(cookies) },
    stdio: ["pipe", "pipe", "inherit"],
  });
  const lines = createInterface({ input: child.stdout! });
  const next = () =>
    new Promise<string>((resolve, reject) => {
      lines.once("line", resolve);
      child.once("exit", (code) => reject(new Error(`the console clients exited (${code})`)));
    });
  if ((await next()) !== "open") throw new Error("the console clients did not open");
  return {
    async stop() {
      const counted = next();
      child.stdin!.write("stop\n");
      return Number(await counted);
    },
  };
}

/** `relayCpuMs`: the relay's CPU time so far (ms). */
export async function runConsoles(
  agent: BenchAgent,
  base: URL,
  adminToken: string,
  relayCpuMs: () => number,
  options: ConsolesOptions,
  log: Log,
): Promise<ConsolesResult> {
  for (let i = 0; i < options.warmup; i += 1) await clickToAgent(agent, "step_gate");
  const cookies = await Promise.all(Array.from({ length: options.clients }, () => consoleCookie(base, adminToken)));
  let events = 0;
  const none = { rounds: [] as LatencySummary[], cpu: [] as number[] };
  const open = { rounds: [] as LatencySummary[], cpu: [] as number[] };
  const round = async (into: typeof none, name: string) => {
    const samples: number[] = [];
    const cpuBefore = relayCpuMs();
    for (let i = 0; i < options.n; i += 1) samples.push(await clickToAgent(agent, "step_gate"));
    const cpuPerClickMs = (relayCpuMs() - cpuBefore) / options.n;
    const summary = summarize(samples);
    into.rounds.push(summary);
    into.cpu.push(cpuPerClickMs);
    log(`${name}: p50 ${summary.p50.toFixed(2)} ms, p99 ${summary.p99.toFixed(2)} ms, relay CPU ${cpuPerClickMs.toFixed(2)} ms a click`);
  };
  for (let r = 1; r <= options.rounds; r += 1) {
    await round(none, `round ${r}, no console open`);
    const streams = await openStreams(base, cookies);
    try {
      await round(open, `round ${r}, ${options.clients} consoles open`);
    } finally {
      events += await streams.stop();
    }
  }
  const side = ({ rounds, cpu }: typeof none): ConsolesSide => ({ rounds, median: medianRound(rounds, (s) => s.p50), cpuPerClickMs: median(cpu) });
  return { clients: options.clients, none: side(none), open: side(open), events };
}
