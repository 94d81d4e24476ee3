/**
 * Scale: one relay, started as `npm start` starts it (./relay-process.ts),
 * with N pending requests each held by a long-poll (GET ?wait=60 on its own
 * keep-alive connection, asked again whenever it comes back still pending, as
 * a client does), then every one of them answered by a signed Slack click,
 * the bench checking each long-poll returns the decision its click gave
 * (y / n / q in turn). Run at several N, each on a fresh relay, so the peak
 * (VmHWM) belongs to that N and the cost per request can be compared from
 * 1,000 to 10,000 pending: RSS and heap per request, relay CPU per create and
 * per click, and create and click → agent latency measured one at a time
 * while all N are held.
 *
 * The N are spread over many agent tokens (at most PER_TOKEN each), as N
 * pending requests come from many agents: the relay's defaults cap one token
 * at 200 pending and 600 creates a minute, and the bench keeps those defaults.
 */
import { readdirSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { freshChannel, newMarker, requestBody, type RequestView } from "./agent.js";
import { answeredCycle } from "./latency.js";
import { expectJson, keepAliveAgent } from "./http.js";
import type { PostedMessage } from "./slack-stand-in.js";
import { summarize, type LatencySummary } from "./stats.js";
import { withTarget, type Target, type TargetOptions } from "./target.js";
import { Action } from "../src/slack/ids.js";
import { until } from "../test/helpers/until.js";

export interface ScaleOptions {
  /** Pending requests of each run, e.g. [1000, 5000, 10000]. */
  levels: number[];
  /** Click-to-agent cycles before the baseline, so the code paths are loaded and compiled. */
  warmup: number;
  /** Create + click → agent cycles timed one at a time while the N are held. */
  probes: number;
}

/** One reading, in bytes. */
export interface MemoryPoint {
  /** Largest VmRSS over ~2 s. */
  rss: number;
  /** V8 heap in use (/metrics), garbage not yet collected included. */
  heapUsed: number;
}

export interface ScaleLevel {
  pending: number;
  baseline: MemoryPoint;
  withRequests: MemoryPoint;
  withWaiters: MemoryPoint;
  /** After every request was answered. */
  afterClicks: MemoryPoint;
  /** VmHWM at the end: the largest RSS the relay had at any time, creating and answering included. */
  peakRss: number;
  /** Relay CPU (user + system) per create, while creating the N at 64 at once (ms). */
  cpuPerCreateMs: number;
  /** Relay CPU per click, while answering the N at 16 at once, long-poll replies and Slack updates included (ms). */
  cpuPerClickMs: number;
  /** POST /v1/requests → 201, one at a time with the N held. */
  create: LatencySummary;
  /** Signed click sent → the long-poll's whole reply, one at a time with the N held. */
  click: LatencySummary;
  /** Long-polls that came back with the decision their click gave (of `pending`). */
  answered: number;
  /** What went wrong, at most a few examples; empty when all N were right. */
  errors: string[];
  /** How long opening the N long-polls and answering them took (ms). */
  openMs: number;
  clicksMs: number;
}

export interface ScaleResult {
  /** How the relay was started: node arguments. */
  command: string;
  levels: ScaleLevel[];
}

/** Connections the relay may close meanwhile (its idle keep-alive ones to the Slack stand-in). */
const FD_SLACK = 100;
/** Long-polls opened at once before waiting for the relay to accept them (its listen backlog is 511). */
const BATCH = 250;
/** Pending requests per agent token: under the default RELAY_MAX_PENDING_PER_TOKEN (200) and RELAY_CREATE_RATE_LIMIT (600 a minute). */
const PER_TOKEN = 150;
const REPLIES = [
  { action: Action.stepYes, reply: "y" },
  { action: Action.stepNo, reply: "n" },
  { action: Action.stepStop, reply: "q" },
] as const;

export async function runScale(target: TargetOptions, options: ScaleOptions, progress: (line: string) => void): Promise<ScaleResult> {
  const levels: ScaleLevel[] = [];
  let command = "";
  for (const pending of options.levels) {
    const tokens = Array.from({ length: Math.ceil(pending / PER_TOKEN) }, (_, i) => `scale-${i + 1}`);
    const level = await withTarget({ ...target, otherTokens: tokens }, async (t) => {
      command = `node ${t.relay.args.join(" ")}`;
      progress(`${pending} pending: relay pid ${t.relay.pid} (${command})`);
      return runLevel(t, pending, options, (line) => progress(`${pending} pending: ${line}`));
    });
    levels.push(level);
    if (level.errors.length > 0)
      throw new Error(`${pending} pending: ${level.pending - level.answered} of ${level.pending} not answered right: ${level.errors.join("; ")}`);
  }
  return { command, levels };
}

async function runLevel({ relay, agent, others }: Target, pending: number, options: ScaleOptions, progress: (line: string) => void): Promise<ScaleLevel> {
  for (let i = 0; i < options.warmup; i += 1) await answeredCycle(agent, "step_gate");
  await sleep(1000);
  const baseline = await measure(relay);
  progress(`baseline ${describe(baseline)}`);

  const cpuBeforeCreates = relay.cpuMs();
  const created = await createPending([...others.values()], pending);
  const cpuPerCreateMs = (relay.cpuMs() - cpuBeforeCreates) / pending;
  await sleep(1000);
  const withRequests = await measure(relay);
  progress(`requests created: ${describe(withRequests)}, relay CPU ${cpuPerCreateMs.toFixed(2)} ms per create`);

  const held = keepAliveAgent();
  const errors: string[] = [];
  const fail = (message: string) => {
    if (errors.length < 5) errors.push(message);
  };
  let answered = 0;
  const fdsBefore = openFds(relay.pid);
  const opening = performance.now();
  const holds: Array<Promise<void>> = [];
  try {
    for (let i = 0; i < created.length; i += BATCH) {
      for (const [j, request] of created.slice(i, i + BATCH).entries()) {
        const expected = REPLIES[(i + j) % REPLIES.length]!.reply;
        const hold = holdUntilEnded(request.agent, request.message.id, held).then(
          (view) => {
            if (view.status === "answered" && view.decision?.reply === expected) answered += 1;
            else fail(`request ${view.id} ended ${view.status} with ${JSON.stringify(view.decision)}, its click said ${expected}`);
          },
          (error: unknown) => fail(`request ${request.message.id}: ${error instanceof Error ? error.message : String(error)}`),
        );
        holds.push(hold);
      }
      await untilFds(relay.pid, fdsBefore + Math.min(created.length, i + BATCH) - FD_SLACK, 10_000);
    }
    const openMs = performance.now() - opening;
    await sleep(1500);
    const withWaiters = await measure(relay);
    progress(`long-polls held: ${describe(withWaiters)} (opened in ${(openMs / 1000).toFixed(1)} s)`);

    const createSamples: number[] = [];
    const clickSamples: number[] = [];
    for (let i = 0; i < options.probes; i += 1) {
      const { createMs, clickMs } = await answeredCycle(agent, "step_gate");
      createSamples.push(createMs);
      clickSamples.push(clickMs);
    }
    const create = summarize(createSamples);
    const click = summarize(clickSamples);
    progress(`with ${pending} held: create p50 ${create.p50.toFixed(2)} ms, click → agent p50 ${click.p50.toFixed(2)} ms`);

    const cpuBeforeClicks = relay.cpuMs();
    const clicking = performance.now();
    await clickAll(agent, created, fail);
    await Promise.all(holds);
    const clicksMs = performance.now() - clicking;
    const cpuPerClickMs = (relay.cpuMs() - cpuBeforeClicks) / pending;
    await sleep(1000);
    const afterClicks = await measure(relay);
    const peakRss = relay.peakRss();
    progress(
      `all answered (${answered} right, ${(clicksMs / 1000).toFixed(1)} s, relay CPU ${cpuPerClickMs.toFixed(2)} ms per click): ${describe(afterClicks)}, peak ${mib(peakRss)} MB`,
    );
    return {
      pending,
      baseline,
      withRequests,
      withWaiters,
      afterClicks,
      peakRss,
      cpuPerCreateMs,
      cpuPerClickMs,
      create,
      click,
      answered,
      errors,
      openMs,
      clicksMs,
    };
  } finally {
    held.destroy();
    await Promise.allSettled(holds);
  }
}

interface Created {
  message: PostedMessage;
  /** The agent (token) that created it, and so may read it. */
  agent: Target["agent"];
}

/**
 * Creates `count` step gates, 64 at a time, each in a channel of its own, the
 * i-th by agent i mod `agents.length`; resolves once Slack (the stand-in) has every message.
 */
async function createPending(agents: Array<Target["agent"]>, count: number): Promise<Created[]> {
  const created: Array<Promise<Created>> = [];
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const agent = agents[next % agents.length]!;
      next += 1;
      const marker = newMarker();
      const posted = agent.standIn.posted(marker, 120_000);
      posted.catch(() => undefined);
      await agent.create(requestBody("step_gate", marker, 900, freshChannel()));
      created.push(posted.then((message) => ({ message, agent })));
    }
  };
  await Promise.all(Array.from({ length: 64 }, worker));
  return Promise.all(created);
}

