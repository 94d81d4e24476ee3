/**
 * A client of a Node process's inspector (started with
 * --inspect=127.0.0.1:<port>) over its WebSocket, for the bench's profiling
 * tools (click-alloc.ts, idle-memory.ts, request-heap.ts), and the relay
 * those that start one run it on.
 */
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { withTarget, type Target, type TargetOptions } from "./target.js";
import { freePort } from "../test/helpers/ports.js";

/** The repository root: the relay is started as its `npm start` starts it. */
export const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");

/** The command-line options every profiling script takes (node:util parseArgs). */
export const PROFILE_OPTIONS = {
  redis: { type: "boolean", default: false },
  n: { type: "string", default: "2000" },
  out: { type: "string" },
  "node-flag": { type: "string", multiple: true },
} as const;
export class Inspector {
  private readonly listeners = new Map<string, (params: never) => void>();
  private next = 1;
  private readonly pending = new Map<number, (value: unknown) => void>();
  private constructor(private readonly ws: WebSocket) {
    ws.addEventListener("message", (event) => {
      const message = JSON.parse(String(event.data)) as { id?: number; method?: string; params?: never; result?: unknown; error?: unknown };
      if (message.method !== undefined) this.listeners.get(message.method)?.(message.params!);
      if (message.id !== undefined) {
        this.pending.get(message.id)?.(message.error ? Promise.reject(new Error(JSON.stringify(message.error))) : message.result);
        this.pending.delete(message.id);
      }
    });
  }
  static async open(port: number): Promise<Inspector> {
    const list = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as Array<{ webSocketDebuggerUrl: string }>;
    const ws = new WebSocket(list[0]!.webSocketDebuggerUrl);
    await new Promise((resolve, reject) => {
      ws.addEventListener("open", resolve);
      ws.addEventListener("error", reject);
    });
    return new Inspector(ws);
  }
  call<T>(method: string, params: Record<string, unknown> = {}): Promise<T> {
    const id = this.next++;
    this.ws.send(JSON.stringify({ id, method, params }));
    return new Promise((resolve) => this.pending.set(id, resolve as (value: unknown) => void)) as Promise<T>;
  }
  /** Calls `listener` with the params of each event named `method` (one listener a method). */
  on<P>(method: string, listener: (params: P) => void): void {
    this.listeners.set(method, listener as (params: never) => void);
  }
  /** A heap snapshot (V8 collects garbage first), as its JSON text. */
  async snapshot(): Promise<string> {
    const chunks: string[] = [];
    this.on<{ chunk: string }>("HeapProfiler.addHeapSnapshotChunk", ({ chunk }) => chunks.push(chunk));
    await this.call("HeapProfiler.takeHeapSnapshot", { reportProgress: false });
    return chunks.join("");
  }
  close(): void {
    this.ws.close();
  }
}

/** Pending requests per agent token of a profiling run: under the relay's default cap of 200 pending per token. */
const PER_TOKEN = 150;

/** The Redis a profiling run with --redis uses (its keys under the run's own prefix). */
export const REDIS_URL = process.env.REDIS_TEST_URL ?? "redis://127.0.0.1:6379";

/**
 * Runs `run` on a relay started as `npm start` starts it with the inspector
 * open (on the port given to `run`), the store `values.redis` asks, and an
 * agent token (`<name>-<i>`) for every PER_TOKEN of the `values.n` requests.
 */
export async function withInspectedRelay<T>(
  values: { redis: boolean; n: string; "node-flag"?: string[] },
  name: string,
  redisPrefix: string,
  run: (target: Target, port: number) => Promise<T>,
): Promise<T> {
  const port = await freePort();
  const target: TargetOptions = {
    store: values.redis ? "redis" : "memory",
    root: ROOT,
    redisUrl: REDIS_URL,
    clusterNodes: "",
    redisPrefix,
    nodeFlags: [`--inspect=127.0.0.1:${port}`, ...(values["node-flag"] ?? [])],
    otherTokens: Array.from({ length: Math.ceil(Number(values.n) / PER_TOKEN) }, (_, i) => `${name}-${i + 1}`),
  };
  return withTarget(target, (t) => run(t, port));
}
