/**
 * What a held long-poll costs the relay, heap and native: the relay started
 * as `npm start` starts it (with --inspect), N step gates created, then a
 * reading; then each held by a `GET /v1/requests/:id?wait=60` on a
 * keep-alive connection of its own, and a second reading; then all are
 * answered by clicks (checked). A reading is /proc/<pid>/smaps (RSS by kind
 * of mapping: `heap` is glibc's main arena, where Node's native per-connection
 * objects go; `anon` the other anonymous mappings: V8's pages, the other
 * threads' arenas) and, with --snapshot, a heap snapshot summed by
 * constructor (it collects garbage first, so it does not depend on when V8
 * last did). Prints the difference per held long-poll. A snapshot allocates
 * native memory in the relay, so take smaps figures from a run without it.
 *
 *   npx tsx bench/held-mem.ts [--n 2000] [--snapshot] [--save prefix] [--node-flag …]
 *
 * HELD_MEM_PAUSE=file: writes the file and waits until it is removed after
 * creating and after holding (to read the relay with other tools then);
 * HELD_MEM_HEAPTRACK=file: runs the relay with heaptrack's preload library
 * recording every malloc to that file (`heaptrack_interpret < file`).
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { setTimeout as sleep } from "node:timers/promises";
import { answeredCycle } from "./latency.js";
import { keepAliveAgent } from "./http.js";
import { clickAll, createStepGates, holdAll, Inspector, PROFILE_OPTIONS, withInspectedRelay, type SnapshotSums } from "./inspector.js";
import { Action } from "../src/slack/ids.js";

const { values } = parseArgs({
  options: {
    ...PROFILE_OPTIONS,
    snapshot: { type: "boolean", default: false },
    save: { type: "string" },
  },
});
const N = Number(values.n);
const REPLIES = [Action.stepYes, Action.stepNo, Action.stepStop];

/** RSS in KB by kind of mapping. */
function smaps(pid: number): Record<string, number> {
  const out: Record<string, number> = { heap: 0, anon: 0, file: 0, total: 0 };
  let kind = "anon";
  for (const line of readFileSync(`/proc/${pid}/smaps`, "utf8").split("\n")) {
    const head = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (head) {
      const name = head[1]!;
      kind = name === "[heap]" ? "heap" : name.startsWith("/") ? "file" : "anon";
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss) {
      out[kind]! += Number(rss[1]);
      out.total! += Number(rss[1]);
    }
  }
  return out;
}

async function pause(what: string): Promise<void> {
  const file = process.env.HELD_MEM_PAUSE;
  if (!file) return;
  writeFileSync(file, what);
  console.log(`paused: ${what}; rm ${file} to go on`);
  while (existsSync(file)) await sleep(200);
}

function printSnapshots(before: SnapshotSums, after: SnapshotSums): void {
  const rows = [...after].map(([name, a]) => {
    const b = before.get(name) ?? { count: 0, size: 0 };
    return { name, count: a.count - b.count, size: a.size - b.size };
  });
  const total = rows.reduce((sum, row) => sum + row.size, 0);
  console.log(`\nheap snapshot: ${(total / N).toFixed(0)} bytes per held long-poll (self sizes)`);
  for (const row of rows.sort((x, y) => y.size - x.size).slice(0, 40)) {
    console.log(`${(row.size / N).toFixed(0).padStart(6)} B  ${(row.count / N).toFixed(2).padStart(6)}×  ${row.name}`);
  }
}

async function main(): Promise<void> {
  const heaptrack = process.env.HELD_MEM_HEAPTRACK;
  const env: Record<string, string> = heaptrack ? { LD_PRELOAD: "/usr/lib/heaptrack/libheaptrack_preload.so", DUMP_HEAPTRACK_OUTPUT: heaptrack } : {};
  await withInspectedRelay(
    values,
    "mem",
    `heldmem-${process.pid}`,
    async ({ agent, others, relay }, port) => {
      for (let i = 0; i < 100; i += 1) await answeredCycle(agent, "step_gate");
      const created = await createStepGates([...others.values()], N);
      const inspector = await Inspector.open(port);
      await sleep(2000);
      await pause(`${relay.pid} created`);
      const before = smaps(relay.pid);
      const snapBefore = values.snapshot ? await inspector.snapshot(values.save && `${values.save}-created.heapsnapshot`) : undefined;
      const held = keepAliveAgent();
      const holds = holdAll(created, held);
      await sleep(4000);
      await pause(`${relay.pid} held`);
      const after = smaps(relay.pid);
      const snapAfter = values.snapshot ? await inspector.snapshot(values.save && `${values.save}-held.heapsnapshot`) : undefined;
      inspector.close();
      const per = (kb: number) => ((kb * 1024) / N).toFixed(0).padStart(7);
      console.log(`${N} held; RSS KB created → held; bytes per held long-poll`);
      for (const key of Object.keys(before))
        console.log(`${key.padEnd(6)} ${String(before[key]).padStart(8)} → ${String(after[key]).padStart(8)}  ${per(after[key]! - before[key]!)}`);
      if (snapBefore && snapAfter) printSnapshots(snapBefore, snapAfter);
      await clickAll(agent, created, REPLIES);
      const views = await holds;
      if (views.some((view) => view.status === "pending")) throw new Error("a long-poll came back pending");
      held.destroy();
    },
    env,
  );
}

await main();
