/**
 * Click-to-agent latency: an agent waits on GET /v1/requests/:id?wait=30, a
 * person clicks Yes; the clock runs from just before the signed click is sent
 * to POST /slack/events until the long-poll's whole response has arrived.
 * One request at a time, so the figure is the relay's path, not queueing.
 * A click the relay did not take (it told the person so, ephemeral) fails the
 * cycle at once: its latency would mean nothing.
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
}

export interface LatencyResult {
  kind: BenchKind;
  rounds: LatencySummary[];
  /** The round with the median p50. */
  median: LatencySummary;
}

/** One click-to-agent cycle; resolves with the measured milliseconds. */
export async function clickToAgent(agent: BenchAgent, kind: BenchKind): Promise<number> {
  return (await answeredCycle(agent, kind)).clickMs;
}

/** The two halves of a cycle the agent waits on, in milliseconds. */
export interface CycleTimes {
  /** POST /v1/requests until its 201 has arrived. */
  createMs: number;
  /** Signed click sent until the long-poll's whole response has arrived. */
  clickMs: number;
}

/** One request created, posted, clicked Yes and answered to the waiting agent. */
export async function answeredCycle(agent: BenchAgent, kind: BenchKind): Promise<CycleTimes> {
  const marker = newMarker();
  const createStarted = performance.now();
  const id = await agent.create(requestBody(kind, marker, 300, freshChannel()));
  const createMs = performance.now() - createStarted;
  const poll = agent.longPoll(id, 30);
  poll.catch(() => undefined);
  const message = await beforeReply(agent.messageReady(marker), poll, "GET /v1/requests/:id?wait=30");
  if (message.id !== id) throw new Error(`the message for ${id} names request ${message.id}`);
  const click = agent.prepareClick(message, YES_ACTION[kind]);

  const started = performance.now();
  const clicked = agent.click(click);
  clicked.catch(() => undefined);
  const reply = await unlessTold(agent.standIn, poll, id);
  const clickMs = performance.now() - started;

  await clicked;
  assertAnsweredYes(kind, expectJson<RequestView>(reply, 200, "GET /v1/requests/:id?wait=30"));
  return { createMs, clickMs };
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
  for (let i = 0; i < options.warmup; i += 1) await clickToAgent(agent, options.kind);
  const rounds: LatencySummary[] = [];
  for (let round = 1; round <= options.rounds; round += 1) {
    const samples: number[] = [];
    for (let i = 0; i < options.n; i += 1) samples.push(await clickToAgent(agent, options.kind));
    const summary = summarize(samples);
    rounds.push(summary);
    progress(`round ${round}: p50 ${summary.p50.toFixed(2)} ms, p99 ${summary.p99.toFixed(2)} ms`);
  }
  return { kind: options.kind, rounds, median: medianRound(rounds, (r) => r.p50) };
}
