/**
 * Runs the real Claude Agent SDK `query()` fully offline against the
 * fake-anthropic stand-in and collects what it emitted, so integration tests
 * can assert what the SDK did when our callbacks answered its permission
 * prompts. The bundled Claude Code starts with a throwaway HOME, no settings
 * files, no non-essential traffic, and the stand-in as its only reachable
 * host; its process is always gone when `runAgent` returns or throws.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Readable, Writable } from "node:stream";
import {
  query,
  type CanUseTool,
  type HookCallbackMatcher,
  type HookEvent,
  type McpServerConfig,
  type SDKMessage,
  type SDKResultMessage,
  type Settings,
  type SpawnedProcess,
  type SpawnOptions,
} from "@anthropic-ai/claude-agent-sdk";

export interface RunAgentOptions {
  prompt: string;
  /** The fake-anthropic URL: Claude Code's API base URL and its HTTP(S) proxy. */
  anthropicUrl: string;
  /** Working directory of the session (a temp dir the test owns). */
  cwd: string;
  canUseTool?: CanUseTool;
  hooks?: Partial<Record<HookEvent, HookCallbackMatcher[]>>;
  allowedTools?: string[];
  /** Built-in tools offered to the model; default: Claude Code's preset. */
  tools?: string[];
  /** Model turns before the SDK stops the session; default 4. */
  maxTurns?: number;
  /** Extra environment for Claude Code, over the offline defaults. */
  env?: Record<string, string>;
  /** Milliseconds before the run is aborted and fails; default 15,000 (under vitest's 20 s test timeout). */
  timeoutMs?: number;
  /** Aborting it stops the session early, as a user pressing Esc would; the run then resolves with what it saw. */
  signal?: AbortSignal;
  /** Flag settings for Claude Code (the SDK's `settings`, like `--settings`), e.g. `{ hooks }` with http hooks. */
  settings?: Settings;
  /** MCP servers for the session (the SDK's `mcpServers`, like `--mcp-config`). */
  mcpServers?: Record<string, McpServerConfig>;
  /** The MCP tool that answers permission prompts (the SDK's `permissionPromptToolName`, Claude Code's `--permission-prompt-tool`). */
  permissionPromptToolName?: string;
}

export interface AgentRun {
  messages: SDKMessage[];
  /** The final result message; absent only when the session ended without one. */
  result: SDKResultMessage | undefined;
  /**
   * What `query()` threw after its last message, if anything: the SDK throws
   * when Claude Code ends with an error result (e.g. a turn interrupted by a
   * deny with `interrupt: true`), after yielding that result.
   */
  error: Error | undefined;
  /** Everything Claude Code wrote to stderr. */
  stderr: string;
}

/** Milliseconds Claude Code gets to exit after the query is closed before it is killed. */
const EXIT_GRACE_MS = 3_000;

/**
 * Claude Code's whole environment (the SDK's `env` replaces, never merges):
 * a throwaway HOME and config dir, the stand-in as API and as HTTP(S) proxy
 * (so any other host is refused and reported instead of hanging on DNS), a
 * dummy key, and every switch for traffic a test does not ask for.
 */
export function offlineEnv(anthropicUrl: string, home: string): Record<string, string> {
  return {
    PATH: "/usr/local/bin:/usr/bin:/bin",
    SHELL: "/bin/bash",
    HOME: home,
    CLAUDE_CONFIG_DIR: join(home, ".claude"),
    ANTHROPIC_BASE_URL: anthropicUrl,
    ANTHROPIC_API_KEY: "sk-ant-offline-test-key",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    DISABLE_TELEMETRY: "1",
    DISABLE_ERROR_REPORTING: "1",
    DISABLE_AUTOUPDATER: "1",
    HTTPS_PROXY: anthropicUrl,
    HTTP_PROXY: anthropicUrl,
    NO_PROXY: "127.0.0.1,localhost",
  };
}

export async function runAgent(options: RunAgentOptions): Promise<AgentRun> {
  const home = await mkdtemp(join(tmpdir(), "agent-sdk-home-"));
  const abortController = new AbortController();
  const children: ChildProcess[] = [];
  let stderr = "";
  const messages: SDKMessage[] = [];
  const timeoutMs = options.timeoutMs ?? 15_000;
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    abortController.abort();
  }, timeoutMs);
  const stop = () => abortController.abort();
  options.signal?.addEventListener("abort", stop, { once: true });
  if (options.signal?.aborted) stop();

  const spawnClaudeCode = ({ command, args, cwd, env, signal }: SpawnOptions): SpawnedProcess => {
    const child = spawn(command, args, { cwd, env, signal, stdio: ["pipe", "pipe", "pipe"] });
    children.push(child);
    child.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
    child.on("error", () => undefined);
    return asSpawnedProcess(child);
  };

  const run = query({
    prompt: options.prompt,
    options: {
      cwd: options.cwd,
      permissionMode: "default",
      maxTurns: options.maxTurns ?? 4,
      settingSources: [],
      persistSession: false,
      abortController,
      env: { ...offlineEnv(options.anthropicUrl, home), ...options.env },
      spawnClaudeCodeProcess: spawnClaudeCode,
      ...(options.canUseTool ? { canUseTool: options.canUseTool } : {}),
      ...(options.hooks ? { hooks: options.hooks } : {}),
      ...(options.allowedTools ? { allowedTools: options.allowedTools } : {}),
      ...(options.tools ? { tools: options.tools } : {}),
      ...(options.settings ? { settings: options.settings } : {}),
      // Over stdin, not the command line (the bundled Claude Code reads them there): headers stay out of `ps`.
      ...(options.mcpServers ? { mcpServers: options.mcpServers, mcpServersDelivery: "initialize" as const } : {}),
      ...(options.permissionPromptToolName ? { permissionPromptToolName: options.permissionPromptToolName } : {}),
    },
  });

  let error: Error | undefined;
  try {
    for await (const message of run) messages.push(message);
  } catch (thrown) {
    error = thrown instanceof Error ? thrown : new Error(String(thrown));
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener("abort", stop);
    run.close();
    await Promise.all(children.map(ensureExited));
    await rm(home, { recursive: true, force: true });
  }
  if (timedOut) {
    const seen = messages.map((m) => ("subtype" in m ? `${m.type}/${m.subtype}` : m.type)).join(", ");
    throw new Error(`runAgent timed out after ${timeoutMs} ms\nmessages: ${seen}\nstderr: ${stderr.slice(-2000)}`);
  }
  const result = messages.findLast((m): m is SDKResultMessage => m.type === "result");
  return { messages, result, error, stderr };
}

/** What the SDK needs of a process, as Node's ChildProcess has it once its stdio is piped. */
function asSpawnedProcess(child: ChildProcess): SpawnedProcess {
  if (!hasPipes(child)) throw new Error("Claude Code was spawned without stdio pipes");
  return child;
}

function hasPipes(child: ChildProcess): child is ChildProcess & { stdin: Writable; stdout: Readable } {
  return child.stdin !== null && child.stdout !== null;
}

async function ensureExited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const timer = setTimeout(() => child.kill("SIGKILL"), EXIT_GRACE_MS);
  await exited;
  clearTimeout(timer);
}
