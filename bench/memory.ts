/**
 * Memory: the relay's resident set (VmRSS) idle after a warm-up, with
 * `waiters` pending requests, and with a long-poll (GET ?wait=60, each on its
 * own keep-alive connection) held open on every one of them. At each point
 * the RSS as it is (what the target is about; it includes garbage not yet
 * collected) and right after a full GC (what is really held; the relay runs
 * with --expose-gc for this). Afterwards the long-polls are dropped and, with
 * Redis, the requests cancelled so nothing is left in the shared deadline set.
 */
import { readdirSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { freshChannel, newMarker, requestBody } from "./agent.js";
import { clickToAgent } from "./latency.js";
import { keepAliveAgent, type HttpReply } from "./http.js";
import type { Target } from "./target.js";

export interface MemoryOptions {
  waiters: number;
  /** Click-to-agent cycles before the baseline, so the code paths are loaded and compiled. */
  warmup: number;
}

/** One reading, in bytes. */
export interface MemoryPoint {
  /** Largest VmRSS over ~2 s. */
  rss: number;
  /** VmRSS right after a full GC. */
  rssAfterGc: number;
  /** V8 heap in use after that GC. */
  heapUsed: number;
}

export interface MemoryResult {
  waiters: number;
  baseline: MemoryPoint;
  withRequests: MemoryPoint;
  withWaiters: MemoryPoint;
  /**
   * JS heap a held long-poll keeps (bytes): (withWaiters − withRequests) heap
   * used / waiters. RSS differences are no use at this scale: RSS keeps the
   * high-water mark of the garbage made while creating the requests.
   */
  heapPerWaiter: number;
  /** RSS a pending request and its long-poll add, as measured: (withWaiters − baseline) / waiters (bytes). */
  rssPerRequestAndWaiter: number;
  /** Largest RSS the relay had at any time up to the last reading (VmHWM), creating the requests included. */
  peakRss: number;
  /** How long opening every long-poll took (ms). */
  openMs: number;
}

/** Connections the relay may close meanwhile (its idle keep-alive ones to the Slack stand-in). */
const FD_SLACK = 100;
/** Long-polls opened at once before waiting for the relay to accept them (its listen backlog is 511). */
const BATCH = 250;

export async function runMemory({ relay, agent, store }: Target, options: MemoryOptions, progress: (line: string) => void): Promise<MemoryResult> {
  for (let i = 0; i < options.warmup; i += 1) await clickToAgent(agent, "step_gate");
  await sleep(1000);
  const baseline = await measure(relay);
  progress(`baseline ${describe(baseline)}`);

  const ids = await createPending(agent, options.waiters);
  await sleep(1000);
  const withRequests = await measure(relay);
  progress(`${options.waiters} pending requests: ${describe(withRequests)}`);

  const held = keepAliveAgent();
  const replies: Array<Promise<HttpReply>> = [];
  let settled = 0;
  const fdsBefore = openFds(relay.pid);
  const opening = performance.now();
  try {
    for (let i = 0; i < ids.length; i += BATCH) {
      for (const id of ids.slice(i, i + BATCH)) {
        const reply = agent.longPoll(id, 60, held);
        reply.then(
          () => (settled += 1),
          () => (settled += 1),
        );
        replies.push(reply);
      }
      await untilFds(relay.pid, fdsBefore + Math.min(ids.length, i + BATCH) - FD_SLACK, 10_000);
    }
    const openMs = performance.now() - opening;
    await sleep(1500);
    const withWaiters = await measure(relay);
    if (settled > 0) throw new Error(`${settled} long-polls ended early; the figure would not hold ${ids.length} waiters`);
    progress(`${ids.length} held long-polls: ${describe(withWaiters)} (opened in ${(openMs / 1000).toFixed(1)} s)`);
    return {
      waiters: ids.length,
      baseline,
      withRequests,
      withWaiters,
      heapPerWaiter: (withWaiters.heapUsed - withRequests.heapUsed) / ids.length,
      rssPerRequestAndWaiter: (withWaiters.rss - baseline.rss) / ids.length,
      peakRss: relay.peakRss(),
      openMs,
    };
  } finally {
    held.destroy();
    await Promise.allSettled(replies);
    if (store !== "memory") await cancelAll(agent, ids);
  }
}

async function createPending(agent: Target["agent"], count: number): Promise<string[]> {
  const ids: string[] = [];
  const posted: Array<Promise<unknown>> = [];
  let next = 0;
  const worker = async () => {
    while (next < count) {
      next += 1;
      const marker = newMarker();
      ids.push(await agent.create(requestBody("step_gate", marker, 600, freshChannel())));
      posted.push(agent.standIn.posted(marker, 60_000));
    }
  };
  await Promise.all(Array.from({ length: 64 }, worker));
  await Promise.all(posted);
  return ids;
}

/** Cancels every request (128 at a time); with Redis this takes them out of the shared deadline set. */
async function cancelAll(agent: Target["agent"], ids: string[]): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < ids.length) await agent.cancel(ids[next++]!).catch(() => undefined);
  };
  await Promise.all(Array.from({ length: 128 }, worker));
}

/** The largest of several VmRSS readings over ~2 s (a conservative figure), then the same after a full GC. */
async function measure(relay: Target["relay"]): Promise<MemoryPoint> {
  let rss = 0;
  for (let i = 0; i < 10; i += 1) {
    rss = Math.max(rss, relay.rss());
    await sleep(200);
  }
  const { heapUsed } = await relay.memoryUsage();
  return { rss, rssAfterGc: relay.rss(), heapUsed };
}

function describe(point: MemoryPoint): string {
  return `RSS ${mib(point.rss)} MB, after GC ${mib(point.rssAfterGc)} MB (heap ${mib(point.heapUsed)} MB)`;
}

function openFds(pid: number): number {
  return readdirSync(`/proc/${pid}/fd`).length;
}

async function untilFds(pid: number, wanted: number, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (openFds(pid) < wanted) {
    if (performance.now() > deadline) throw new Error(`the relay accepted only ${openFds(pid)} of ${wanted} connections`);
    await sleep(20);
  }
}

function mib(bytes: number): string {
  return (bytes / 1024 / 1024).toFixed(1);
}
