import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";
import { LongestFirst } from "./test/longest-first.js";

/**
 * Two projects, one run. Where a test file cannot leave anything behind that
 * another file would see (no fake timers left on, no mocks of modules, no
 * helper that cleans up in a module-level hook), files share a worker's module
 * cache (`isolate: false`): Fastify, Bolt and zod are imported once per
 * worker instead of once per file, which was a third of the unit tests' time
 * and half the Slack integration tests' (their folder: 118 s → 62 s on two
 * busy workers); the MCP, console and framework folders' import time
 * 46-62 s → 19-23 s and their CPU time a third less, the hook files' import
 * 29 s → 13 s (two runs each on a busy 2-CPU machine). The CLI tests and the
 * agent SDK's keep a fresh module graph per file.
 */
// hooks/endpoint-keepalive times a caller leaving mid-response; it once missed that in a shared worker
// (passing alone every time), so it and its Claude Code twin keep a module graph of their own until that is understood.
// slack/click-recorded-before-ack spawns the CLI through test/helpers/cli.ts.
const shared = [
  "test/unit/**/*.test.ts",
  "test/integration/{http,client,callbacks,store,mcp,console,frameworks}/**/*.test.ts",
  "test/integration/hooks/!(*-keepalive).test.ts",
  "test/integration/slack/!(click-recorded-before-ack).test.ts",
];

export default defineConfig({
  test: {
    // The Redis the tests use: REDIS_TEST_URL, or a throwaway redis-server for the run.
    globalSetup: ["test/global-setup.ts"],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    restoreMocks: true,
    // Vitest's default is one worker fewer than the CPUs: one on a 2-CPU machine. Much of the suite's
    // time is waiting (sockets, spawned processes, timers), so two workers overlap it even on 2 CPUs.
    // A third did not pay on 2 CPUs: the cli, hooks, mcp, console, agent-sdk and http folders took 501 s
    // with three against 416 s with two, for the same CPU time (271 and 263 CPU-s: Claude Code, Chromium
    // and the spawned CLI keep the CPUs busy), on a machine shared with other runs (load 12-14 and 4-12).
    maxWorkers: Math.max(2, availableParallelism() - 1),
    // The soaks first, also on a fresh clone (no durations cached yet).
    sequence: { sequencer: LongestFirst },
    projects: [
      { extends: true, test: { name: "shared", include: shared, isolate: false } },
      { extends: true, test: { name: "isolated", include: ["test/**/*.test.ts"], exclude: shared } },
    ],
  },
});
