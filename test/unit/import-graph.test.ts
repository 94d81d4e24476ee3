/**
 * Dependencies point one way (BRIEF, issue #6): every module under src/ may
 * import only from its own layer or lower ones, adapters never import each
 * other, and the client library (src/client) imports nothing of the server:
 * agents install it next to their own code, so its runtime import graph may
 * hold zod, Node built-ins and the wire contract (src/protocol), never Bolt,
 * ioredis or the server. Type-only imports count for the layers too: a type
 * is a dependency all the same (the store contract once made a cycle of them).
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, normalize } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../..", import.meta.url));

/** Low → high. A module may import from its own layer and the ones before it. */
const LAYERS: Array<{ name: string; holds: (file: string) => boolean }> = [
  { name: "protocol", holds: (f) => f.startsWith("src/protocol/") },
  { name: "shared", holds: (f) => f === "src/logger.ts" },
  { name: "mcp", holds: (f) => f.startsWith("src/mcp/") },
  { name: "domain", holds: (f) => f.startsWith("src/requests/") },
  { name: "config", holds: (f) => f.startsWith("src/config/") },
  { name: "adapters", holds: (f) => ["src/store/", "src/slack/", "src/callbacks/"].some((dir) => f.startsWith(dir)) },
  // The web console is HTTP too: its routes mount on the relay's Fastify app.
  { name: "http", holds: (f) => f.startsWith("src/http/") || f.startsWith("src/console/") },
  { name: "main", holds: (f) => f === "src/main.ts" || f === "src/lifecycle.ts" || f.startsWith("src/wiring/") },
  { name: "cli", holds: (f) => f.startsWith("src/cli/") },
];
const CLIENT = "src/client/";
/** The framework adapters (package.json subpath exports) and the framework packages each may import: its optional peer dependencies. */
const FRAMEWORKS: Record<string, string[]> = {
  "src/client/openai-agents.ts": ["@openai/agents"],
  "src/client/ai-sdk.ts": ["ai"],
  "src/client/langgraph.ts": ["@langchain/langgraph", "langchain"],
};

interface Edge {
  from: string;
  /** A src/ path for a relative import, else the package name. */
  to: string;
  typeOnly: boolean;
  dynamic: boolean;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith(".ts") ? [path] : [];
  });
}

/** Every import, export-from and dynamic import() of `file`, type-only ones marked. */
function importsOf(file: string): Edge[] {
  const source = ts.createSourceFile(file, readFileSync(join(root, file), "utf8"), ts.ScriptTarget.ES2022, true);
  const edges: Edge[] = [];
  const add = (specifier: string, typeOnly: boolean, dynamic: boolean) => {
    const to = specifier.startsWith(".") ? normalize(join(dirname(file), specifier.replace(/\.js$/, ".ts"))) : specifier;
    edges.push({ from: file, to, typeOnly, dynamic });
  };
  const visit = (node: ts.Node) => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const clause = node.importClause;
      const typeOnly = clause !== undefined && (clause.isTypeOnly || allTypeOnly(clause));
      add(node.moduleSpecifier.text, typeOnly, false);
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      const named = node.exportClause && ts.isNamedExports(node.exportClause) ? node.exportClause.elements : undefined;
      add(node.moduleSpecifier.text, node.isTypeOnly || (named !== undefined && named.length > 0 && named.every((e) => e.isTypeOnly)), false);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [argument] = node.arguments;
      if (argument && ts.isStringLiteral(argument)) add(argument.text, false, true);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return edges;
}

/** How many times `file`'s code (not its comments) reads `process.env`. */
function processEnvReads(file: string): number {
  const source = ts.createSourceFile(file, readFileSync(join(root, file), "utf8"), ts.ScriptTarget.ES2022, true);
  let reads = 0;
  const visit = (node: ts.Node) => {
    if (ts.isPropertyAccessExpression(node) && node.name.text === "env" && ts.isIdentifier(node.expression) && node.expression.text === "process") reads += 1;
    ts.forEachChild(node, visit);
  };
  visit(source);
  return reads;
}

function allTypeOnly(clause: ts.ImportClause): boolean {
  const bindings = clause.namedBindings;
  return (
    clause.name === undefined &&
    bindings !== undefined &&
    ts.isNamedImports(bindings) &&
    bindings.elements.length > 0 &&
    bindings.elements.every((e) => e.isTypeOnly)
  );
}

const files = sourceFiles("src");
const edges = files.flatMap(importsOf);
const layerOf = (file: string) => LAYERS.findIndex((layer) => layer.holds(file));
const packageOf = (file: string) => file.split("/").slice(0, 2).join("/");
const show = (edge: Edge) => `${edge.from} → ${edge.to}${edge.typeOnly ? " (type-only)" : ""}${edge.dynamic ? " (dynamic)" : ""}`;

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