/**
 * GET ?wait=60 until the request has ended (a long-poll that comes back
 * pending is asked again at once, as the client library does); the final view.
 */
async function holdUntilEnded(agent: Target["agent"], id: string, via: ReturnType<typeof keepAliveAgent>): Promise<RequestView> {
  for (;;) {
    const view = expectJson<RequestView>(await agent.longPoll(id, 60, via), 200, "GET /v1/requests/:id?wait=60");
    if (view.status !== "pending") return view;
  }
}

/** Clicks y, n, q in turn on every request, 16 at a time; a click the relay refuses (HTTP or an ephemeral notice) is an error. */
async function clickAll(agent: Target["agent"], created: Created[], fail: (message: string) => void): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < created.length) {
      const index = next++;
      const { message } = created[index]!;
      try {
        await agent.click(agent.prepareClick(message, REPLIES[index % REPLIES.length]!.action));
      } catch (error) {
        fail(`click on ${message.id}: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
  };
  const told = agent.standIn.nextNotice();
  told.notice.then(
    (notice) => fail(`a click was not taken; the relay told ${notice.user}: ${notice.text}`),
    () => undefined,
  );
  try {
    await Promise.all(Array.from({ length: 16 }, worker));
  } finally {
    told.cancel();
  }
}

/** The largest of several VmRSS readings over ~2 s (a conservative figure), and the heap in use. */
async function measure(relay: Target["relay"]): Promise<MemoryPoint> {
  let rss = 0;
  for (let i = 0; i < 10; i += 1) {
    rss = Math.max(rss, relay.rss());
    await sleep(200);
  }
  const { heapUsed } = await relay.heap();
  return { rss, heapUsed };
}

function describe(point: MemoryPoint): string {
  return `RSS ${mib(point.rss)} MB (heap used ${mib(point.heapUsed)} MB)`;
}

function openFds(pid: number): number {
  return readdirSync(`/proc/${pid}/fd`).length;
}

async function untilFds(pid: number, wanted: number, timeoutMs: number): Promise<void> {
  await until(
    () => openFds(pid) >= wanted,
    timeoutMs,
    () => `the relay to accept ${wanted} connections (it has ${openFds(pid)})`,
    20,
  );
}

function mib(bytes: number): string {
  return (bytes / 1024 / 1024).toFixed(1);
}
