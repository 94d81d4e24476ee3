/**
 * The relay's logger is pino: one JSON line per entry, `time` (ISO 8601),
 * `level` (its name), `msg`, then the fields. This module only fixes how the
 * relay configures it: level names instead of numbers, errors without stack
 * traces (they may quote request data) nor the commands ioredis attaches
 * to them (a failed HELLO carries the Redis password), Authorization
 * headers, token and password fields censored by path, and Slack tokens and
 * the password in a redis:// URL redacted wherever else they appear in a
 * line (pino's path redaction cannot see inside strings, so the finished
 * line is scrubbed once more before it is written).
 */
import { pino, type DestinationStream, type Logger as PinoLogger } from "pino";

export type LogLevel = "debug" | "info" | "warn" | "error";

/** The logger every module is given: pino's, called as `logger.info({ id }, "request created")`. */
export type Logger = PinoLogger;

export interface LoggerOptions {
  level?: LogLevel;
  /** Receives each finished line (without the newline); default: stdout. */
  write?: (line: string) => void;
  /** Unix time in milliseconds. */
  now?: () => number;
}

const SECRET = /(xox[a-z]-|xapp-)[A-Za-z0-9-]+/g;
/** The password of a redis:// or rediss:// URL: `rediss://user:<password>@host`. */
const URL_PASSWORD = /(rediss?:\/\/[^:@/\s"]*:)[^@\s"]+@/g;

/** Field paths that hold secrets wherever they appear in an entry. */
export const REDACTED_PATHS = [
  "authorization",
  "*.authorization",
  "headers.authorization",
  "*.headers.authorization",
  "req.headers.authorization",
  "req.headers.cookie",
  "token",
  "*.token",
  "botToken",
  "appToken",
  "signingSecret",
  "password",
  "*.password",
  "sentinelPassword",
  "*.sentinelPassword",
];

export function createLogger({ level = "info", write, now = Date.now }: LoggerOptions = {}): Logger {
  const destination: DestinationStream = write
    ? { write: (line: string) => write(line.endsWith("\n") ? line.slice(0, -1) : line) }
    : pino.destination({ dest: 1, sync: true });
  return pino(
    {
      level,
      base: undefined,
      timestamp: () => `,"time":"${new Date(now()).toISOString()}"`,
      formatters: { level: (label) => ({ level: label }), log: cleanFields },
      redact: { paths: REDACTED_PATHS, censor: "[redacted]" },
      hooks: { streamWrite: redact },
    },
    destination,
  );
}

/** A logger that drops everything (tests, benchmarks). */
export const silentLogger: Logger = pino({ enabled: false });

export function redact(text: string): string {
  return text.replace(SECRET, "$1[redacted]").replace(URL_PASSWORD, "$1[redacted]@");
}

const RESERVED = new Set(["time", "level", "msg"]);

/**
 * An entry's fields as written: errors (at the top or one level down) become
 * name, message and code, without the stack (it may quote request data); a
 * field named time, level or msg is dropped so it cannot pass for the entry's own.
 */
function cleanFields(fields: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(fields)) {
    if (RESERVED.has(key)) continue;
    out[key] = value instanceof Error ? describeError(value) : isPlainObject(value) ? errorsOneDeep(value) : value;
  }
  return out;
}

function errorsOneDeep(value: Record<string, unknown>): Record<string, unknown> {
  if (!Object.values(value).some((v) => v instanceof Error)) return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, v instanceof Error ? describeError(v) : v]));
}

function describeError(error: Error): Record<string, unknown> {
  const code = (error as { code?: unknown }).code;
  return { name: error.name, message: error.message, ...(code !== undefined ? { code } : {}) };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && Object.getPrototypeOf(value) === Object.prototype;
}
