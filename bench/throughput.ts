/**
 * Throughput: `concurrency` agents in a loop, each cycle a whole request's
 * life — create, wait for its Slack message, click Yes, read the final state
 * (GET ?wait=30, as the click is acked before the answer is recorded). Counts
 * the cycles that finish inside the measured window.
 */
import { assertAnsweredYes, freshChannel, newMarker, requestBody, YES_ACTION, type BenchAgent, type BenchKind, type RequestView } from "./agent.js";
import { expectJson } from "./http.js";
import { medianRound, summarize, type LatencySummary } from "./stats.js";

export interface ThroughputOptions {
  kind: BenchKind;
  concurrency: number;
  /** Measured window per round (ms). */
  durationMs: number;
  /** Unmeasured run before the first round (ms). */
  warmupMs: number;
  rounds: number;
}

export interface ThroughputRound {
  /** Requests created and answered per second. */
  perSecond: number;
  cycles: number;
  /** Duration of whole cycles (ms). */
  cycle: LatencySummary;
  /** CPU time the relay spent per counted cycle (ms): less sensitive to a busy machine than the rate. */
  relayCpuMs: number;
}

export interface ThroughputResult {
  kind: BenchKind;
  concurrency: number;
  durationMs: number;
  rounds: ThroughputRound[];
  /** The round with the median rate. */
  median: ThroughputRound;
}

async function cycle(agent: BenchAgent, kind: BenchKind): Promise<void> {
  const marker = newMarker();
  const id = await agent.create(requestBody(kind, marker, 300, freshChannel()));
  const message = await agent.messageReady(marker);
  await agent.click(agent.prepareClick(message, YES_ACTION[kind]));
  assertAnsweredYes(kind, expectJson<RequestView>(await agent.longPoll(id, 30), 200, "GET /v1/requests/:id?wait=30"));
}

/**
 * Runs the loop for `durationMs`; cycles still running at the end finish but
 * are not counted (their CPU is, so relayCpuMs errs high by a little).
 */
export async function throughputRound(
  agent: BenchAgent,
  relayCpuMs: () => number,
  { kind, concurrency, durationMs }: Pick<ThroughputOptions, "kind" | "concurrency" | "durationMs">,
): Promise<ThroughputRound> {
  const cpuBefore = relayCpuMs();
  const started = performance.now();
  const end = started + durationMs;
  const durations: number[] = [];
  const worker = async () => {
    while (performance.now() < end) {
      const begun = performance.now();
      await cycle(agent, kind);
      const finished = performance.now();
      if (finished <= end) durations.push(finished - begun);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const cpu = relayCpuMs() - cpuBefore;
  return { perSecond: durations.length / (durationMs / 1000), cycles: durations.length, cycle: summarize(durations), relayCpuMs: cpu / durations.length };
}

export async function runThroughput(
  agent: BenchAgent,
  relayCpuMs: () => number,
  options: ThroughputOptions,
  progress: (line: string) => void,
): Promise<ThroughputResult> {
  await throughputRound(agent, relayCpuMs, { ...options, durationMs: options.warmupMs });
  const rounds: ThroughputRound[] = [];
  for (let round = 1; round <= options.rounds; round += 1) {
    const result = await throughputRound(agent, relayCpuMs, options);
    rounds.push(result);
    progress(
      `round ${round}: ${result.perSecond.toFixed(0)} req/s, cycle p50 ${result.cycle.p50.toFixed(1)} ms, relay CPU ${result.relayCpuMs.toFixed(2)} ms/req`,
    );
  }
  const { kind, concurrency, durationMs } = options;
  return { kind, concurrency, durationMs, rounds, median: medianRound(rounds, (r) => r.perSecond) };
}
