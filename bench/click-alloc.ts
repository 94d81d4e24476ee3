/**
 * What answering held long-polls by clicks allocates in the relay, by V8's
 * sampling heap profiler (inspector HeapProfiler.startSampling, garbage
 * included): N step gates created and each held by a long-poll, then the
 * profiler started and all N clicked (16 at once, as the scale scenario does)
 * and answered. Prints bytes per click by function and by package.
 *
 *   npx tsx bench/click-alloc.ts [--redis] [--n 2000] [--out file.heapprofile]
 */
import { writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { setTimeout as sleep } from "node:timers/promises";
import { Redis } from "ioredis";
import { clickAll, createStepGates, holdAll, Inspector, PROFILE_OPTIONS, REDIS_URL, withInspectedRelay } from "./inspector.js";
import { answeredCycle } from "./latency.js";
import { keepAliveAgent } from "./http.js";
import { Action } from "../src/slack/ids.js";

const { values } = parseArgs({
  options: {
    ...PROFILE_OPTIONS,
    interval: { type: "string", default: "1024" },
  },
});
const N = Number(values.n);
const PREFIX = `clickalloc-${process.pid}-${Date.now().toString(36)}`;

interface ProfileNode {
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  selfSize: number;
  id: number;
  children: ProfileNode[];
}

const REPLIES = [Action.stepYes, Action.stepNo, Action.stepStop];

async function main(): Promise<void> {
  await withInspectedRelay(values, "alloc", PREFIX, async ({ agent, others, relay }, port) => {
    for (let i = 0; i < 100; i += 1) await answeredCycle(agent, "step_gate");
    const created = await createStepGates([...others.values()], N);
    const held = keepAliveAgent();
    const holds = holdAll(created, held);
    await sleep(3000);
    const inspector = await Inspector.open(port);
    await inspector.call("HeapProfiler.enable");
    await inspector.call("HeapProfiler.startSampling", {
      samplingInterval: Number(values.interval),
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true,
    });
    const cpuBefore = relay.cpuMs();
    await clickAll(agent, created, REPLIES);
    const views = await holds;
    const cpuMs = relay.cpuMs() - cpuBefore;
    await sleep(500);
    const { profile } = await inspector.call<{ profile: { head: ProfileNode } }>("HeapProfiler.stopSampling");
    inspector.close();
    held.destroy();
    if (values.out) writeFileSync(values.out, JSON.stringify(profile));
    report(profile.head, views.length, cpuMs);
  });
  if (values.redis) {
    const redis = new Redis(REDIS_URL);
    for await (const keys of redis.scanStream({ match: `${PREFIX}:*`, count: 1000 })) if ((keys as string[]).length) await redis.unlink(...(keys as string[]));
    redis.disconnect();
  }
}

function report(head: ProfileNode, clicks: number, cpuMs: number): void {
  let total = 0;
  const byFunction = new Map<string, number>();
  const byPackage = new Map<string, number>();
  const inclusive = new Map<string, number>();
  const where = (node: ProfileNode) => {
    const { functionName, url, lineNumber } = node.callFrame;
    const file = url.replace(/^.*\/(node_modules\/|dist\/bundle\/)/, "$1");
    return `${functionName || "(anonymous)"} ${file}:${lineNumber + 1}`;
  };
  const pkg = (url: string) => {
    if (!url) return "(native/V8)";
    if (url.startsWith("node:")) return url;
    const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
    return m ? m[1]! : url.replace(/^.*\//, "");
  };
  const walk = (node: ProfileNode, stack: Set<string>): number => {
    let sum = node.selfSize;
    total += node.selfSize;
    const key = where(node);
    byFunction.set(key, (byFunction.get(key) ?? 0) + node.selfSize);
    byPackage.set(pkg(node.callFrame.url), (byPackage.get(pkg(node.callFrame.url)) ?? 0) + node.selfSize);
    const added = !stack.has(key);
    if (added) stack.add(key);
    for (const child of node.children) sum += walk(child, stack);
    if (added) {
      stack.delete(key);
      inclusive.set(key, (inclusive.get(key) ?? 0) + sum);
    }
    return sum;
  };
  walk(head, new Set());
  const kb = (bytes: number) => (bytes / clicks / 1024).toFixed(1).padStart(8);
  console.log(`${clicks} clicks: ${kb(total)} KB allocated per click, relay CPU ${(cpuMs / clicks).toFixed(2)} ms per click`);
  const top = (map: Map<string, number>, n: number, title: string) => {
    console.log(`\n${title}`);
    for (const [k, v] of [...map].sort((a, b) => b[1] - a[1]).slice(0, n)) console.log(`${kb(v)} KB  ${k}`);
  };
  top(byPackage, 25, "self, by package/file (KB per click)");
  top(byFunction, 50, "self, by function (KB per click)");
  top(inclusive, 80, "inclusive, by function (KB per click)");
}

await main();
