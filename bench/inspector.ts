/**
 * What the profiling scripts (click-alloc.ts, held-mem.ts, idle-memory.ts,
 * request-heap.ts) share: a client of the relay's inspector (started with
 * --inspect), which can sum a heap snapshot by constructor; the relay they
 * start, as `npm start` starts it, with the inspector open; the N step gates
 * they create, each to a channel of its own, spread over agent tokens; their
 * long-polls, each on a connection of its own; and the clicks that answer them.
 */
import { writeFileSync } from "node:fs";
import type { Agent } from "node:http";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { freshChannel, newMarker, requestBody, type BenchAgent, type RequestView } from "./agent.js";
import { expectJson } from "./http.js";
import type { PostedMessage } from "./slack-stand-in.js";
import { withTarget, type Target, type TargetOptions } from "./target.js";
import { freePort } from "../test/helpers/ports.js";

/** Self sizes of a heap snapshot's nodes, by kind and constructor name. */
export type SnapshotSums = Map<string, { count: number; size: number }>;

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
  /** A heap snapshot (it collects garbage first), summed by constructor; written to `saveAs` too when given. */
  async snapshot(saveAs?: string): Promise<SnapshotSums> {
    const text = await this.snapshotText();
    if (saveAs) writeFileSync(saveAs, text);
    const snap = JSON.parse(text) as { snapshot: { meta: { node_fields: string[]; node_types: [string[]] } }; nodes: number[]; strings: string[] };
    const fields = snap.snapshot.meta.node_fields;
    const width = fields.length;
    const [typeAt, nameAt, sizeAt] = ["type", "name", "self_size"].map((f) => fields.indexOf(f)) as [number, number, number];
    const types = snap.snapshot.meta.node_types[0];
    const sums: SnapshotSums = new Map();
    for (let i = 0; i < snap.nodes.length; i += width) {
      const type = types[snap.nodes[i + typeAt]!]!;
      const plain = type === "string" || type === "number" || type === "concatenated string" || type === "sliced string";
      const name = plain ? `(${type})` : `${type} ${snap.strings[snap.nodes[i + nameAt]!]!.slice(0, 60)}`;
      const entry = sums.get(name) ?? { count: 0, size: 0 };
      entry.count += 1;
      entry.size += snap.nodes[i + sizeAt]!;
      sums.set(name, entry);
    }
    return sums;
  }
  /** Calls `listener` with the params of each event named `method` (one listener a method). */
  on<P>(method: string, listener: (params: P) => void): void {
    this.listeners.set(method, listener as (params: never) => void);
  }
  /** A heap snapshot (V8 collects garbage first), as its JSON text. */
  async snapshotText(): Promise<string> {
    const chunks: string[] = [];
    this.on<{ chunk: string }>("HeapProfiler.addHeapSnapshotChunk", ({ chunk }) => chunks.push(chunk));
    await this.call("HeapProfiler.takeHeapSnapshot", { reportProgress: false });
    this.listeners.delete("HeapProfiler.addHeapSnapshotChunk");
    return chunks.join("");
  }
  close(): void {
    this.ws.close();
  }
}

/** Creates `n` step gates, 32 at a time, each to a channel of its own, the agents taking turns; returns their Slack messages. */
export async function createStepGates(agents: BenchAgent[], n: number): Promise<Array<{ message: PostedMessage; agent: BenchAgent }>> {
  const created: Array<{ message: PostedMessage; agent: BenchAgent }> = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: 32 }, async () => {
      while (next < n) {
        const agent = agents[next % agents.length]!;
        next += 1;
        const marker = newMarker();
        const posted = agent.standIn.posted(marker, 120_000);
        await agent.create(requestBody("step_gate", marker, 900, freshChannel()));
        created.push({ message: await posted, agent });
      }
    }),
  );
  return created;
}

/** Holds a long-poll on each request (through `via`, a connection each), asked again while it comes back pending. */
export function holdAll(created: Array<{ message: PostedMessage; agent: BenchAgent }>, via: Agent): Promise<RequestView[]> {
  return Promise.all(
    created.map(async ({ message, agent }) => {
      for (;;) {
        const view = expectJson<RequestView>(await agent.longPoll(message.id, 60, via), 200, "long-poll");
        if (view.status !== "pending") return view;
      }
    }),
  );
}

/** Answers every request by a click (Yes, No, Stop in turn), 16 at once, as the scale scenario does. */
export async function clickAll(agent: BenchAgent, created: Array<{ message: PostedMessage }>, replies: readonly string[]): Promise<void> {
  let i = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (i < created.length) {
        const index = i++;
        await agent.click(agent.prepareClick(created[index]!.message, replies[index % replies.length]!));
      }
    }),
  );
}

/** Pending requests per agent token of a profiling run: under the relay's default cap of 200 pending per token. */
const PER_TOKEN = 150;

/** The Redis a profiling run with --redis uses (its keys under the run's own prefix). */
export const REDIS_URL = process.env.REDIS_TEST_URL ?? "redis://127.0.0.1:6379";

/**
 * Runs `run` on a relay started as `npm start` starts it with the inspector
 * open (on the port given to `run`), the store `values.redis` asks, and an
 * agent token (`<name>-<i>`) for every PER_TOKEN of the `values.n` requests,
 * and `env` added to the relay's environment.
 */
export async function withInspectedRelay<T>(
  values: { redis: boolean; n: string; "node-flag"?: string[] },
  name: string,
  redisPrefix: string,
  run: (target: Target, port: number) => Promise<T>,
  env: Record<string, string> = {},
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
    env,
  };
  return withTarget(target, (t) => run(t, port));
}
