/**
 * Part of `npm run build`: bundles the web console's page (ui/console/app.js
 * with preact and htm) with esbuild into dist/console-page, beside its
 * index.html and style.css, which the relay serves with @fastify/static
 * (src/console/routes.ts). No CDN: the page works offline. A folder of its
 * own: dist/console holds tsc's build of src/console, which the CLI's
 * `serve` (dist/cli/main.js) loads.
 */
import { copyFileSync, mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { build } from "esbuild";
import { root } from "./build-stamp.mjs";

const out = join(root, "dist", "console-page");
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
await build({
  absWorkingDir: root,
  entryPoints: { app: "ui/console/app.js" },
  outdir: out,
  bundle: true,
  format: "esm",
  platform: "browser",
  target: "es2022",
  minify: true,
  legalComments: "none",
  logLevel: "warning",
});
copyFileSync(join(root, "ui", "console", "index.html"), join(out, "index.html"));
copyFileSync(join(root, "ui", "console", "style.css"), join(out, "style.css"));
console.log(`bundle-console: ${join("dist", "console-page")}`);
