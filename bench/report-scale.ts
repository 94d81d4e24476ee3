/**
 * The report's tables for the scale scenario (bench/scale.ts): memory with N
 * pending requests held by long-polls against issue 10's target (peak RSS
 * under 400 MB at 10,000, the relay started as `npm start` starts it), and
 * the cost per request at each N with the ratio of the largest N to the
 * smallest (flat is ≈ 1×).
 */
import type { StoreResults, Table } from "./report.js";
import type { ScaleLevel } from "./scale.js";
import { mark, mb, ms, ratio } from "./stats.js";

/** Peak RSS (VmHWM) a relay with 10,000 pending long-polls may reach (issue 10), bytes. */
export const SCALE_PEAK_BYTES = 400 * 1024 * 1024;

export function scaleTables(results: StoreResults[]): Table[] {
  return [memoryTable(results), costTable(results)];
}

function memoryTable(results: StoreResults[]): Table {
  const command = results[0]!.scale!.command;
  return {
    title: `Relay resident memory (VmRSS), MB, with N pending requests each held by a long-poll, all then answered by clicks (started as \`npm start\` does: \`${command}\`; a fresh relay per N; heap as /metrics reports it, no GC forced)`,
    header: [
      "store",
      "pending",
      "baseline",
      "+ requests",
      "+ long-polls",
      "heap used (held)",
      "after the clicks",
      "peak RSS (VmHWM)",
      "answered right",
      "target < 400 MB peak",
    ],
    rows: results.flatMap(({ store, scale }) =>
      scale!.levels.map((l) => [
        store,
        l.pending.toLocaleString("en"),
        mb(l.baseline.rss),
        mb(l.withRequests.rss),
        mb(l.withWaiters.rss),
        mb(l.withWaiters.heapUsed),
        mb(l.afterClicks.rss),
        mb(l.peakRss),
        `${l.answered.toLocaleString("en")} / ${l.pending.toLocaleString("en")}`,
        mark(l.peakRss < SCALE_PEAK_BYTES && l.answered === l.pending),
      ]),
    ),
  };
}

/** Per-request figures at one N. */
function costs(l: ScaleLevel): number[] {
  return [
    (l.withWaiters.rss - l.baseline.rss) / l.pending / 1024,
    (l.withWaiters.heapUsed - l.baseline.heapUsed) / l.pending / 1024,
    l.cpuPerCreateMs,
    l.cpuPerClickMs,
    l.create.p50,
    l.click.p50,
    l.click.p99,
  ];
}

function costTable(results: StoreResults[]): Table {
  const probes = results[0]!.scale!.levels[0]!.click.n;
  const cells = (values: number[]) => [values[0]!.toFixed(1), values[1]!.toFixed(1), ...values.slice(2).map(ms)];
  return {
    title: `Cost per request as pending requests grow (create and click → agent: ${probes} one at a time while the N are held; CPU: the relay's, creating the N 64 at once and answering them 16 at once); last row: largest N / smallest N`,
    header: [
      "store",
      "pending",
      "RSS KB per request + long-poll",
      "heap KB per request + long-poll",
      "CPU ms per create",
      "CPU ms per click",
      "create p50 ms",
      "click → agent p50 ms",
      "click → agent p99 ms",
    ],
    rows: results.flatMap(({ store, scale }) => {
      const levels = scale!.levels;
      const rows = levels.map((l) => [store, l.pending.toLocaleString("en"), ...cells(costs(l))]);
      if (levels.length < 2) return rows;
      const first = costs(levels[0]!);
      const last = costs(levels[levels.length - 1]!);
      const name = `${levels[levels.length - 1]!.pending.toLocaleString("en")} / ${levels[0]!.pending.toLocaleString("en")}`;
      return [...rows, [store, name, ...last.map((value, i) => ratio(value / first[i]!))]];
    }),
  };
}
