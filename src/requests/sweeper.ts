/**
 * The background work every instance runs on a timer: expiring requests past
 * their deadline, posting requests whose poster died, retrying message
 * updates, sending due reminders and escalations. Each step is safe on every
 * instance at once (the store hands each item to one of them). Kept apart
 * from the service so its outage bookkeeping does not crowd the domain.
 */
import type { Logger } from "../logger.js";
import { StoreUnavailableError } from "./errors.js";

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
export function startSweeper(steps: readonly SweepStep[], intervalMs: number, logger: Logger): () => void {
  let outage = false;
  const runStep = async ({ name, run }: SweepStep) => {
    try {
      await run();
      if (outage) logger.info({ step: name }, "the store is back: background sweeps resume");
      outage = false;
    } catch (error) {
      if (!(error instanceof StoreUnavailableError)) {
        logger.error({ error }, `${name} failed`);
      } else if (!outage) {
        outage = true;
        logger.warn({ step: name, reason: error.reason }, "the store is unavailable: background sweeps pause until it is back");
      }
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
