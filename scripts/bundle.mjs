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
 *
 * The chunks are made ASCII only (asciiOnly below). V8 keeps each loaded
 * script's source in the heap for as long as the process runs, one byte a
 * character when every character is Latin-1 and two bytes a character
 * otherwise: the one `’` in a dependency's comment doubled the 5.3 MB main
 * chunk to 10.6 MB of heap, kept from start to exit.
 */
import { cpSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
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
asciiOnly(outdir);
cpSync(join(root, "src", "store", "lua"), join(outdir, "lua"), { recursive: true });
console.log(`bundle: ${join("dist", "bundle", "approval-relay.js")}`);

/**
 * Rewrites every character above U+007F in the chunks as a `\u{…}` escape.
 * esbuild already writes ASCII strings, regular expressions and identifiers
 * (its default `charset: "ascii"`); what it leaves are the comments it keeps,
 * where an escape reads as well and means nothing. A chunk with non-ASCII
 * outside a comment would make the escape change its meaning, so any line
 * that is not a comment fails the build instead.
 */
function asciiOnly(dir) {
  for (const name of readdirSync(dir).filter((n) => n.endsWith(".js"))) {
    const file = join(dir, name);
    const text = readFileSync(file, "utf8");
    if (!/[\u0080-\uffff]/.test(text)) continue;
    const lines = text.split("\n").map((line, i) => {
      if (!/[\u0080-\uffff]/.test(line)) return line;
      const comment = line.search(/\/\/|\/\*|^\s*\*/);
      if (comment < 0 || /[\u0080-\uffff]/.test(line.slice(0, comment)))
        throw new Error(`${name}:${i + 1}: non-ASCII outside a comment; cannot make the chunk ASCII only`);
      return line.slice(0, comment) + line.slice(comment).replace(/[\u{80}-\u{10ffff}]/gu, (c) => `\\u{${c.codePointAt(0).toString(16)}}`);
    });
    writeFileSync(file, lines.join("\n"));
  }
}
