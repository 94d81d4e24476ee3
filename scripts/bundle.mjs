/**
 * Part of `npm run build`: bundles the relay's command line (src/cli/main.ts
 * and everything it loads, node_modules included) with esbuild into
 * dist/bundle/approval-relay.js, which `npm start` and the Dockerfile run.
 * Why: a start from the tsc output resolves, reads and compiles ~1,000
 * modules (Bolt and its HTTP client, Fastify and its plugins); the bundle is a
 * handful of files, which halves the time to a healthy /healthz. Dynamic
 * imports stay lazy (code splitting): `ask` and `hook` never load the server,
 * and the Redis store and the OpenAPI document load only when used. The
 * library (dist/main.js, dist/client) stays tsc's output, for its types and
 * for projects that bundle it themselves. The Redis store reads its Lua
 * scripts next to its own module, so they are copied in beside the chunks.
 */
import { cpSync, rmSync } from "node:fs";
import { join } from "node:path";
import { build } from "esbuild";
import { root } from "./build-stamp.mjs";

const outdir = join(root, "dist", "bundle");
rmSync(outdir, { recursive: true, force: true });
await build({
  absWorkingDir: root,
  entryPoints: { "approval-relay": "src/cli/main.ts" },
  outdir,
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  chunkNames: "[name]-[hash]",
  // ws's optional native speed-ups: required inside try/catch, absent here.
  external: ["bufferutil", "utf-8-validate"],
  // The CommonJS packages in the bundle (Bolt, ioredis…) call require() for node's built-ins.
  banner: { js: 'import { createRequire as __bundleCreateRequire } from "node:module"; const require = __bundleCreateRequire(import.meta.url);' },
  legalComments: "none",
  logLevel: "warning",
});
cpSync(join(root, "src", "store", "lua"), join(outdir, "lua"), { recursive: true });
console.log(`bundle: ${join("dist", "bundle", "approval-relay.js")}`);
