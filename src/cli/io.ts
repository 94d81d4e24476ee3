/**
 * What a CLI command may touch, passed in by the bin entry so that commands
 * never read globals (process.env, process.stdout) and stay testable.
 */
import type { FetchLike } from "../client/types.js";
import type { HeapControls } from "./heap.js";

export interface CliIo {
  env: Readonly<Record<string, string | undefined>>;
  stdin: AsyncIterable<string | Uint8Array>;
  stdout: { write(text: string): unknown };
  /** A terminal (isTTY) gets a live countdown while `ask` waits; anything else plain lines. */
  stderr: { write(text: string): unknown; isTTY?: boolean };
  /** Aborts on Ctrl-C or SIGTERM. */
  signal: AbortSignal;
  /** Working directory, shown in Slack as where the question comes from. */
  cwd: string;
  fetch?: FetchLike;
  /** Unix time in milliseconds; default Date.now. */
  now?: () => number;
  /** The node command line's flags (process.execArgv); serve keeps the V8 settings given there. */
  execArgv?: readonly string[];
  /** V8's heap, which serve tunes while the relay runs (./heap.ts); unset: left as it is. */
  heap?: HeapControls;
}
