/**
 * Throwaway redis-server processes for the test run (test/global-setup.ts)
 * and the bench: the redis-server found on the PATH, on a free loopback port,
 * in a temp dir of its own, with persistence off. stop() ends it and removes
 * the dir; should the process that started it die first (a crash, SIGKILL,
 * Ctrl-C), a watchdog ends it too, so a run never leaves a server behind.
 *
 * Hand-written because the packages that do this (redis-memory-server and
 * kin) download or compile Redis at install time; here the binary on the PATH
 * is the point, offline. The watchdog is a few lines of POSIX sh: the server
 * runs under an `sh` whose stdin is a pipe from this process, and when that
 * pipe closes (this process ended, however it ended) the sh stops the server.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { accessSync, constants, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { freePort } from "./ports.js";

export interface RedisServer {
  /** e.g. redis://127.0.0.1:41234 */
  url: string;
  port: number;
  /** Stops the server (SIGTERM, SIGKILL should it still run 5 s later) and removes its dir. */
  stop(): Promise<void>;
  /** Ends the server with SIGKILL, as a crash would (no shutdown, nothing saved), and removes its dir. */
  kill(): Promise<void>;
  /** The end of the server's own log (its last 64 kB), for a failing test to show. */
  log(): string;
}

/** What to tell someone who has no redis-server. */
export const INSTALL_REDIS =
  "install one (Debian/Ubuntu: sudo apt-get install redis-server; macOS: brew install redis), " +
  "or set REDIS_TEST_URL to a Redis the tests may write into (they use key prefixes of their own and delete them)";

/** The redis-server executable on the PATH, or undefined. */
export function findRedisServer(path = process.env.PATH ?? ""): string | undefined {
  for (const dir of path.split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, "redis-server");
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not in this dir
    }
  }
  return undefined;
}

/**
 * `sh -c` script: runs the server (its arguments after the dir) in the
 * background; a watchdog stops it when stdin reaches EOF (SIGTERM, then
 * SIGKILL after 5 s). Once the server has exited, the sh ends the watchdog,
 * removes the dir and exits with the server's status. The watchdog reads a
 * copy of stdin (fd 3): a background job's own stdin is /dev/null. The sh
 * ignores Ctrl-C and hangups so that it outlives the server and cleans up.
 */
const WATCHDOG = `
dir=$1; shift
exec 3<&0 0</dev/null
"$@" 3<&- &
server=$!
(
  cat <&3 >/dev/null
  kill -TERM "$server" 2>/dev/null
  tries=0
  while kill -0 "$server" 2>/dev/null && [ "$tries" -lt 50 ]; do sleep 0.1; tries=$((tries + 1)); done
  [ "$tries" -lt 50 ] || kill -KILL "$server" 2>/dev/null
) &
watchdog=$!
trap '' INT HUP
wait "$server"
status=$?
kill "$watchdog" 2>/dev/null
rm -rf "$dir"
exit $status
`;

/** docs/operations.md's ACL user for the relay as redis-server arguments: user `relay`, every command but the dangerous ones (INFO given back), on `prefix`'s keys and channel only. */
export function relayAclUser(prefix: string, password: string): string[] {
  return ["--user", "relay", "on", `>${password}`, `~${prefix}:*`, `&${prefix}:*`, "+@all", "-@dangerous", "+info"];
}

export interface RedisServerOptions {
  /** Listen on this port (a server started again where a relay reconnects); default: a free one. */
  port?: number;
  /**
   * Keep the data in this dir, in an append-only file written through on
   * every command, so a server started again on it has everything the last
   * one acknowledged, even after SIGKILL. The caller removes the dir.
   */
  dataDir?: string;
  /** More redis-server arguments, after the helper's own (e.g. `--requirepass`, `--replicaof`, the `--tls-*` ones). */
  args?: string[];
  /** A config file's text, written to the server's dir and given as its config file (Sentinel rewrites its own). */
  config?: string;
  /** Runs `redis-server <config> --sentinel` (needs `config`): ready once the sentinel watches its master. */
  sentinel?: boolean;
}

/** Starts one server; retries with another port when the one picked was taken meanwhile. */
export async function startRedisServer(binary = findRedisServer(), options: RedisServerOptions = {}): Promise<RedisServer> {
  if (!binary) throw new Error(`no redis-server on the PATH: ${INSTALL_REDIS}`);
  let lastError: Error | undefined;
  for (let attempt = 0; attempt < 3; attempt += 1) {
    try {
      return await startOnce(binary, options.port ?? (await freePort()), options);
    } catch (error) {
      lastError = error as Error;
      if (options.port !== undefined || !/address already in use/i.test(lastError.message)) break;
    }
  }
  throw lastError!;
}

async function startOnce(binary: string, port: number, { dataDir, args = [], config, sentinel = false }: RedisServerOptions): Promise<RedisServer> {
  const dir = mkdtempSync(join(tmpdir(), "relay-redis-"));
  const persistence = dataDir === undefined ? ["--dir", dir, "--appendonly", "no"] : ["--dir", dataDir, "--appendonly", "yes", "--appendfsync", "always"];
  const configFile = config === undefined ? [] : [join(dir, "redis.conf")];
  if (config !== undefined) writeFileSync(configFile[0]!, config);
  const mode = sentinel ? ["--sentinel"] : [];
  const serverArgs = [
    ...configFile,
    ...mode,
    "--port",
    String(port),
    "--bind",
    "127.0.0.1",
    ...persistence,
    "--save",
    "",
    "--logfile",
    "",
    "--daemonize",
    "no",
    ...args,
  ];
  const child = spawn("/bin/sh", ["-c", WATCHDOG, "redis-watchdog", dir, binary, ...serverArgs], { stdio: ["pipe", "pipe", "pipe"] });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const removeDir = () => rmSync(dir, { recursive: true, force: true });
  let pid: number;
  try {
    pid = await ready(child, exited, sentinel ? /\+monitor master/ : /Ready to accept connections/);
  } catch (error) {
    child.stdin!.end();
    await exited;
    removeDir();
    throw error;
  }
  // Kept short and drained, so it never blocks the server.
  let log = "";
  const keep = (chunk: Buffer) => (log = (log + chunk.toString("utf8")).slice(-65_536));
  child.stdout!.on("data", keep);
  child.stderr!.on("data", keep);

  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      child.stdin!.end();
      await exited;
      removeDir();
    })());
  const kill = async () => {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // already gone
    }
    await stop();
  };
  return { url: `redis://127.0.0.1:${port}`, port, stop, kill, log: () => log };
}

/** Resolves with the server's pid once it logs `readyLine`; rejects with its log if it exits first. */
function ready(child: ChildProcess, exited: Promise<number | null>, readyLine: RegExp): Promise<number> {
  return new Promise((resolve, reject) => {
    let log = "";
    const onData = (chunk: Buffer) => {
      log += chunk.toString("utf8");
      const pid = /\bpid=(\d+)/.exec(log)?.[1];
      if (readyLine.test(log) && pid !== undefined) {
        cleanup();
        resolve(Number(pid));
      }
    };
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error(`redis-server did not become ready within 10 s:\n${log}`));
    }, 10_000);
    const cleanup = () => {
      clearTimeout(timer);
      child.stdout!.off("data", onData);
      child.stderr!.off("data", onData);
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", onData);
    void exited.then((code) => {
      cleanup();
      reject(new Error(`redis-server exited (${code}) before it was ready:\n${log}`));
    });
  });
}
