/**
 * The benchmark's output: one readable table per measurement on stdout, and
 * the same figures as a markdown block to paste into bench/RESULTS.md, with the
 * machine they were measured on and whether each target was met.
 */
import { CONSOLE_RENDER_TARGET_MS, type ConsoleRenderResult } from "./console-render.js";
import { CONSOLES_TARGET_RATIO, type ConsolesResult } from "./consoles.js";
import { FAIR_TARGET_MS, type FairResult } from "./fair.js";
import type { HookResult } from "./hook.js";
import type { LatencyResult, Series } from "./latency.js";
import type { PolicyResult } from "./policy.js";
import type { RateLimitResult } from "./ratelimit.js";
import { policyTables } from "./report-policy.js";
import { scaleTables } from "./report-scale.js";
import type { ScaleResult } from "./scale.js";
import { mark, ms, ratio } from "./stats.js";
import type { StoreName } from "./target.js";
import type { ThroughputResult } from "./throughput.js";

export interface StoreResults {
  store: StoreName;
  latency?: LatencyResult;
  throughput?: ThroughputResult;
  scale?: ScaleResult;
  hook?: HookResult;
  ratelimit?: RateLimitResult;
  fair?: FairResult;
  policy?: PolicyResult;
  consoles?: ConsolesResult;
  /** The web console loading a full queue in Chromium (local mode, once per run). */
  consoleRender?: ConsoleRenderResult;
  /** Measurements that could not be made, and why. */
  problems: string[];
}

export interface Machine {
  cpus: number;
  cpuModel: string;
  node: string;
  date: string;
  /** e.g. "default" or "quick". */
  profile: string;
  /** 1-minute load average when the bench started and when it ended (other work on a shared machine). */
  load: [number, number];
}

/** Click-to-agent p50 per store (issue 6: ≤ 2 ms memory, ≤ 3 ms Redis, a cluster as one Redis) and p99 for all, in ms; hook/core ratio. */
export const TARGETS = { p50: { memory: 2, redis: 3, cluster: 3 }, p99: 10, hookRatio: 2, postSecondsOver: 5, postCallsOver: 10 } as const;

export interface Table {
  title: string;
  header: string[];
  rows: string[][];
}

/** The scenario each table belongs to (bench/RESULTS.md has a section per scenario). */
export type ScenarioName = "latency" | "throughput" | "scale" | "hook" | "ratelimit" | "fair" | "policy" | "consoles";

export interface ScenarioTable extends Table {
  scenario: ScenarioName;
}

function latencyTable(latency: StoreResults[]): Table {
  const first = latency[0]!.latency!;
  const idle = first.paced.idleMs;
  const row = (store: StoreName, pace: string, relay: Series, floor: Series, targets: string): string[] => [
    store,
    pace,
    ms(relay.median.p50),
    ms(relay.median.p90),
    ms(relay.median.p99),
    ms(relay.median.max),
    ms(floor.median.p50),
    ms(floor.median.p99),
    ratio(relay.median.p50 / floor.median.p50),
    relay.rounds.map((r) => ms(r.p50)).join(" / "),
    targets,
  ];
  return {
    title: `Click-to-agent latency, ms (${first.kind}; ${first.median.n} clicks back to back and ${first.paced.relay.median.n} clicks ${idle} ms after their message × ${first.rounds.length} rounds; median round; each round followed by the loopback floor's)`,
    header: [
      "store",
      "click",
      "p50",
      "p90",
      "p99",
      "max",
      "floor p50",
      "floor p99",
      "p50 / floor",
      "p50 of rounds",
      "target p50 ≤ 2 (memory) / 3 (redis, cluster), p99 ≤ 10",
    ],
    rows: latency.flatMap(({ store, latency: l }) => [
      row(store, "back to back", l!, l!.floor, `${mark(l!.median.p50 <= TARGETS.p50[store])} ${mark(l!.median.p99 <= TARGETS.p99)}`),
      row(store, `${idle} ms after`, l!.paced.relay, l!.paced.floor, "(wake-up: see the floor)"),
    ]),
  };
}

