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
 *
 * Bolt's receivers the relay does not start are loaded on first use
 * (lazyBoltReceivers below): Bolt's index requires all four at once, and with
 * them Express (the ExpressReceiver) and @slack/socket-mode with its own
 * undici, 1.7 MB of the main chunk. An HTTP-mode relay never uses them; loaded
 * and run, they held about 8 MB of an idle relay's RSS (docs/performance.md,
 * "The idle relay").
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
  plugins: [lazyBoltReceivers()],
});
asciiOnly(outdir);
cpSync(join(root, "src", "store", "lua"), join(outdir, "lua"), { recursive: true });
console.log(`bundle: ${join("dist", "bundle", "approval-relay.js")}`);

/**
 * Makes Bolt's eager `require("./receivers/X")` of the receivers the relay may
 * not start lazy: in Bolt's index the re-export becomes a getter, and in App.js
 * (which needs SocketModeReceiver only for `socketMode: true`, and for an
 * `instanceof` test under it) the module object becomes one whose `default`
 * requires it when read. esbuild keeps each CommonJS module's body in a
 * function run on its first require, so a receiver never read is never run.
 * A Bolt whose text no longer matches is bundled as it is (eager, working),
 * with a warning; npm-start.test.ts fails then, so the change is noticed.
 */
function lazyBoltReceivers() {
  const receivers = "ExpressReceiver|SocketModeReceiver|AwsLambdaReceiver";
  const rewrites = {
    "index.js": [
      new RegExp(`const (${receivers})_1 = __importDefault\\(require\\("(\\./receivers/\\1)"\\)\\);\\nexports\\.\\1 = \\1_1\\.default;`, "g"),
      (_, name, path) => `Object.defineProperty(exports, "${name}", { enumerable: true, get: () => __importDefault(require("${path}")).default });`,
    ],
    "App.js": [
      /const (SocketModeReceiver)_1 = __importDefault\(require\("(\.\/receivers\/\1)"\)\);/g,
      (_, name, path) => `const ${name}_1 = { get default() { return __importDefault(require("${path}")).default; } };`,
    ],
  };
  return {
    name: "lazy-bolt-receivers",
    setup(b) {
      b.onLoad({ filter: /[\\/]@slack[\\/]bolt[\\/]dist[\\/](index|App)\.js$/ }, (args) => {
        const [pattern, replace] = rewrites[args.path.replace(/.*[\\/]/, "")];
        const text = readFileSync(args.path, "utf8");
        const lazy = text.replace(pattern, replace);
        const warnings = lazy === text ? [{ text: `lazyBoltReceivers: ${args.path} no longer requires its receivers as expected; they stay eager` }] : [];
        return { contents: lazy, loader: "js", warnings };
      });
    },
  };
}

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
