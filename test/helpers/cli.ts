/**
 * Runs the real `approval-relay` executable as a child process, as a shell
 * script or Claude Code would, and collects its exit code and output. The
 * CLI's sources are compiled once per test run, by the first test that needs
 * them (TypeScript's transpiler, into the run's folder under
 * node_modules/.cache so `zod` resolves: test/global-setup.ts makes it and
 * removes it at the end), because starting through tsx costs a second per
 * spawn and compiling costs a few seconds, which every CLI test file paid
 * when each compiled its own.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, normalize } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { inject, test as base } from "vitest";
import { fullCli } from "./full-cli.js";
import { freePort } from "./ports.js";
import { RelayStandIn, TOKEN } from "./relay-stand-in.js";
import { sleep } from "./until.js";

const root = fileURLToPath(new URL("../..", import.meta.url));
/** Static relative imports only: `serve` loads the relay lazily, and is spawned whole (./full-cli.ts). */
const RELATIVE_IMPORT = /from\s*"(\.{1,2}\/[^"]+)\.js"/g;

/**
 * Compiles src/cli/main.ts and every module it imports statically into `dir`/cli, unless a worker
 * did already: each compiles into a folder of its own and renames it into place, so a worker never
 * runs a half-written copy, and the one that loses the race drops its own. Returns the compiled entry.
 */
function compileCli(dir: string): string {
  const entry = join(dir, "cli", "src/cli/main.js");
  if (existsSync(entry)) return entry;
  const own = mkdtempSync(join(dir, "compiling-"));
  const queue = ["src/cli/main.ts"];
  const seen = new Set(queue);
  while (queue.length > 0) {
    const file = queue.pop()!;
    const source = readFileSync(join(root, file), "utf8");
    for (const match of source.matchAll(RELATIVE_IMPORT)) {
      const dependency = normalize(join(dirname(file), `${match[1]}.ts`));
      if (!seen.has(dependency) && existsSync(join(root, dependency))) {
        seen.add(dependency);
        queue.push(dependency);
      }
    }
    const output = ts.transpileModule(source, {
      fileName: file,
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
    }).outputText;
    const target = join(own, file.replace(/\.ts$/, ".js"));
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, output);
  }
  try {
    renameSync(own, join(dir, "cli"));
  } catch (error) {
    rmSync(own, { recursive: true, force: true });
    if (!existsSync(entry)) throw error;
  }
  return entry;
}

let compiled: string | undefined;

/**
 * The compiled CLI's entry, compiled on first use (a run that only spawns the whole CLI, serve, never pays
 * for it); also for a test that spawns it through another program (the GitHub Action's script).
 */
export function compiledCliEntry(): string {
  return (compiled ??= compileCli(inject("cliBuildDir")));
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface CliRun {
  child: ChildProcess;
  done: Promise<CliResult>;
  /** What the process has written so far, while it runs. */
  output: { stdout: string; stderr: string };
}

export interface CliOptions {
  env?: Record<string, string>;
  stdin?: string;
  /** Run the whole CLI (needed for `serve` and `mcp`, which load the relay lazily): see fullCli. */
  whole?: boolean;
}

export function startCli(args: string[], options: CliOptions = {}): CliRun {
  const entry = options.whole ? fullCli() : [compiledCliEntry()];
  const child = spawn(process.execPath, [...entry, ...args], {
    cwd: root,
    env: { PATH: process.env.PATH ?? "", ...options.env },
    stdio: ["pipe", "pipe", "pipe"],
  });
  const output = { stdout: "", stderr: "" };
  child.stdout!.on("data", (chunk: Buffer) => (output.stdout += chunk.toString("utf8")));
  child.stderr!.on("data", (chunk: Buffer) => (output.stderr += chunk.toString("utf8")));
  child.stdin!.end(options.stdin ?? "");
  const done = new Promise<CliResult>((resolve, reject) => {
    child.once("error", reject);
    child.once("close", (code) => resolve({ code, ...output }));
  });
  return { child, done, output };
}

/** A relay process (`approval-relay serve`) a test started, and where it answers. */
export interface ServeRun {
  url: string;
  run: CliRun;
}

/** SIGKILLs every run in `runs` (emptying it) and waits for each to end: a test's afterEach. */
export async function killRuns(runs: CliRun[]): Promise<void> {
  for (const run of runs.splice(0)) {
    run.child.kill("SIGKILL");
    await run.done;
  }
}

/**
 * Starts `approval-relay serve` (the whole CLI: fullCli) with `env` on `port` (default: a free one) and resolves once its
 * /healthz answers (20 s at most); the run is added to `runs`, for the test's afterEach to end.
 */
export async function startServe(env: Record<string, string>, runs: CliRun[], port?: number): Promise<ServeRun> {
  const listenOn = port ?? (await freePort());
  const run = startCli(["serve"], { whole: true, env: { ...env, PORT: String(listenOn) } });
  runs.push(run);
  const url = `http://127.0.0.1:${listenOn}`;
  const end = Date.now() + 20_000;
  while (Date.now() < end) {
    const healthy = await fetch(`${url}/healthz`).then(
      (r) => r.ok,
      () => false,
    );
    if (healthy) return { url, run };
    await sleep(100);
  }
  throw new Error(`the relay did not become healthy: ${(await Promise.race([run.done, sleep(10).then(() => undefined)]))?.stderr ?? ""}`);
}

export function runCli(args: string[], options: CliOptions = {}): Promise<CliResult> {
  return startCli(args, options).done;
}

/**
 * Runs the compiled CLI on a real pseudo-terminal, through util-linux's
 * `script` (stdin, stdout and stderr are then one terminal, as for a person
 * at a shell): resolves with the exit code and everything the terminal
 * showed, in order (stdout and stderr together, newlines as CR LF).
 */
export function startCliOnTerminal(args: string[], env: Record<string, string> = {}): CliRun {
  const quote = (word: string) => `'${word.replaceAll("'", `'\\''`)}'`;
  const command = [process.execPath, compiledCliEntry(), ...args].map(quote).join(" ");
  const child = spawn("script", ["--quiet", "--return", "--command", command, "/dev/null"], {
    cwd: root,
    env: { PATH: process.env.PATH ?? "", TERM: "xterm", ...env },
    stdio: ["pipe", "pipe", "pipe"],
  });
  const output = { stdout: "", stderr: "" };
  child.stdout!.on("data", (chunk: Buffer) => (output.stdout += chunk.toString("utf8")));
  child.stderr!.on("data", (chunk: Buffer) => (output.stderr += chunk.toString("utf8")));
  const done = new Promise<CliResult>((resolve, reject) => {
    child.once("error", reject);
    child.once("close", (code) => resolve({ code, ...output }));
  });
  return { child, done, output };
}

/**
 * The timeout of a test in a describe.concurrent block of CLI tests: each spawns one to three processes, five tests
 * at a time (vitest's maxConcurrency), so on a busy 2-core CI machine a test shares the CPU with a dozen node
 * processes; the default 20 s was once too little for two spawns in a row.
 */
export const CONCURRENT_CLI_TIMEOUT_MS = 60_000;

/**
 * A test with its own relay stand-in and the environment that points the CLI
 * at it, so CLI tests can run concurrently (each spawn costs a second).
 */
export const cliTest = base.extend<{ relay: RelayStandIn; env: Record<string, string> }>({
  relay: async ({}, use) => {
    const relay = await new RelayStandIn().start();
    await use(relay);
    await relay.stop();
  },
  env: async ({ relay }, use) => {
    await use({ RELAY_URL: relay.url, RELAY_TOKEN: TOKEN, RELAY_RETRIES: "1" });
  },
});
