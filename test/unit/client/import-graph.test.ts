/**
 * `slack-approval-relay/client` must stay light: agents install it next to
 * their own code, so its runtime import graph may hold zod, Node built-ins
 * and the relay's pure request schemas, never Bolt, ioredis or the server.
 */
import { readFileSync } from "node:fs";
import { dirname, join, normalize } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../../..", import.meta.url));

/**
 * Static runtime imports (type-only ones are erased first) of every module
 * reachable from `entry`. Dynamic imports are left out: they load lazily
 * (`serve` loads the relay that way).
 */
function runtimeGraph(entry: string): { modules: string[]; packages: string[] } {
  const modules = new Set([entry]);
  const packages = new Set<string>();
  const queue = [entry];
  while (queue.length > 0) {
    const file = queue.pop()!;
    const source = readFileSync(join(root, file), "utf8");
    const js = ts.transpileModule(source, { fileName: file, compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } }).outputText;
    for (const [, specifier] of js.matchAll(/(?:from|^import)\s*"([^"]+)"/gm)) {
      if (!specifier!.startsWith(".")) {
        packages.add(specifier!);
        continue;
      }
      const dependency = normalize(join(dirname(file), specifier!.replace(/\.js$/, ".ts")));
      if (!modules.has(dependency)) {
        modules.add(dependency);
        queue.push(dependency);
      }
    }
  }
  return { modules: [...modules].sort(), packages: [...packages].sort() };
}

describe("the client library's import graph", () => {
  it("when loaded, it pulls in only the client, the pure request schemas, the callback signature check, zod and Node built-ins", () => {
    const { modules, packages } = runtimeGraph("src/client/index.ts");
    expect(modules.filter((m) => !m.startsWith("src/client/"))).toEqual([
      "src/callbacks/signature.ts",
      "src/requests/decisions.ts",
      "src/requests/pattern.ts",
      "src/requests/schemas.ts",
    ]);
    expect(packages.filter((p) => !p.startsWith("node:"))).toEqual(["zod"]);
  });

  it("when the CLI runs ask or hook, it loads no Slack or Redis code (serve loads the relay lazily)", () => {
    const { packages } = runtimeGraph("src/cli/run.ts");
    expect(packages.filter((p) => !p.startsWith("node:"))).toEqual(["zod"]);
  });
});
