/**
 * Preloaded by `npm start` (node --import): starts the relay from the
 * current build, rebuilding first only when the sources changed since the
 * last build (ensureBuild in scripts/build-stamp.mjs), so a developer who
 * edits src/ and runs `npm start` gets the change, and a start with a
 * current build costs a few stat calls instead of a 6–8 s tsc run. Without
 * src/ (an installed package) it does nothing; the Dockerfile runs dist/
 * directly.
 */
import { ensureBuild } from "./build-stamp.mjs";

if (!ensureBuild("npm start", "node dist/cli/main.js serve")) process.exit(1);
