#!/usr/bin/env node
/**
 * The `approval-relay` executable (package.json `bin`). The only place the
 * CLI touches the process: it reads process.env once, turns Ctrl-C and
 * SIGTERM into an abort (a second one exits at once) and sets the exit code.
 */
import { constants, PerformanceObserver } from "node:perf_hooks";
import { getHeapStatistics, setFlagsFromString } from "node:v8";
import type { HeapControls } from "./heap.js";
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
  execArgv: process.execArgv,
  heap: v8Heap(),
});
// A relay that has stopped exits even when a call to Slack or Redis still hangs (it would hold the process until its own timeout).
if (command === "serve") setTimeout(() => process.exit(), SERVE_EXIT_MS).unref();

function v8Heap(): HeapControls {
  return {
    setFlags: setFlagsFromString,
    usedHeapBytes: () => getHeapStatistics().used_heap_size,
    onFullGc: (listener) => {
      const observer = new PerformanceObserver((list) => {
        if (list.getEntries().some((entry) => (entry as { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR)) listener();
      });
      observer.observe({ entryTypes: ["gc"] });
      return () => observer.disconnect();
    },
  };
}
