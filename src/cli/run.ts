/**
 * The `approval-relay` command line: picks the subcommand and hands it the
 * process's I/O. Separate from the bin entry so tests can run it in-process.
 */
import { ask } from "./ask.js";
import { audit } from "./audit.js";
import { hook } from "./hook.js";
import type { CliIo } from "./io.js";
import { serve } from "./serve.js";
import { EXIT, USAGE } from "./usage.js";

export async function run(argv: string[], io: CliIo): Promise<number> {
  const [command, ...args] = argv;
  switch (command) {
    case "ask":
      return ask(args, io);
    case "hook":
      return hook(args, io);
    case "audit":
      return audit(args, io);
    case "serve":
      return serve(args, io);
    case "mcp":
      // Loaded lazily: ask and hook never load the MCP SDK.
      return (await import("./mcp.js")).mcp(args, io);
    case "help":
    case "--help":
    case "-h":
      io.stdout.write(USAGE);
      return 0;
    default:
      io.stderr.write(`approval-relay: ${command === undefined ? "no command given" : `unknown command "${command}"`}\n\n${USAGE}`);
      return EXIT.error;
  }
}