describe("the layers of src/", () => {
  it("every module belongs to one layer (or to the client library)", () => {
    expect(files.filter((file) => !file.startsWith(CLIENT) && layerOf(file) === -1)).toEqual([]);
  });

  it("no module imports from a layer above its own", () => {
    const climbing = edges
      .filter((edge) => edge.to.startsWith("src/") && !edge.from.startsWith(CLIENT) && !edge.to.startsWith(CLIENT))
      .filter((edge) => layerOf(edge.to) > layerOf(edge.from))
      .map((edge) => `${show(edge)}: ${LAYERS[layerOf(edge.from)]!.name} may not import ${LAYERS[layerOf(edge.to)]!.name}`);
    expect(climbing).toEqual([]);
  });

  it("the domain (src/requests) never imports the configuration (src/config): config reads the domain's policy vocabulary, not the other way round", () => {
    expect(edges.filter((edge) => edge.from.startsWith("src/requests/") && edge.to.startsWith("src/config/")).map(show)).toEqual([]);
  });

  it("only src/config reads process.env, and the CLI's entry, which hands the environment to its commands", () => {
    const readers = files.filter((file) => processEnvReads(file) > 0 && !file.startsWith("src/config/"));
    expect(readers).toEqual(["src/cli/main.ts"]);
  });

  it("adapters (store, slack, callbacks) do not import each other", () => {
    const adapters = LAYERS.findIndex((layer) => layer.name === "adapters");
    const across = edges
      .filter((edge) => layerOf(edge.from) === adapters && layerOf(edge.to) === adapters && packageOf(edge.from) !== packageOf(edge.to))
      .map(show);
    expect(across).toEqual([]);
  });

  it("the wire contract (src/protocol) imports only zod, re2js (patterns) and Node built-ins", () => {
    const outside = edges
      .filter((edge) => edge.from.startsWith("src/protocol/") && !edge.to.startsWith("src/protocol/"))
      .filter((edge) => edge.to !== "zod" && edge.to !== "re2js" && !edge.to.startsWith("node:"))
      .map(show);
    expect(outside).toEqual([]);
  });

  it("the MCP tools (src/mcp) import only themselves, src/protocol, zod, Node built-ins and the MCP SDK: `approval-relay mcp` runs them next to the agent, with no server code", () => {
    const outside = edges
      .filter((edge) => edge.from.startsWith("src/mcp/") && !edge.to.startsWith("src/mcp/") && !edge.to.startsWith("src/protocol/"))
      .filter((edge) => edge.to !== "zod" && !edge.to.startsWith("node:") && !edge.to.startsWith("@modelcontextprotocol/sdk/"))
      .map(show);
    expect(outside).toEqual([]);
  });

  it("the client library imports only itself, src/protocol, zod, Node built-ins, (types only) the Agent SDK, and each framework adapter its own framework", () => {
    const outside = edges
      .filter((edge) => edge.from.startsWith(CLIENT))
      .filter((edge) => !edge.to.startsWith(CLIENT) && !edge.to.startsWith("src/protocol/") && edge.to !== "zod" && !edge.to.startsWith("node:"))
      .filter((edge) => !(edge.typeOnly && edge.to === "@anthropic-ai/claude-agent-sdk"))
      .filter((edge) => !FRAMEWORKS[edge.from]?.includes(edge.to))
      .map(show);
    expect(outside).toEqual([]);
  });

  it("a framework adapter is imported by nothing in src/ (each is its own subpath export, loaded only by who uses that framework)", () => {
    expect(edges.filter((edge) => Object.hasOwn(FRAMEWORKS, edge.to)).map(show)).toEqual([]);
  });

  it("only the metrics module imports prom-client: the domain and the adapters are handed narrow recorders", () => {
    expect(edges.filter((edge) => edge.to === "prom-client").map((edge) => edge.from)).toEqual(["src/http/metrics.ts"]);
  });

  it("only the CLI uses the client library; the server never does", () => {
    expect(edges.filter((edge) => edge.to.startsWith(CLIENT) && !edge.from.startsWith(CLIENT) && !edge.from.startsWith("src/cli/")).map(show)).toEqual([]);
  });
});

describe("the client library's import graph", () => {
  it("when loaded, it pulls in only the client, the wire contract (src/protocol), zod, re2js (patterns) and Node built-ins", () => {
    const { modules, packages } = runtimeGraph("src/client/index.ts");
    expect(modules.filter((m) => !m.startsWith("src/client/"))).toEqual([
      "src/protocol/callback-signature.ts",
      "src/protocol/claude-code-hook.ts",
      "src/protocol/decisions.ts",
      "src/protocol/local-relay.ts",
      "src/protocol/pattern.ts",
      "src/protocol/permission-result.ts",
      "src/protocol/request-body.ts",
      "src/protocol/request-view.ts",
      "src/protocol/texts.ts",
      "src/protocol/timing.ts",
    ]);
    expect(packages.filter((p) => !p.startsWith("node:"))).toEqual(["re2js", "zod"]);
  });

  it("when the CLI runs ask or hook, it loads no Slack or Redis code (serve loads the relay lazily)", () => {
    const { packages } = runtimeGraph("src/cli/run.ts");
    expect(packages.filter((p) => !p.startsWith("node:"))).toEqual(["re2js", "zod"]);
  });
});
