/**
 * The framework adapters as users install them: the package packed with
 * `npm pack`, unpacked into a user's project that has only one framework
 * (offline: its dependencies, the framework and Node's types are linked
 * from this repository's node_modules, no other framework), and a user's file that imports
 * the subpath export. It must resolve at runtime (Node) and type-check (tsc,
 * NodeNext resolution): a missing `exports` entry or .d.ts, or an import of
 * another framework, fails here.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../../..", import.meta.url));
const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
const npm = process.platform === "win32" ? "npm.cmd" : "npm";
/** What `npm install slack-approval-relay` brings along: its dependencies (no framework is one). */
const DEPENDENCIES = Object.keys((JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { dependencies: Record<string, string> }).dependencies);

const CASES = [
  {
    subpath: "openai-agents",
    frameworks: ["@openai/agents", "zod"],
    code: `import { Agent } from "@openai/agents";
import { approveInterruptions, runWithApprovals } from "slack-approval-relay/openai-agents";
import { RelayClient } from "slack-approval-relay/client";
const relay = new RelayClient({ url: "http://127.0.0.1:1", token: "t" });
const agent = new Agent({ name: "ops", instructions: "x" });
export const run = (): Promise<unknown> => runWithApprovals(agent, "hi", relay, { timeoutSeconds: 60 });
export const approve: typeof approveInterruptions = approveInterruptions;
console.log(typeof approveInterruptions, typeof runWithApprovals);
`,
  },
  {
    subpath: "ai-sdk",
    frameworks: ["ai", "zod"],
    code: `import { generateText, type LanguageModel } from "ai";
import { answerApprovalRequests, createToolApproval } from "slack-approval-relay/ai-sdk";
import { RelayClient } from "slack-approval-relay/client";
const relay = new RelayClient({ url: "http://127.0.0.1:1", token: "t" });
export const call = (model: LanguageModel) => generateText({ model, prompt: "x", toolApproval: createToolApproval(relay) });
export const answer = (content: unknown[]) => answerApprovalRequests(content, relay);
console.log(typeof createToolApproval, typeof answerApprovalRequests);
`,
  },
  {
    subpath: "langgraph",
    frameworks: ["@langchain/langgraph", "@langchain/core", "langchain", "zod"],
    code: `import type { HITLRequest, HITLResponse } from "langchain";
import { answerHitlRequest, invokeWithApprovals } from "slack-approval-relay/langgraph";
import { RelayClient } from "slack-approval-relay/client";
const relay = new RelayClient({ url: "http://127.0.0.1:1", token: "t" });
export const answer = (request: HITLRequest): Promise<HITLResponse> => answerHitlRequest(request, relay, { threadId: "t", interruptId: "i" });
export const invoke: typeof invokeWithApprovals = invokeWithApprovals;
console.log(typeof answerHitlRequest, typeof invokeWithApprovals);
`,
  },
];

describe("the packed package's framework subpath exports", { timeout: 300_000 }, () => {
  let dir: string;
  let tarball: string;
  beforeAll(() => {
    // A current build first (what `npm pack` would run as `prepare`), then pack without scripts.
    const built = spawnSync(process.execPath, ["--import", "./scripts/ensure-build.mjs", "-e", ""], { cwd: root, encoding: "utf8" });
    if (built.status !== 0) throw new Error(`npm run build failed:\n${built.stderr}`);
    dir = mkdtempSync(join(tmpdir(), "relay-pack-"));
    const packed = spawnSync(npm, ["pack", "--ignore-scripts", "--pack-destination", dir], { cwd: root, encoding: "utf8" });
    if (packed.status !== 0) throw new Error(`npm pack failed:\n${packed.stderr}`);
    tarball = join(
      dir,
      readdirSync(dir).find((name) => name.endsWith(".tgz"))!,
    );
  }, 300_000);
  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  for (const { subpath, frameworks, code } of CASES) {
    it(`slack-approval-relay/${subpath} resolves and type-checks with only ${frameworks.filter((f) => f !== "zod").join(", ")} installed`, () => {
      const project = mkdtempSync(join(dir, `${subpath}-`));
      writeFileSync(join(project, "package.json"), JSON.stringify({ name: "user-project", private: true, type: "module" }));
      // The package as npm unpacks it; its dependencies (what npm installs with it), the framework and Node's types linked from this repository's node_modules.
      const modules = join(project, "node_modules");
      const ours = join(modules, "slack-approval-relay");
      mkdirSync(ours, { recursive: true });
      const unpacked = spawnSync("tar", ["-xzf", tarball, "-C", ours, "--strip-components=1"], { encoding: "utf8" });
      expect(unpacked.status, unpacked.stderr).toBe(0);
      for (const name of new Set([...frameworks, ...DEPENDENCIES, "@types/node"])) {
        mkdirSync(dirname(join(modules, name)), { recursive: true });
        symlinkSync(join(root, "node_modules", name), join(modules, name), "dir");
      }
      const others = CASES.flatMap((other) => other.frameworks).filter((name) => !frameworks.includes(name));
      for (const name of others) expect(existsSync(join(modules, name))).toBe(false);

      writeFileSync(join(project, "index.ts"), code);
      const compilerOptions = {
        module: "NodeNext",
        moduleResolution: "NodeNext",
        target: "ES2022",
        strict: true,
        noEmit: false,
        outDir: "out",
        types: ["node"],
        skipLibCheck: true,
      };
      writeFileSync(join(project, "tsconfig.json"), JSON.stringify({ compilerOptions, files: ["index.ts"] }));
      const checked = spawnSync(process.execPath, [tsc, "-p", "."], { cwd: project, encoding: "utf8" });
      expect(checked.status, checked.stdout).toBe(0);

      const ran = spawnSync(process.execPath, [join(project, "out", "index.js")], { cwd: project, encoding: "utf8" });
      expect(ran.status, ran.stderr).toBe(0);
      expect(ran.stdout).toBe("function function\n");
    });
  }
});
