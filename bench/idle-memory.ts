/**
 * Where an idle relay's memory is: starts the relay as `npm start` does (Slack
 * mode, the bench's environment, memory store), runs 50 answered step gates
 * so the paths a click takes are loaded, waits, then reads /proc/<pid>/smaps
 * and prints its RSS by kind of mapping, next to the V8 heap (/metrics).
 * With --inspect also the scripts V8 has loaded and a heap snapshot summary.
 *
 *   npx tsx bench/idle-memory.ts [--wait s] [--inspect] [--snapshot file] [--node-flag F]… [--env K=V]…
 */
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { setTimeout as sleep } from "node:timers/promises";
import { Inspector } from "./inspector.js";
import { answeredCycle } from "./latency.js";
import { withTarget } from "./target.js";
import { freePort } from "../test/helpers/ports.js";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const { values } = parseArgs({
  options: {
    inspect: { type: "boolean", default: false },
    snapshot: { type: "string" },
    "node-flag": { type: "string", multiple: true },
    env: { type: "string", multiple: true },
    /** Print the relay's last lines of output (e.g. with --node-flag=--trace-gc). */
    output: { type: "boolean", default: false },
    cycles: { type: "string", default: "50" },
    /** Seconds idle after the cycles before reading (V8's memory reducer runs its collections some seconds after a mark-compact). */
    wait: { type: "string", default: "3" },
  },
});

interface Mapping {
  start: bigint;
  end: bigint;
  perms: string;
  path: string;
  rss: number;
  anon: number;
}

function readSmaps(pid: number): Mapping[] {
  const maps: Mapping[] = [];
  for (const line of readFileSync(`/proc/${pid}/smaps`, "utf8").split("\n")) {
    const head = /^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (head) {
      maps.push({ start: BigInt(`0x${head[1]}`), end: BigInt(`0x${head[2]}`), perms: head[3]!, path: head[4] ?? "", rss: 0, anon: 0 });
      continue;
    }
    const field = /^(Rss|Anonymous):\s+(\d+) kB/.exec(line);
    if (field && maps.length > 0) maps.at(-1)![field[1] === "Rss" ? "rss" : "anon"] += Number(field[2]) * 1024;
  }
  return maps;
}

/** glibc's per-thread arenas: 64 MB reserved at a 64 MB boundary, read-write from its start, the rest ---p. */
function classify(maps: Mapping[]): Map<string, number> {
  const kinds = new Map<string, number>();
  const add = (kind: string, bytes: number) => kinds.set(kind, (kinds.get(kind) ?? 0) + bytes);
  const ARENA = 64n << 20n;
  for (let i = 0; i < maps.length; i += 1) {
    const m = maps[i]!;
    if (m.path === "[heap]") add("glibc main arena ([heap])", m.rss);
    else if (m.path.endsWith("/node")) add(m.perms.includes("x") ? "node binary code" : "node binary data", m.rss);
    else if (m.path.startsWith("/")) add("other files (libraries)", m.rss);
    else if (m.path.startsWith("[stack")) add("stacks", m.rss);
    else if (m.path !== "") add(m.path, m.rss);
    else if (
      m.start % ARENA === 0n &&
      m.perms === "rw-p" &&
      maps[i + 1]?.start === m.end &&
      maps[i + 1]?.perms === "---p" &&
      maps[i + 1]!.end - m.start === ARENA
    )
      add("thread malloc arenas", m.rss);
    else add("other anonymous (V8 heap, code space, stacks of threads…)", m.rss);
  }
  return kinds;
}

const mb = (bytes: number) => (bytes / 1048576).toFixed(1);

async function main(): Promise<void> {
  const port = await freePort();
  const env = Object.fromEntries((values.env ?? []).map((kv) => [kv.slice(0, kv.indexOf("=")), kv.slice(kv.indexOf("=") + 1)]));
  await withTarget(
    {
      store: "memory",
      root: ROOT,
      redisUrl: "",
      clusterNodes: "",
      redisPrefix: "",
      env,
      nodeFlags: [...(values.inspect ? [`--inspect=127.0.0.1:${port}`] : []), ...(values["node-flag"] ?? [])],
    },
    async ({ agent, relay }) => {
      for (let i = 0; i < Number(values.cycles); i += 1) await answeredCycle(agent, "step_gate");
      await sleep(Number(values.wait) * 1000);
      const maps = readSmaps(relay.pid);
      const total = maps.reduce((sum, m) => sum + m.rss, 0);
      const heap = await relay.heap();
      console.log(`node ${relay.args.join(" ")}  ${JSON.stringify(env)}`);
      console.log(`RSS ${mb(total)} MB (VmRSS ${mb(relay.rss())}); V8 heap used ${mb(heap.heapUsed)} MB of ${mb(heap.heapTotal)} MB`);
      for (const [kind, bytes] of [...classify(maps)].sort((a, b) => b[1] - a[1])) if (bytes >= 1 << 20) console.log(`  ${mb(bytes).padStart(6)}  ${kind}`);
      console.log(`V8 spaces, used / size MB: ${await spaces(relay.url)}`);
      if (values.inspect) await inspect(port);
      if (values.output) console.log(relay.output());
    },
  );
}

