/**
 * `approval-relay hook`: a Claude Code `command` hook that forwards the hook
 * input on stdin to the relay's POST /v1/hooks/claude-code and prints the
 * relay's hook JSON on stdout. It fails closed:
 * - PreToolUse / PermissionRequest with any failure (bad flags, no relay,
 *   a 4xx/5xx, a reply that is not a decision, no reply before the hook's
 *   timeout, SIGTERM) → a deny whose reason says why, exit 0, because Claude
 *   Code acts on JSON only when the exit code is 0;
 * - input that is not JSON, or another hook event → exit 2 with the reason on
 *   stderr: Claude Code's blocking error, which blocks a PreToolUse call and
 *   denies a PermissionRequest whatever the event turns out to be (any other
 *   exit code would let the tool run).
 */
import { parseArgs } from "node:util";
import { failureReason } from "../client/errors.js";
import type { ClaudeCodeHookCall } from "../client/relay-client.js";
import {
  DEFAULT_HOOK_TIMEOUT_SECONDS,
  denyOutput,
  HOOK_EVENTS,
  isHookEvent,
  MAX_HOOK_TIMEOUT_SECONDS,
  MIN_HOOK_TIMEOUT_SECONDS,
} from "../protocol/claude-code-hook.js";
import { clientFor, CONNECTION_OPTIONS, connection, parseSeconds } from "./connection.js";
import type { CliIo } from "./io.js";
import { USAGE } from "./usage.js";

/** Longest wait between retries of an unreachable relay (ms): a hook's time is short. */
const MAX_RETRY_DELAY_MS = 5000;
/** Larger hook input is refused (the relay itself takes at most 1 MB). */
const STDIN_LIMIT_BYTES = 10 * 1024 * 1024;
/** Exit code Claude Code treats as a blocking error. */
const BLOCK = 2;

const OPTIONS = { ...CONNECTION_OPTIONS, timeout: { type: "string" }, help: { type: "boolean", short: "h" } } as const;

export async function hook(args: string[], io: CliIo): Promise<number> {
  let values: ReturnType<typeof parseArgs<{ args: string[]; options: typeof OPTIONS }>>["values"] = {};
  let argProblem: string | undefined;
  try {
    values = parseArgs({ args, options: OPTIONS, strict: true }).values;
  } catch (error) {
    argProblem = error instanceof Error ? error.message : String(error);
  }
  if (values.help) {
    io.stdout.write(USAGE);
    return 0;
  }
  const input = await readInput(io.stdin);
  if (typeof input === "string") {
    io.stderr.write(`approval-relay hook: ${input}; blocked to be safe.\n`);
    return BLOCK;
  }
  const event = input.hook_event_name;
  const deny = (reason: string): number => {
    io.stdout.write(`${JSON.stringify(denyOutput(event, reason))}\n`);
    io.stderr.write(`${reason}\n`);
    return 0;
  };
  if (argProblem !== undefined) {
    io.stderr.write(USAGE);
    return deny(`approval-relay hook was given bad arguments (${argProblem}), so the tool call was denied.`);
  }
  const parsed = values.timeout === undefined ? DEFAULT_HOOK_TIMEOUT_SECONDS : parseSeconds(values.timeout, MAX_HOOK_TIMEOUT_SECONDS);
  // The relay needs a few seconds to answer before Claude Code gives up: it refuses shorter hook timeouts.
  const timeoutSeconds = parsed !== undefined && parsed >= MIN_HOOK_TIMEOUT_SECONDS ? parsed : undefined;
  if (timeoutSeconds === undefined)
    return deny(
      `approval-relay hook: --timeout must be a whole number of seconds from ${MIN_HOOK_TIMEOUT_SECONDS} to ${MAX_HOOK_TIMEOUT_SECONDS}, so the tool call was denied.`,
    );
  const conn = connection(values, io.env);
  if (typeof conn === "string") return deny(`approval-relay hook is not configured (${conn}), so the tool call was denied.`);
  try {
    const client = clientFor(conn, io, { maxRetryDelayMs: MAX_RETRY_DELAY_MS });
    const reply = await client.claudeCodeHook(input, { timeoutSeconds, signal: io.signal });
    io.stdout.write(`${JSON.stringify(reply)}\n`);
    return 0;
  } catch (error) {
    return deny(failureReason(error));
  }
}

/** The hook input, or why it cannot be handled. */
async function readInput(stdin: CliIo["stdin"]): Promise<ClaudeCodeHookCall | string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stdin) {
    const buffer = typeof chunk === "string" ? Buffer.from(chunk) : Buffer.from(chunk);
    size += buffer.length;
    if (size > STDIN_LIMIT_BYTES) return `the hook input on stdin is larger than ${STDIN_LIMIT_BYTES / 1024 / 1024} MB`;
    chunks.push(buffer);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.concat(chunks).toString("utf8"));
  } catch {
    return "the hook input on stdin is not JSON";
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return "the hook input on stdin is not a JSON object";
  const input = parsed as Record<string, unknown>;
  const event = input.hook_event_name;
  if (!isHookEvent(event)) {
    return `only ${HOOK_EVENTS.join(" and ")} hooks are answered, and this input's hook_event_name is ${JSON.stringify(event) ?? "missing"}`;
  }
  return { ...input, hook_event_name: event };
}
