/**
 * `approval-relay serve` (what `npm start` runs): starts the relay and stops
 * it cleanly on Ctrl-C or SIGTERM. The relay is loaded only here, so `ask`
 * and `hook` start fast and never load Slack or Redis code. Before loading
 * it, serve starts following the V8 heap's growth (./heap.ts), so a relay
 * holding thousands of long-polls does not balloon with garbage.
 */
import { parseArgs } from "node:util";
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

async function runRelay(io: CliIo): Promise<number> {
  const { startRelay } = await import("../main.js");
  let relay: Awaited<ReturnType<typeof startRelay>>;
  try {
    relay = await startRelay({ env: io.env });
  } catch (error) {
    io.stderr.write(`approval-relay serve: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
  if (!io.signal.aborted) await new Promise((resolve) => io.signal.addEventListener("abort", resolve, { once: true }));
  await relay.close();
  return 0;
}