/** Each V8 heap space's used and total size, from the relay's /metrics (prom-client's nodejs_heap_space_size_*). */
async function spaces(base: URL): Promise<string> {
  const text = await (await fetch(new URL("/metrics", base))).text();
  const read = (kind: string) =>
    new Map([...text.matchAll(new RegExp(`^nodejs_heap_space_size_${kind}_bytes\\{space="(\\w+)"\\} (\\d+)`, "gm"))].map((m) => [m[1]!, Number(m[2])]));
  const used = read("used");
  return [...read("total")]
    .filter(([, size]) => size > 0)
    .map(([space, size]) => `${space} ${mb(used.get(space) ?? 0)} / ${mb(size)}`)
    .join(", ");
}

async function inspect(port: number): Promise<void> {
  const inspector = await Inspector.open(port);
  const scripts: Array<{ url: string; length: number }> = [];
  const chunks: string[] = [];
  inspector.on<{ url: string; length: number }>("Debugger.scriptParsed", (script) => scripts.push(script));
  inspector.on<{ chunk: string }>("HeapProfiler.addHeapSnapshotChunk", ({ chunk }) => chunks.push(chunk));
  await inspector.call("Debugger.enable");
  await sleep(500);
  const bundle = scripts.filter((s) => s.url.includes("dist/bundle"));
  console.log(`scripts loaded from dist/bundle (${bundle.length}), source characters:`);
  for (const s of bundle.sort((a, b) => b.length - a.length)) console.log(`  ${String(s.length).padStart(8)}  ${s.url.replace(/.*dist\/bundle\//, "")}`);
  await inspector.call("Debugger.disable");
  await inspector.call("HeapProfiler.takeHeapSnapshot", { reportProgress: false });
  inspector.close();
  const text = chunks.join("");
  if (values.snapshot) writeFileSync(values.snapshot, text);
  summarize(JSON.parse(text) as Snapshot);
}

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[]] }; node_count: number };
  nodes: number[];
  strings: string[];
}

/** Self size by node type, and the largest constructor names / strings. */
function summarize(s: Snapshot): void {
  const fields = s.snapshot.meta.node_fields;
  const width = fields.length;
  const typeAt = fields.indexOf("type");
  const nameAt = fields.indexOf("name");
  const sizeAt = fields.indexOf("self_size");
  const types = s.snapshot.meta.node_types[0];
  const byType = new Map<string, number>();
  const byName = new Map<string, number>();
  let total = 0;
  for (let i = 0; i < s.nodes.length; i += width) {
    const type = types[s.nodes[i + typeAt]!]!;
    const size = s.nodes[i + sizeAt]!;
    total += size;
    byType.set(type, (byType.get(type) ?? 0) + size);
    const name =
      type === "string" || type === "concatenated string" || type === "sliced string"
        ? `(string) ${s.strings[s.nodes[i + nameAt]!]!.slice(0, 60).replace(/\s+/g, " ")}`
        : `${type}: ${s.strings[s.nodes[i + nameAt]!]!.slice(0, 60)}`;
    byName.set(name, (byName.get(name) ?? 0) + size);
  }
  console.log(`heap snapshot: ${mb(total)} MB in ${s.nodes.length / width} objects`);
  for (const [type, size] of [...byType].sort((a, b) => b[1] - a[1]).slice(0, 12)) console.log(`  ${mb(size).padStart(6)}  ${type}`);
  console.log("largest by name:");
  for (const [name, size] of [...byName].sort((a, b) => b[1] - a[1]).slice(0, 30)) console.log(`  ${mb(size).padStart(6)}  ${name}`);
}

await main();
