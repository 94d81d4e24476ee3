#!/usr/bin/env -S node --heap-growing-percent=30 --max-semi-space-size=16
/**
 * The `approval-relay` executable (package.json `bin`). The only place the
 * CLI touches the process: it reads process.env once, turns Ctrl-C and
 * SIGTERM into an abort (a second one exits at once) and sets the exit code.
 * The shebang gives node the relay's memory flags (`--heap-growing-percent=30
 * --max-semi-space-size=16`, as bin/approval-relay.mjs, `npm start` and the
 * Dockerfile do; docs/performance.md "Heap growth").
 */
import { run } from "./run.js";

/** How long a stopped relay's process may linger for calls still in flight before it exits (ms). */
const SERVE_EXIT_MS = 500;

const controller = new AbortController();
let signals = 0;
const onSignal = (signal: NodeJS.Signals) => {
  signals += 1;
  if (signals > 1) process.exit(signal === "SIGINT" ? 130 : 143);
  controller.abort();
};
process.on("SIGINT", onSignal);
process.on("SIGTERM", onSignal);

const command = process.argv[2];
process.exitCode = await run(process.argv.slice(2), {
  env: process.env,
  stdin: process.stdin,
  stdout: process.stdout,
  stderr: process.stderr,
  signal: controller.signal,
  cwd: process.cwd(),
});
// A relay that has stopped exits even when a call to Slack or Redis still hangs (it would hold the process until its own timeout).
if (command === "serve") setTimeout(() => process.exit(), SERVE_EXIT_MS).unref();
