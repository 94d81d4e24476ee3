#!/usr/bin/env -S node --heap-growing-percent=30 --max-semi-space-size=16
/**
 * The `approval-relay` executable (package.json `bin`; `npm link` in a clone
 * puts it on the PATH). In a clone it first makes sure dist/ holds a build
 * of the current src/ (ensureBuild in scripts/build-stamp.mjs): the first
 * run after a clone or an edit builds once and says so on stderr, later runs
 * start at once. An installed package (a tarball made with `npm pack`) ships
 * no scripts/ and no src/: nothing to check. Then it runs the CLI
 * (src/cli/main.ts, as built into dist/) in this same process.
 *
 * The shebang gives node the relay's memory flags, as `npm start` and the
 * Dockerfile do (docs/performance.md "Heap growth"): they cannot go in
 * NODE_OPTIONS, and the relay never changes V8 flags while it runs.
 */
import { existsSync } from "node:fs";

const buildStamp = new URL("../scripts/build-stamp.mjs", import.meta.url);
if (existsSync(buildStamp)) {
  const { ensureBuild } = await import(buildStamp.href);
  if (!ensureBuild("approval-relay", "node dist/cli/main.js")) process.exit(3);
}
await import("../dist/cli/main.js");
