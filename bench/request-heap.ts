/**
 * What a pending request keeps on the relay's heap: the relay started as
 * `npm start` starts it (with --inspect), warmed up, a heap snapshot taken,
 * N step gates created as the other profiling tools create them (each to a
 * channel of its own, posted to the Slack stand-in), and a second
 * snapshot taken. Objects in the second that were not in the first (by
 * snapshot node id; a snapshot collects garbage first) are summed by
 * constructor and by the first retainer that is not an internal link, and
 * printed per request.
 *
 *   npx tsx bench/request-heap.ts [--redis] [--n 2000] [--out dir]
 *   npx tsx bench/request-heap.ts --from dir [--n 2000]   (the snapshots of an earlier --out)
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { setTimeout as sleep } from "node:timers/promises";
import { answeredCycle } from "./latency.js";
import { createStepGates, Inspector, PROFILE_OPTIONS, withInspectedRelay } from "./inspector.js";

const { values } = parseArgs({
  options: {
    ...PROFILE_OPTIONS,
    /** Analyse the snapshots an earlier run wrote with --out (give the same --n). */
    from: { type: "string" },
  },
});
const N = Number(values.n);

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[]]; edge_fields: string[]; edge_types: [string[]] } };
  nodes: number[];
  edges: number[];
  strings: string[];
}

async function main(): Promise<void> {
  await withInspectedRelay(values, "heap", `reqheap-${process.pid}-${Date.now().toString(36)}`, async ({ agent, others }, port) => {
    for (let i = 0; i < 100; i += 1) await answeredCycle(agent, "step_gate");
    // One request per token first, so what a token costs once (its rate-limit bucket, its set) is in the baseline.
    const agents = [...others.values()];
    await createStepGates(agents, agents.length);
    await sleep(1000);
    const inspector = await Inspector.open(port);
    const before = await inspector.snapshotText();
    await createStepGates(agents, N);
    await sleep(2000);
    const after = await inspector.snapshotText();
    inspector.close();
    if (values.out) {
      mkdirSync(values.out, { recursive: true });
      writeFileSync(join(values.out, "before.heapsnapshot"), before);
      writeFileSync(join(values.out, "after.heapsnapshot"), after);
    }
    report(JSON.parse(before) as Snapshot, JSON.parse(after) as Snapshot);
  });
}

