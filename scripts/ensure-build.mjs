/**
 * Preloaded by `npm start` (node --import): starts the relay from the
 * current build, rebuilding first only when the sources changed since the
 * last build (scripts/build-stamp.mjs), so a developer who edits src/ and
 * runs `npm start` gets the change, and a start with a current build costs a
 * few stat calls instead of a 6–8 s tsc run. Without src/ (an installed
 * package) it does nothing; the Dockerfile runs dist/ directly.
 */
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { newestInputMtime, readStamp, root } from "./build-stamp.mjs";

const newest = newestInputMtime();
const built = readStamp();
if (newest !== undefined && (built === undefined || newest > built)) {
  process.stderr.write(`npm start: ${built === undefined ? "no complete build in dist/" : "src/ changed since the last build"}; building (npm run build)…\n`);
  const { status } = spawnSync(process.execPath, [join(root, "scripts", "build.mjs")], { cwd: root, stdio: ["ignore", 2, 2] });
  if (status !== 0) {
    process.stderr.write("npm start: the build failed (see above); fix the errors, or start what is in dist/ anyway with `node dist/cli/main.js serve`.\n");
    process.exit(1);
  }
}
