/**
 * The build stamp: dist/.build-stamp.json records the newest modification
 * time among the build's inputs (everything under src/ — files and folders,
 * so added, removed and renamed files count — and the tsconfig files) as it
 * was when the last successful build started. scripts/build.mjs writes it;
 * scripts/ensure-build.mjs compares it with the inputs as they are now.
 * Modification times, not content hashes: a check of ~100 stat calls costs a
 * millisecond or two, and that is what keeps `npm start` fast.
 */
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