function tables(results: StoreResults[]): ScenarioTable[] {
  const out: ScenarioTable[] = [];
  const latency = results.filter((r) => r.latency);
  if (latency.length > 0) out.push({ scenario: "latency", ...latencyTable(latency) });
  const throughput = results.filter((r) => r.throughput);
  if (throughput.length > 0) {
    const first = throughput[0]!.throughput!;
    out.push({
      scenario: "throughput",
      title: `Throughput: requests created + answered per second (concurrency ${first.concurrency}, ${first.durationMs / 1000} s × ${first.rounds.length} rounds; median round)`,
      header: ["store", "req/s", "relay CPU ms/req", "cycle p50 ms", "cycle p99 ms", "req/s of rounds"],
      rows: throughput.map(({ store, throughput: t }) => [
        store,
        t!.median.perSecond.toFixed(0),
        t!.median.relayCpuMs.toFixed(2),
        ms(t!.median.cycle.p50),
        ms(t!.median.cycle.p99),
        t!.rounds.map((r) => r.perSecond.toFixed(0)).join(" / "),
      ]),
    });
  }
  const scale = results.filter((r) => r.scale);
  if (scale.length > 0) out.push(...scaleTables(scale).map((table) => ({ scenario: "scale" as const, ...table })));
  const hook = results.filter((r) => r.hook);
  if (hook.length > 0) {
    const first = hook[0]!.hook!;
    out.push({
      scenario: "hook",
      title: `Claude Code hook: click → hook reply vs click → long-poll, ms (PreToolUse; ${first.median.hook.n} + ${first.median.core.n} interleaved × ${first.rounds.length} rounds)`,
      header: ["store", "hook p50", "hook p99", "core p50", "core p99", "ratio p50", "ratio p99", "target ≤ 2×"],
      rows: hook.map(({ store, hook: h }) => [
        store,
        ms(h!.median.hook.p50),
        ms(h!.median.hook.p99),
        ms(h!.median.core.p50),
        ms(h!.median.core.p99),
        ratio(h!.ratioP50),
        ratio(h!.ratioP99),
        `${mark(h!.ratioP50 <= TARGETS.hookRatio)} ${mark(h!.ratioP99 <= TARGETS.hookRatio)}`,
      ]),
    });
  }
  const ratelimit = results.filter((r) => r.ratelimit);
  if (ratelimit.length > 0) {
    const first = ratelimit[0]!.ratelimit!;
    out.push({
      scenario: "ratelimit",
      title: `Slack rate limit: ${first.n} requests at once to one channel, Slack allowing 1 post/s per channel, ${first.slackBurst === 1 ? "no bursts" : `bursts of ${first.slackBurst}`} (429 + Retry-After: 1 beyond)`,
      header: [
        "store",
        "all posted, s",
        "chat.postMessage calls",
        "refused (429)",
        `target ≤ ${first.n + TARGETS.postSecondsOver} s, ≤ ${first.n + TARGETS.postCallsOver} calls`,
        `with timeout ${first.tight.timeoutSeconds} s: posted / expired unposted / failed`,
        "how the unposted ended",
      ],
      rows: ratelimit.map(({ store, ratelimit: r }) => [
        store,
        (r!.allPostedMs / 1000).toFixed(1),
        String(r!.postCalls),
        String(r!.refused),
        `${mark(r!.allPostedMs <= (r!.n + TARGETS.postSecondsOver) * 1000)} ${mark(r!.postCalls <= r!.n + TARGETS.postCallsOver)}`,
        `${r!.tight.posted} / ${r!.tight.expired} / ${r!.tight.failed}`,
        r!.tight.expiredErrors.join("; "),
      ]),
    });
  }
  const fair = results.filter((r) => r.fair);
  if (fair.length > 0) {
    const first = fair[0]!.fair!;
    out.push({
      scenario: "fair",
      title: `Fair posting: one token creates ${first.flood} requests at once to a channel, then another token asks there (timeout ${first.timeoutSeconds} s), Slack allowing 1 post/s per channel`,
      header: ["store", "other token's question posted after, s", "of the flood before it", `target ≤ ${FAIR_TARGET_MS / 1000} s`],
      rows: fair.map(({ store, fair: f }) => [store, (f!.postedAfterMs / 1000).toFixed(1), String(f!.floodBefore), mark(f!.postedAfterMs <= FAIR_TARGET_MS)]),
    });
  }
  const consoles = results.filter((r) => r.consoles);
  if (consoles.length > 0) {
    const first = consoles[0]!.consoles!;
    out.push({
      scenario: "consoles",
      title: `Open web consoles: click-to-agent latency, ms (step_gate; ${first.none.median.n} clicks back to back × ${first.none.rounds.length} rounds each, no console open and ${first.clients} consoles' live streams open, alternating; median round)`,
      header: [
        "store",
        "p50 none open",
        "p99 none open",
        `p50 ${first.clients} open`,
        `p99 ${first.clients} open`,
        "ratio p50",
        "relay CPU a click, ms: none / open",
        "events received",
        `target ≤ ${CONSOLES_TARGET_RATIO}×`,
      ],
      rows: consoles.map(({ store, consoles: c }) => {
        const r = c!.open.median.p50 / c!.none.median.p50;
        return [
          store,
          ms(c!.none.median.p50),
          ms(c!.none.median.p99),
          ms(c!.open.median.p50),
          ms(c!.open.median.p99),
          ratio(r),
          `${c!.none.cpuPerClickMs.toFixed(2)} / ${c!.open.cpuPerClickMs.toFixed(2)}`,
          String(c!.events),
          mark(r <= CONSOLES_TARGET_RATIO),
        ];
      }),
    });
  }
  const render = results.find((r) => r.consoleRender)?.consoleRender;
  if (render) {
    out.push({
      scenario: "consoles",
      title: `Web console: ${render.n.toLocaleString("en-US")} pending requests on screen, ms from the page's navigation start to all ${render.n.toLocaleString("en-US")} cards in the document (Debian's Chromium, headless; the relay as \`npm start\` runs it with no Slack settings: local mode, memory store; ${render.loadsMs.length} loads after an untimed first)`,
      header: ["pending", "median", "min", "max", "each load", `target < ${CONSOLE_RENDER_TARGET_MS} ms`],
      rows: [
        [
          render.n.toLocaleString("en-US"),
          render.medianMs.toFixed(0),
          Math.min(...render.loadsMs).toFixed(0),
          Math.max(...render.loadsMs).toFixed(0),
          render.loadsMs.map((v) => v.toFixed(0)).join(" / "),
          mark(render.medianMs < CONSOLE_RENDER_TARGET_MS),
        ],
      ],
    });
  }
  const policy = results.filter((r) => r.policy);
  if (policy.length > 0) out.push(...policyTables(policy).map((table) => ({ scenario: "policy" as const, ...table })));
  return out;
}

