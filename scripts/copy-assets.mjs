/**
 * Copies the files the compiled code reads at runtime, which tsc does not
 * emit: the Redis store's Lua scripts (src/store/lua → <outDir>/store/lua).
 * The target folder is emptied first.
 * Usage: node scripts/copy-assets.mjs [outDir]   (outDir defaults to dist)
 */
import { copyFileSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const outDir = resolve(root, process.argv[2] ?? "dist");
const assets = [{ from: "src/store/lua", to: "store/lua", ext: ".lua" }];

let copied = 0;
for (const { from, to, ext } of assets) {
  const source = join(root, from);
  // Start from an empty folder so scripts renamed or removed in src do not linger.
  rmSync(join(outDir, to), { recursive: true, force: true });
  for (const entry of readdirSync(source, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith(ext)) continue;
    const file = join(entry.parentPath ?? entry.path, entry.name);
    const target = join(outDir, to, relative(source, file));
    mkdirSync(dirname(target), { recursive: true });
    copyFileSync(file, target);
    copied += 1;
  }
}
console.log(`copy-assets: ${copied} file(s) → ${relative(root, outDir) || "."}`);
