/**
 * `npm run build` (also run by `prepare`, i.e. at `npm ci`): compiles src/
 * into dist/ with tsc, copies the runtime assets tsc does not emit
 * (scripts/copy-assets.mjs), bundles the command line for `npm start`
 * (scripts/bundle.mjs) and the web console's page (scripts/bundle-console.mjs), then writes the build stamp that lets
 * `npm start` skip the build when nothing changed (scripts/build-stamp.mjs).
 * The stamp holds the inputs' state from before the build, so an edit made
 * while tsc runs still counts as a change; a failed build leaves no stamp.
 */
import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import { join } from "node:path";
import { newestInputMtime, removeStamp, root, writeStamp } from "./build-stamp.mjs";

const run = (args) => spawnSync(process.execPath, args, { cwd: root, stdio: "inherit" }).status === 0;

const inputsMtimeMs = newestInputMtime();
removeStamp();
const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
if (
  !run([tsc, "-p", "tsconfig.build.json"]) ||
  !run([join(root, "scripts", "copy-assets.mjs")]) ||
  !run([join(root, "scripts", "bundle.mjs")]) ||
  !run([join(root, "scripts", "bundle-console.mjs")])
)
  process.exit(1);
if (inputsMtimeMs !== undefined) writeStamp(inputsMtimeMs);
