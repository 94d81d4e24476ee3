/**
 * `approval-relay serve` (what `npm start` runs): starts the relay and stops
 * it cleanly on Ctrl-C or SIGTERM. The relay is loaded only here, so `ask`
 * and `hook` start fast and never load Slack or Redis code. Before loading
 * it, serve sets the V8 heap growth a long-running relay needs (./heap.ts).
 */
import { parseArgs } from "node:util";
import { servingV8Flags } from "./heap.js";
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
  if (io.setV8Flags) for (const flag of servingV8Flags(io.execArgv ?? [])) io.setV8Flags(flag);
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
