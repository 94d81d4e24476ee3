/**
 * Click-to-agent latency: an agent waits on GET /v1/requests/:id?wait=30, a
 * person clicks Yes; the clock runs from just before the signed click is sent
 * to POST /slack/events until the long-poll's whole response has arrived.
 * One request at a time, so the figure is the relay's path, not queueing.
 * A click the relay did not take (it told the person so, ephemeral) fails the
 * cycle at once: its latency would mean nothing.
 *
 * Each round of the relay is followed by a round of the loopback floor
 * (./floor.ts), so the two see the same machine. Two paces: back to back (the
 * click follows the posted message at once, the relay's own path) and paced
 * (the click comes `idleMs` after the message, as a person's does behind
 * Slack's one message a second per channel): an idle process on these
 * machines pays a wake-up cost, and the floor idles as long, so the ratio of
 * the two stays comparable.
 */
import {
  assertAnsweredYes,
  beforeReply,
  freshChannel,
  newMarker,
  requestBody,
  YES_ACTION,
  type BenchAgent,
  type BenchKind,
  type RequestView,
} from "./agent.js";
import { startFloor } from "./floor.js";
import { expectJson, type HttpReply } from "./http.js";
import type { SlackStandIn } from "./slack-stand-in.js";
import { medianRound, summarize, type LatencySummary } from "./stats.js";

export interface LatencyOptions {
  kind: BenchKind;
  /** Samples per round. */
  n: number;
  /** Unmeasured cycles before the first round. */
  warmup: number;
  rounds: number;
  /** The paced rounds: samples per round and the idle time before each click. */
  paced: { n: number; idleMs: number };
  /** The repository root (the floor's server lives in bench/). */
  root: string;
}

/** Rounds of one series and the round with the median p50. */
export interface Series {
  rounds: LatencySummary[];
  median: LatencySummary;
}

export interface LatencyResult {
  kind: BenchKind;
  rounds: LatencySummary[];
  /** The round with the median p50. */
  median: LatencySummary;
  /** The loopback floor, back to back, in the same run. */
  floor: Series;
  /** The click `idleMs` after the message: the relay and the floor. */
  paced: { idleMs: number; relay: Series; floor: Series };
}

/** One click-to-agent cycle; resolves with the measured milliseconds. */
export async function clickToAgent(agent: BenchAgent, kind: BenchKind, idleMs = 0): Promise<number> {
  return (await answeredCycle(agent, kind, idleMs)).clickMs;
}

/** The two halves of a cycle the agent waits on, in milliseconds. */
export interface CycleTimes {
  /** POST /v1/requests until its 201 has arrived. */
  createMs: number;
  /** Signed click sent until the long-poll's whole response has arrived. */
  clickMs: number;
  /** The size of the signed click's body, bytes. */
  clickBytes: number;
}

/** One request created, posted, clicked Yes and answered to the waiting agent. */
export async function answeredCycle(agent: BenchAgent, kind: BenchKind, idleMs = 0): Promise<CycleTimes> {
  const marker = newMarker();
  const createStarted = performance.now();
  const id = await agent.create(requestBody(kind, marker, 300, freshChannel()));
  const createMs = performance.now() - createStarted;
  const poll = agent.longPoll(id, 30);
  poll.catch(() => undefined);
  const message = await beforeReply(agent.messageReady(marker), poll, "GET /v1/requests/:id?wait=30");
  if (message.id !== id) throw new Error(`the message for ${id} names request ${message.id}`);
  const click = agent.prepareClick(message, YES_ACTION[kind]);
  if (idleMs > 0) await new Promise((resolve) => setTimeout(resolve, idleMs));

  const started = performance.now();
  const clicked = agent.click(click);
  clicked.catch(() => undefined);
  const reply = await unlessTold(agent.standIn, poll, id);
  const clickMs = performance.now() - started;

  await clicked;
  assertAnsweredYes(kind, expectJson<RequestView>(reply, 200, "GET /v1/requests/:id?wait=30"));
  return { createMs, clickMs, clickBytes: Buffer.byteLength(click.body) };
}

/** `poll`'s reply, unless the relay first tells the clicking person their click was not taken: then a failure quoting it. */
export async function unlessTold(standIn: SlackStandIn, poll: Promise<HttpReply>, id: string): Promise<HttpReply> {
  const told = standIn.nextNotice();
  const refused = told.notice.then((notice): never => {
    throw new Error(`the click on request ${id} was not taken; the relay told ${notice.user}: ${notice.text}`);
  });
  try {
    return await Promise.race([poll, refused]);
  } finally {
    told.cancel();
  }
}

export async function runLatency(agent: BenchAgent, options: LatencyOptions, progress: (line: string) => void): Promise<LatencyResult> {
  let clickBytes = 0;
  for (let i = 0; i < options.warmup; i += 1) clickBytes = (await answeredCycle(agent, options.kind)).clickBytes;
  const floor = await startFloor(options.root, clickBytes);
  try {
    for (let i = 0; i < options.warmup; i += 1) await floor.cycle(0);
    const series = async (name: string, n: number, sample: () => Promise<number>, into: LatencySummary[]) => {
      const samples: number[] = [];
      for (let i = 0; i < n; i += 1) samples.push(await sample());
      const summary = summarize(samples);
      into.push(summary);
      progress(`${name}: p50 ${summary.p50.toFixed(2)} ms, p99 ${summary.p99.toFixed(2)} ms`);
    };
    const relay: LatencySummary[] = [];
    const floorRounds: LatencySummary[] = [];
    const pacedRelay: LatencySummary[] = [];
    const pacedFloor: LatencySummary[] = [];
    const { idleMs } = options.paced;
    for (let round = 1; round <= options.rounds; round += 1) {
      await series(`round ${round}, relay`, options.n, () => clickToAgent(agent, options.kind), relay);
      await series(`round ${round}, floor`, options.n, () => floor.cycle(0), floorRounds);
      await series(`round ${round}, relay ${idleMs} ms after its message`, options.paced.n, () => clickToAgent(agent, options.kind, idleMs), pacedRelay);
      await series(`round ${round}, floor ${idleMs} ms idle`, options.paced.n, () => floor.cycle(idleMs), pacedFloor);
    }
    const bySeries = (rounds: LatencySummary[]): Series => ({ rounds, median: medianRound(rounds, (r) => r.p50) });
    return {
      kind: options.kind,
      ...bySeries(relay),
      floor: bySeries(floorRounds),
      paced: { idleMs, relay: bySeries(pacedRelay), floor: bySeries(pacedFloor) },
    };
  } finally {
    await floor.close();
  }
}