function machineLine(machine: Machine): string {
  const load = machine.load.map((l) => l.toFixed(1)).join(" → ");
  return `${machine.date}, ${machine.cpus} CPUs (${machine.cpuModel}), Node ${machine.node}, load average ${load}, ${machine.profile} run; relay in its own process, Slack Web API stand-in, all on loopback`;
}

function problemsOf(results: StoreResults[]): string[] {
  return results.flatMap((r) => r.problems.map((p) => `${r.store}: ${p}`));
}

export function textReport(results: StoreResults[], machine: Machine): string {
  const lines = [`Machine: ${machineLine(machine)}`, ""];
  for (const table of tables(results)) {
    const widths = table.header.map((h, i) => Math.max(h.length, ...table.rows.map((row) => (row[i] ?? "").length)));
    const line = (cells: string[]) =>
      cells
        .map((cell, i) => cell.padEnd(widths[i]!))
        .join("  ")
        .trimEnd();
    lines.push(table.title, line(table.header), widths.map((w) => "-".repeat(w)).join("  "), ...table.rows.map(line), "");
  }
  for (const problem of problemsOf(results)) lines.push(`! ${problem}`);
  return lines.join("\n");
}

/** The markdown of each scenario's tables, for its section of bench/RESULTS.md. */
export function markdownByScenario(results: StoreResults[]): Map<ScenarioName, string> {
  const out = new Map<ScenarioName, string>();
  for (const table of tables(results)) {
    const lines = [`**${table.title}**`, "", `| ${table.header.join(" | ")} |`, `|${table.header.map(() => "---").join("|")}|`];
    lines.push(...table.rows.map((row) => `| ${row.join(" | ")} |`));
    out.set(table.scenario, [out.get(table.scenario), lines.join("\n")].filter(Boolean).join("\n\n"));
  }
  return out;
}
