#!/usr/bin/env node
/**
 * The `approval-relay` executable (package.json `bin`; `npm link` in a clone
 * puts it on the PATH). In a clone it first makes sure dist/ holds a build
 * of the current src/ (ensureBuild in scripts/build-stamp.mjs): the first
 * run after a clone or an edit builds once and says so on stderr, later runs
 * start at once. An installed package (a tarball made with `npm pack`) ships
 * no scripts/ and no src/: nothing to check. Then it runs the CLI
 * (src/cli/main.ts, as built into dist/) in this same process.
 */
import { existsSync } from "node:fs";

const buildStamp = new URL("../scripts/build-stamp.mjs", import.meta.url);
if (existsSync(buildStamp)) {
  const { ensureBuild } = await import(buildStamp.href);
  if (!ensureBuild("approval-relay", "node dist/cli/main.js")) process.exit(3);
}
await import("../dist/cli/main.js");
