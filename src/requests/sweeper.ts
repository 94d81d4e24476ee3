/**
 * The background work every instance runs on a timer that is not a leased
 * queue (those are ./queue-worker.ts's): expiring requests past their
 * deadline. Each step is safe on every instance at once. Kept apart from the
 * service so its outage bookkeeping does not crowd the domain.
 */
import type { OutageLog } from "./outage-log.js";

export interface SweepStep {
  /** Named in the log when the step fails. */
  name: string;
  run: () => Promise<unknown>;
}

/**
 * Runs every step, in order, every `intervalMs`; returns a function that
 * stops it. While the store is unavailable each tick fails fast and the next
 * one tries again: the outage is logged when it starts and when it ends, not
 * every tick. Any other failure of a step is logged and the next step runs.
 */
export function startSweeper(steps: readonly SweepStep[], intervalMs: number, outage: OutageLog): () => void {
  const runStep = async ({ name, run }: SweepStep) => {
    try {
      await run();
      outage.ok(name);
    } catch (error) {
      outage.failed(error, name);
    }
  };
  return repeat(intervalMs, async () => {
    for (const step of steps) await runStep(step);
  });
}

/** Runs `task` every `intervalMs`, skipping a tick while the last run is busy; returns a function that stops it. */
export function repeat(intervalMs: number, task: () => Promise<void>): () => void {
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    void task().finally(() => {
      running = false;
    });
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
