/**
 * A small structured logger (one JSON line per entry) passed to every module
 * that logs. Callers never pass secrets; `redact` guards the obvious ones.
 */
export type LogLevel = "debug" | "info" | "warn" | "error";

export interface Logger {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

const order: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };
const SECRET = /(xox[a-z]-|xapp-)[A-Za-z0-9-]+/g;

export interface LoggerOptions {
  level?: LogLevel;
  write?: (line: string) => void;
  now?: () => number;
}

export function createLogger({ level = "info", write = (line) => process.stdout.write(line + "\n"), now = Date.now }: LoggerOptions = {}): Logger {
  const emit = (at: LogLevel, message: string, fields?: Record<string, unknown>) => {
    if (order[at] < order[level]) return;
    const head = { time: new Date(now()).toISOString(), level: at, msg: message };
    // head twice: it comes first in the line, and no field can overwrite it.
    write(redact(serialise({ ...head, ...fields, ...head }, head)));
  };
  return {
    debug: (m, f) => emit("debug", m, f),
    info: (m, f) => emit("info", m, f),
    warn: (m, f) => emit("warn", m, f),
    error: (m, f) => emit("error", m, f),
  };
}

/** A logger that drops everything (tests, benchmarks). */
export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };

export function redact(text: string): string {
  return text.replace(SECRET, "$1[redacted]");
}

/** A logger must never throw: fields JSON cannot hold (cycles, BigInt) are dropped, the message kept. */
function serialise(entry: Record<string, unknown>, head: { time: string; level: LogLevel; msg: string }): string {
  try {
    return JSON.stringify(entry, errorReplacer);
  } catch {
    return JSON.stringify({ ...head, logError: "fields could not be serialised" });
  }
}

function errorReplacer(_key: string, value: unknown): unknown {
  if (value instanceof Error) {
    const code = (value as { code?: unknown }).code;
    return { name: value.name, message: value.message, ...(code !== undefined ? { code } : {}) };
  }
  return value;
}
