/**
 * The build stamp: dist/.build-stamp.json records the newest modification
 * time among the build's inputs (everything under src/ — files and folders,
 * so added, removed and renamed files count — and the tsconfig files) as it
 * was when the last successful build started. scripts/build.mjs writes it;
 * ensureBuild (used by `npm start` through scripts/ensure-build.mjs and by
 * the `approval-relay` executable, bin/approval-relay.mjs) compares it with
 * the inputs as they are now and builds when they changed.
 * Modification times, not content hashes: a check of ~100 stat calls costs a
 * millisecond or two, and that is what keeps `npm start` and the CLI fast.
 */
import { spawnSync } from "node:child_process";
import { readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const stampFile = join(root, "dist", ".build-stamp.json");
const inputs = [
  "src",
  "tsconfig.json",
  "tsconfig.build.json",
  "scripts/build.mjs",
  "scripts/copy-assets.mjs",
  "scripts/bundle.mjs",
  "scripts/bundle-console.mjs",
  "ui",
];

/** The newest mtime (ms) among the inputs, or undefined when src/ is absent (an installed package, a container image). */
export function newestInputMtime() {
  let newest = 0;
  const visit = (path) => {
    const stat = statSync(path, { throwIfNoEntry: false });
    if (!stat) return false;
    newest = Math.max(newest, stat.mtimeMs);
    if (stat.isDirectory()) for (const entry of readdirSync(path)) visit(join(path, entry));
    return true;
  };
  if (!visit(join(root, "src"))) return undefined;
  for (const input of inputs.slice(1)) visit(join(root, input));
  return newest;
}

/** The inputs' newest mtime recorded by the last successful build, or undefined when there is none. */
export function readStamp() {
  try {
    const { inputsMtimeMs } = JSON.parse(readFileSync(stampFile, "utf8"));
    return typeof inputsMtimeMs === "number" ? inputsMtimeMs : undefined;
  } catch {
    return undefined;
  }
}

export function writeStamp(inputsMtimeMs) {
  writeFileSync(stampFile, `${JSON.stringify({ inputsMtimeMs })}\n`);
}

export function removeStamp() {
  rmSync(stampFile, { force: true });
}

/**
 * Builds (scripts/build.mjs) when src/ changed since the last build or there
 * is no complete build, saying so in one line on stderr first (`who` names
 * the command, `anyway` how to run what is built without building); the
 * build's own output goes to stderr too, so stdout stays the command's.
 * Returns false when the build failed (after saying so). Without src/ (an
 * installed package, a container image) it does nothing.
 */
export function ensureBuild(who, anyway) {
  const newest = newestInputMtime();
  const built = readStamp();
  if (newest === undefined || (built !== undefined && newest <= built)) return true;
  const reason = built === undefined ? "no complete build in dist/" : "src/ changed since the last build";
  process.stderr.write(`${who}: building approval-relay once (${reason}; npm run build, about half a minute)…\n`);
  const started = Date.now();
  const { status } = spawnSync(process.execPath, [join(root, "scripts", "build.mjs")], { cwd: root, stdio: ["ignore", 2, 2] });
  if (status !== 0) {
    process.stderr.write(`${who}: the build failed (see above); fix the errors, or run what is in dist/ anyway with \`${anyway}\`.\n`);
    return false;
  }
  process.stderr.write(`${who}: built in ${Math.round((Date.now() - started) / 1000)} s; later runs start at once.\n`);
  return true;
}
