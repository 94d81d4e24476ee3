/**
 * `approval-relay serve` (what `npm start` runs): starts the relay and stops
 * it cleanly on Ctrl-C or SIGTERM, whenever it comes (while starting too) and
 * within RELAY_SHUTDOWN_GRACE plus STOP_BUDGET_MS whatever Slack or Redis do. The relay is loaded only here, so `ask`
 * and `hook` start fast and never load Slack or Redis code. Before loading
 * it, serve starts following the V8 heap's growth (./heap.ts), so a relay
 * holding thousands of long-polls does not balloon with garbage.
 */
import { parseArgs } from "node:util";
import { settleBefore } from "../protocol/timing.js";
import { governHeap, growthGivenOnCommandLine } from "./heap.js";
import type { CliIo } from "./io.js";
import { EXIT, USAGE } from "./usage.js";

export async function serve(args: string[], io: CliIo): Promise<number> {
  let help: boolean | undefined;
  try {
    help = parseArgs({ args, options: { help: { type: "boolean", short: "h" } }, strict: true }).values.help;
  } catch (error) {
    io.stderr.write(`approval-relay serve: ${error instanceof Error ? error.message : String(error)}\n\n${USAGE}`);
    return EXIT.error;
  }
  if (help) {
    io.stdout.write(USAGE);
    return 0;
  }
  const stopHeap = io.heap && !growthGivenOnCommandLine(io.execArgv ?? []) ? governHeap(io.heap) : () => {};
  try {
    return await runRelay(io);
  } finally {
    stopHeap();
  }
}

/**
 * How long stopping may take beyond RELAY_SHUTDOWN_GRACE (ms): closing the
 * server, Slack and the store after the drain. A stop that takes longer (a
 * call to Slack or Redis that hangs) is given up, and the process exits.
 */
export const STOP_BUDGET_MS = 5_000;

async function runRelay(io: CliIo): Promise<number> {
  const { startRelay, StartInterrupted } = await import("../main.js");
  let relay: Awaited<ReturnType<typeof startRelay>>;
  try {
    relay = await startRelay({ env: io.env, signal: io.signal });
  } catch (error) {
    if (error instanceof StartInterrupted) return 0;
    io.stderr.write(`approval-relay serve: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
  if (!io.signal.aborted) await new Promise((resolve) => io.signal.addEventListener("abort", resolve, { once: true }));
  const budgetMs = relay.config.shutdownGraceSeconds * 1000 + STOP_BUDGET_MS;
  const stopped = await settleBefore(
    relay.close().then(() => true),
    { ms: budgetMs },
    () => false,
  );
  if (!stopped)
    io.stderr.write(`approval-relay serve: not stopped within ${budgetMs / 1000} s of the signal (a call to Slack or Redis hangs); exiting anyway\n`);
  return 0;
}