function report(before: Snapshot, after: Snapshot): void {
  const meta = after.snapshot.meta;
  const nf = meta.node_fields.length;
  const ef = meta.edge_fields.length;
  const [TYPE, NAME, ID, SIZE, EDGES] = ["type", "name", "id", "self_size", "edge_count"].map((f) => meta.node_fields.indexOf(f)) as [
    number,
    number,
    number,
    number,
    number,
  ];
  const [ETYPE, ENAME, ETO] = ["type", "name_or_index", "to_node"].map((f) => meta.edge_fields.indexOf(f)) as [number, number, number];
  const nodeTypes = meta.node_types[0];
  const edgeTypes = meta.edge_types[0];
  const old = new Set<number>();
  for (let i = 0; i < before.nodes.length; i += before.snapshot.meta.node_fields.length)
    old.add(before.nodes[i + before.snapshot.meta.node_fields.indexOf("id")]!);
  const { nodes, edges, strings } = after;
  const count = nodes.length / nf;
  // Retainers: for each node, the first retaining node through a non-weak edge.
  const retainer = new Int32Array(count).fill(-1);
  const retainEdge = new Array<string>(count);
  let e = 0;
  for (let n = 0; n < count; n += 1) {
    const edgeCount = nodes[n * nf + EDGES]!;
    for (let k = 0; k < edgeCount; k += 1, e += ef) {
      const type = edgeTypes[edges[e + ETYPE]!]!;
      if (type === "weak" || type === "shortcut") continue;
      const to = edges[e + ETO]! / nf;
      if (retainer[to] === -1) {
        retainer[to] = n;
        retainEdge[to] = type === "element" || type === "hidden" || type === "internal" ? "[]" : String(strings[edges[e + ENAME]!]);
      }
    }
  }
  const label = (n: number) => {
    const type = nodeTypes[nodes[n * nf + TYPE]!]!;
    const name = strings[nodes[n * nf + NAME]!]!;
    if (type === "object" || type === "closure" || type === "native") return `${type === "object" ? "" : type + " "}${name}`;
    if (type === "string" || type === "concatenated string" || type === "sliced string") return `(${type})`;
    return `(${type}) ${name.slice(0, 40)}`;
  };
  const byLabel = new Map<string, { size: number; count: number }>();
  const byOwner = new Map<string, number>();
  const newStrings = new Map<string, number>();
  const byRoot = new Map<string, number>();
  const pathsOfRoot = new Map<string, Map<string, number>>();
  let total = 0;
  for (let n = 0; n < count; n += 1) {
    if (old.has(nodes[n * nf + ID]!)) continue;
    const size = nodes[n * nf + SIZE]!;
    total += size;
    const key = label(n);
    const entry = byLabel.get(key) ?? { size: 0, count: 0 };
    entry.size += size;
    entry.count += 1;
    byLabel.set(key, entry);
    // Owner: the first retainer (up the first-found retaining edges) that was already there before, with the path from it.
    let owner = n;
    const path: string[] = [];
    for (let step = 0; step < 12; step += 1) {
      const r = retainer[owner]!;
      if (r < 0) break;
      path.unshift(retainEdge[owner]!);
      owner = r;
      if (old.has(nodes[owner * nf + ID]!)) break;
    }
    if (path.length > 6) path.splice(3, path.length - 6, "…");
    const ownerKey = `${label(owner)} .${path.join(".")} → ${key}`;
    byOwner.set(ownerKey, (byOwner.get(ownerKey) ?? 0) + size);
    const rootKey = `${label(owner)} (@${nodes[owner * nf + ID]}, held by ${retainer[owner]! >= 0 ? label(retainer[owner]!) + " ." + retainEdge[owner] : "-"}) .${path[0] ?? ""}`;
    byRoot.set(rootKey, (byRoot.get(rootKey) ?? 0) + size);
    const inRoot = pathsOfRoot.get(rootKey) ?? new Map<string, number>();
    const pathKey = `.${path.join(".")} → ${key}`;
    inRoot.set(pathKey, (inRoot.get(pathKey) ?? 0) + size);
    pathsOfRoot.set(rootKey, inRoot);
    const type = nodeTypes[nodes[n * nf + TYPE]!]!;
    if (type === "string") {
      const text = strings[nodes[n * nf + NAME]!]!.slice(0, 60)
        .replace(/[0-9a-f]{8}-[0-9a-f-]{27}/g, "<uuid>")
        .replace(/\d+/g, "#");
      newStrings.set(text, (newStrings.get(text) ?? 0) + size);
    }
  }
  const per = (bytes: number) => (bytes / N).toFixed(0).padStart(7);
  console.log(`${N} requests created: ${per(total)} bytes of new heap objects per request (${(total / 1024 / 1024).toFixed(1)} MB)`);
  console.log("\nby constructor/type (bytes per request, objects per request)");
  for (const [k, v] of [...byLabel].sort((a, b) => b[1].size - a[1].size).slice(0, 40))
    console.log(`${per(v.size)}  ${(v.count / N).toFixed(1).padStart(6)}  ${k}`);
  console.log("\nby the object already there before that holds them (bytes per request)");
  for (const [k, v] of [...byRoot].sort((a, b) => b[1] - a[1]).slice(0, 25)) console.log(`${per(v)}  ${k}`);
  for (const [k, v] of [...byRoot].sort((a, b) => b[1] - a[1]).slice(0, 6)) {
    console.log(`\n${per(v)}  ${k}, by path:`);
    for (const [p, size] of [...pathsOfRoot.get(k)!].sort((a, b) => b[1] - a[1]).slice(0, 25)) if (size >= N) console.log(`  ${per(size)}  ${p}`);
  }
  console.log("\nby owner path (bytes per request)");
  for (const [k, v] of [...byOwner].sort((a, b) => b[1] - a[1]).slice(0, 60)) console.log(`${per(v)}  ${k}`);
  console.log("\nnew strings by shape (bytes per request)");
  for (const [k, v] of [...newStrings].sort((a, b) => b[1] - a[1]).slice(0, 30)) console.log(`${per(v)}  ${JSON.stringify(k)}`);
}

if (values.from) {
  const read = (name: string) => JSON.parse(readFileSync(join(values.from!, name), "utf8")) as Snapshot;
  report(read("before.heapsnapshot"), read("after.heapsnapshot"));
} else await main();
