/**
 * The soak's faults, on a random schedule that repeats every cycle (two
 * minutes, or six in runs of ten minutes and more, so some relay processes
 * live long enough to show whether they grow): Slack answering 429 and then
 * 503 for a few seconds (two bursts of each per cycle), a Redis restart, a
 * SIGTERM rolling restart of both instances and a SIGKILL of one. Each is
 * placed at random within its part of the cycle, so they overlap now and
 * then; the idle proxies cut idle connections the whole time. All end
 * before the traffic stops.
 */
import { setTimeout as sleep } from "node:timers/promises";
import type { FaultKind } from "./history.js";
import type { SoakSlack } from "./slack.js";
import type { World } from "./world.js";

export interface FaultOptions {
  startedAt: number;
  /** When the traffic stops: the last fault ends well before. */
  stopAt: number;
  random: () => number;
  log: (line: string) => void;
}

interface Planned {
  kind: FaultKind;
  at: number;
}

/** Where in a cycle each fault may start, as fractions of the cycle. */
const SLOTS: Array<{ kind: FaultKind; from: number; to: number }> = [
  { kind: "sigterm-roll", from: 0.1, to: 0.2 },
  { kind: "slack-429", from: 0.15, to: 0.35 },
  { kind: "redis-restart", from: 0.3, to: 0.45 },
  { kind: "slack-5xx", from: 0.35, to: 0.5 },
  { kind: "sigkill", from: 0.5, to: 0.65 },
  { kind: "slack-429", from: 0.6, to: 0.75 },
  { kind: "slack-5xx", from: 0.7, to: 0.85 },
];

export function schedule({ startedAt, stopAt, random }: Pick<FaultOptions, "startedAt" | "stopAt" | "random">): Planned[] {
  const span = stopAt - startedAt;
  const cycle = span >= 10 * 60_000 ? 6 * 60_000 : Math.min(span, 2 * 60_000);
  const planned: Planned[] = [];
  for (let start = startedAt; start + cycle <= stopAt + 1; start += cycle) {
    for (const slot of SLOTS) planned.push({ kind: slot.kind, at: start + cycle * (slot.from + random() * (slot.to - slot.from)) });
  }
  return planned.sort((a, b) => a.at - b.at);
}

export async function runFaults(world: World, slack: SoakSlack, options: FaultOptions): Promise<void> {
  const { random, log } = options;
  const pending: Array<Promise<void>> = [];
  for (const { kind, at } of schedule(options)) {
    await sleep(Math.max(0, at - Date.now()));
    log(`fault: ${kind}`);
    pending.push(
      inject(kind, world, slack, random).catch((error: unknown) => {
        throw new Error(`the fault ${kind} could not be done: ${String(error)}`);
      }),
    );
  }
  await Promise.all(pending);
}

async function inject(kind: FaultKind, world: World, slack: SoakSlack, random: () => number): Promise<void> {
  switch (kind) {
    case "slack-429":
    case "slack-5xx": {
      const from = Date.now();
      const to = from + 2000 + random() * 3000;
      slack.fail(kind === "slack-429" ? 429 : 503, to);
      await sleep(to - from);
      world.faults.push({ kind, from, to });
      return;
    }
    case "redis-restart":
      return world.restartRedis(2000 + random() * 2000);
    case "sigkill":
      return world.sigkill(Math.floor(random() * world.instances.length), 1500 + random() * 1500);
    case "sigterm-roll":
      return world.rollingRestart();
    case "idle-proxy":
      return;
  }
}
