/**
 * How tests spawn the whole `approval-relay` CLI (`serve`, `mcp`: the
 * commands that load the relay, which test/helpers/cli.ts does not compile):
 * the bundle `npm start` runs (dist/bundle, made by `npm run build`, which
 * `npm ci` runs as `prepare`) when it is a build of src/ as it is now, about
 * a second to a healthy relay; else src/cli/main.ts through tsx, several
 * seconds on a busy machine, so a test run after an edit still runs the edit.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../..", import.meta.url));
const BUNDLE = join(root, "dist", "bundle", "approval-relay.js");

/** scripts/build-stamp.mjs (plain JavaScript: typed here), the check `npm start` makes. */
const stamp = (await import(join(root, "scripts", "build-stamp.mjs"))) as {
  newestInputMtime(): number | undefined;
  readStamp(): number | undefined;
};

/** The node arguments before the CLI's own: checked at each spawn (a few stat calls), so an edit during a run counts. */
export function fullCli(): string[] {
  const newest = stamp.newestInputMtime();
  const built = stamp.readStamp();
  const current = newest !== undefined && built !== undefined && newest <= built && existsSync(BUNDLE);
  return current ? [BUNDLE] : ["--import", "tsx", "src/cli/main.ts"];
}
