/**
 * The relay's logger is pino: one JSON line per entry, `time` (ISO 8601),
 * `level` (its name), `msg`, then the fields. This module only fixes how the
 * relay configures it: level names instead of numbers, errors without stack
 * traces (they may quote request data) nor the commands ioredis attaches
 * to them (a failed HELLO carries the Redis password), Authorization
 * headers, token and password fields censored by name (REDACTED_PATHS), and
 * Slack tokens and the password in a redis:// URL redacted wherever else they
 * appear in a line (the finished line is scrubbed once more before it is
 * written: a field name cannot see inside strings).
 *
 * The fields are censored here, in pino's `log` formatter, rather than by
 * pino's own `redact` option: that one clones every entry (and every child
 * logger's bindings) before it writes them, tens of kilobytes of garbage per
 * created request at info level, which made a relay with 10,000 pending
 * requests grow its heap by hundreds of megabytes (bench: scale). Here an
 * entry is copied only along the path to a field that is censored. Measured
 * again on pino 10 (issue 15, Node 24, 400,000 entries shaped like the
 * relay's request and create lines, the same REDACTED_PATHS, which need
 * `*.` wildcards): pino's own redact ran about 430 garbage collections to this
 * engine's 100 and took 1.2–2.3× as long per entry, so this engine stays.
 *
 * Lines go to stdout asynchronously: the relay answers an agent without
 * waiting on its own logging (docs/performance.md). While one write is in
 * flight, pino's destination (sonic-boom) appends the next lines to a pending
 * chunk and measures that chunk's byte length on every line, which flattens
 * it: a copy of the whole chunk per line. Its default chunk (16 KB) made that
 * about 2–8 KB of garbage per line during bursts (the clicks answering 10,000
 * held long-polls); chunks of STDOUT_CHUNK keep it under 1 KB a line.
 *
 * pino flushes what is left synchronously as the process exits. sonic-boom 4
 * (pino 10's own) retried a write refused with EPIPE there every 100 ms for
 * ever, so a relay whose log reader had gone (a closed terminal, a dead log
 * shipper) hung in its exit with signals unanswered; sonic-boom 5 gives up on
 * it, by throwing, which flushQuietlyAtExit catches (as it does sonic-boom 5's
 * throw for a stream already closed). package.json's `overrides` gives pino
 * sonic-boom 5 until pino depends on it
 * (test/integration/cli/logger-broken-pipe.test.ts).
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

/** Largest pending chunk of log lines written to stdout at once, bytes (sonic-boom's maxWrite; a few lines). */
export const STDOUT_CHUNK = 1024;

const SECRET = /(xox[a-z]-|xapp-)[A-Za-z0-9-]+/g;
/** The password of a redis:// or rediss:// URL: `rediss://user:<password>@host`. */
const URL_PASSWORD = /(rediss?:\/\/[^:@/\s"]*:)[^@\s"]+@/g;

/**
 * Field paths that hold secrets wherever they appear in an entry (`*`: any
 * field). A child logger's bindings are not censored by name (pino gives
 * children no formatter); the relay's one child logger (src/http/logging.ts)
 * binds requestId, method and path, and the line scrub covers them.
 */
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
    : // Asynchronous: a line is handed to libuv and the event loop goes on, so an agent's answer never
      // waits on stdout (a slow pipe or terminal); pino flushes what is left when the process exits.
      flushQuietlyAtExit(pino.destination({ dest: 1, sync: false, maxWrite: STDOUT_CHUNK }));
  return pino(
    {
      level,
      base: undefined,
      timestamp: () => `,"time":"${new Date(now()).toISOString()}"`,
      formatters: { level: (label) => ({ level: label }), log: cleanFields },
      hooks: { streamWrite: redact },
    },
    destination,
  );
}

/**
 * pino flushes `stream` synchronously in the process's `exit` event; sonic-boom
 * 5 throws there when the stream has already been closed ("not ready") or its
 * reader has gone (EPIPE), which would turn a clean exit into an uncaught
 * exception. Nothing more can be written then, so the exit goes on.
 */
function flushQuietlyAtExit<S extends { flushSync(): void }>(stream: S): S {
  const flushSync = stream.flushSync.bind(stream);
  stream.flushSync = () => {
    try {
      flushSync();
    } catch {
      // Closed already, or no one reads stdout any more.
    }
  };
  return stream;
}

/** A logger that drops everything (tests, benchmarks). */
export const silentLogger: Logger = pino({ enabled: false });

export function redact(text: string): string {
  return text.replace(SECRET, "$1[redacted]").replace(URL_PASSWORD, "$1[redacted]@");
}

const RESERVED = new Set(["time", "level", "msg"]);
const CENSOR = "[redacted]";

/** REDACTED_PATHS as a tree: a field name → true (censor it) or the paths below it; `*` is any field. */
interface PathTree {
  [field: string]: true | PathTree;
}

function pathTree(paths: readonly string[]): PathTree {
  const root: PathTree = {};
  for (const path of paths) {
    const parts = path.split(".");
    let node = root;
    parts.forEach((part, i) => {
      if (i === parts.length - 1) node[part] = true;
      else {
        const next = node[part];
        node = next === undefined || next === true ? (node[part] = {}) : next;
      }
    });
  }
  return root;
}

const TREE = pathTree(REDACTED_PATHS);

/**
 * `value` with the fields `tree` names censored, copied only where one is
 * (the caller's objects are never changed). A field present but undefined
 * is left alone, as pino's redaction does.
 */
function censor<T>(value: T, tree: PathTree): T {
  if (typeof value !== "object" || value === null || value instanceof Error) return value;
  const source = value as Record<string, unknown>;
  let copy: Record<string, unknown> | undefined;
  const put = (key: string, next: unknown) => {
    if (next === source[key]) return;
    copy ??= Array.isArray(source) ? ([...(source as unknown[])] as unknown as Record<string, unknown>) : { ...source };
    copy[key] = next;
  };
  const wildcard = tree["*"];
  for (const key of Object.keys(tree)) {
    if (key === "*" || !Object.prototype.hasOwnProperty.call(source, key) || source[key] === undefined) continue;
    const below = tree[key]!;
    put(key, below === true ? CENSOR : censor(source[key], below));
  }
  if (wildcard !== undefined && wildcard !== true) {
    for (const key of Object.keys(source)) {
      const own = tree[key];
      if (own === true) continue;
      put(key, censor((copy ?? source)[key], wildcard));
    }
  }
  return (copy ?? value) as T;
}

/**
 * An entry's fields as written: errors (at the top or one level down) become
 * name, message and code, without the stack (it may quote request data); a
 * field named time, level or msg is dropped so it cannot pass for the entry's
 * own; the fields REDACTED_PATHS names are censored.
 */
function cleanFields(fields: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(fields)) {
    if (RESERVED.has(key)) continue;
    out[key] = value instanceof Error ? describeError(value) : isPlainObject(value) ? errorsOneDeep(value) : value;
  }
  return censor(out, TREE);
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
