/**
 * The console feed's flush window (src/console/feed.ts) on real sockets: a
 * real HTTP server whose streams the feed writes, read by real clients
 * (test/helpers/console.ts), with the writes each stream gets counted. What
 * changes within a window reaches every stream as one write, in the order of
 * the last changes, with the last state, none lost; and a slow read never
 * lets an older state overtake a newer one.
 */
import { EventEmitter } from "node:events";
import { createServer, type Server, type ServerResponse } from "node:http";
import { connect, type AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { ConsoleFeed } from "../../../src/console/feed.js";
import { createLogger } from "../../../src/logger.js";
import type { RequestRecord } from "../../../src/requests/model.js";
import { stepGateRecord } from "../../fixtures/records.js";
import { consoleStream, type ConsoleStream } from "../../helpers/console.js";
import { until } from "../../helpers/until.js";

const WINDOW_MS = 500;
let server: Server | undefined;
let feed: ConsoleFeed | undefined;
afterEach(async () => {
  feed?.close();
  await new Promise((resolve) => server?.close(resolve));
});

/** A feed on a real server: `set` changes a request (its version is the record's expiresAt); `writes` counts each stream's writes after its opening. */
async function start(options: { readDelayMs?: (id: string, version: number) => number; windowMs?: number; maxBufferedBytes?: number; padding?: number } = {}) {
  const versions = new Map<string, number>();
  const changes = new EventEmitter();
  const writes: number[] = [];
  feed = new ConsoleFeed({
    onChange: (listener) => {
      changes.on("change", listener);
      return () => changes.off("change", listener);
    },
    read: async (id) => {
      const version = versions.get(id);
      if (version === undefined) return undefined;
      const record: RequestRecord = stepGateRecord({}, { id, expiresAt: version });
      await new Promise((resolve) => setTimeout(resolve, options.readDelayMs?.(id, version) ?? 0));
      return record;
    },
    render: async (record) => ({ id: record.id, version: record.expiresAt, ...(options.padding ? { padding: "x".repeat(options.padding) } : {}) }),
    logger: createLogger({ level: "error", write: () => {} }),
    windowMs: options.windowMs ?? WINDOW_MS,
    ...(options.maxBufferedBytes === undefined ? {} : { maxBufferedBytes: options.maxBufferedBytes }),
  });
  const opened: Array<() => void> = [];
  server = createServer((_req, res: ServerResponse) => {
    feed!.add(res);
    const index = writes.push(0) - 1;
    const write = res.write.bind(res);
    res.write = ((...args: Parameters<typeof write>) => {
      writes[index]! += 1;
      return write(...args);
    }) as typeof res.write;
    opened.shift()?.();
  });
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const set = (id: string, version: number) => {
    versions.set(id, version);
    changes.emit("change", id);
  };
  const open = async (): Promise<ConsoleStream> => {
    const added = new Promise<void>((resolve) => opened.push(resolve));
    const stream = await consoleStream(url, "");
    await added;
    return stream;
  };
  return { set, open, writes, url };
}

describe("the console feed's flush window", () => {
  it("changes within a window reach every stream as one write, in the order of their last change, with each request's last state", async () => {
    const { set, open, writes } = await start();
    const streams = [await open(), await open()];
    set("a", 1); // after a quiet window: out at once
    for (const stream of streams) await stream.next((r) => r.id === "a", WINDOW_MS / 2);
    set("b", 1);
    set("c", 1);
    set("b", 2);
    set("a", 2);
    for (const stream of streams) await stream.next((r) => r.id === "a" && r.version === 2, 2 * WINDOW_MS);
    for (const stream of streams)
      expect(await stream.received()).toEqual([
        { id: "a", version: 1 },
        { id: "c", version: 1 },
        { id: "b", version: 2 },
        { id: "a", version: 2 },
      ]);
    expect(writes).toEqual([2, 2]);
    for (const stream of streams) await stream.close();
  });

  it("a slow read in one window never lets its older state reach the streams after a newer one", async () => {
    // Version 1 of "a" takes longer to read than the window: version 2, read in the next window, must still come after it.
    const { set, open } = await start({ readDelayMs: (_id, version) => (version === 1 ? 2 * WINDOW_MS : 0) });
    const stream = await open();
    set("a", 1);
    await new Promise((resolve) => setTimeout(resolve, 10));
    set("a", 2);
    await stream.next((r) => r.id === "a" && r.version === 2, 4 * WINDOW_MS);
    expect(await stream.received(3 * WINDOW_MS)).toEqual([
      { id: "a", version: 1 },
      { id: "a", version: 2 },
    ]);
    await stream.close();
  });

  it("a stream that is not being read is cut once its backlog passes the bound, and the streams that read go on", async () => {
    const { set, url } = await start({ windowMs: 5, maxBufferedBytes: 256 * 1024, padding: 256 * 1024 });
    // One client reads everything as it comes (counting bytes); another sends its request and never reads a byte.
    const reader = (await fetch(`${url}/console/api/events`)).body!.getReader();
    let readBytes = 0;
    let readerEnded = false;
    void (async () => {
      for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) readBytes += chunk.value.length;
      readerEnded = true;
    })().catch(() => (readerEnded = true));
    const stalled = connect({ host: "127.0.0.1", port: Number(new URL(url).port) });
    stalled.pause();
    stalled.on("error", () => {});
    stalled.write("GET /console/api/events HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n");
    const connections = () => new Promise<number>((resolve, reject) => server!.getConnections((error, count) => (error ? reject(error) : resolve(count))));
    await until(async () => (await connections()) === 2, 2000, "both streams open");
    // About 256 KB a change: the kernel's buffers fill first, then the server's backlog passes the bound and it cuts the stream.
    let cut = false;
    for (let version = 1; !cut && version <= 400; version += 1) {
      set("a", version);
      await new Promise((resolve) => setTimeout(resolve, 15));
      cut = (await connections()) === 1;
    }
    expect(cut).toBe(true);
    const before = readBytes;
    set("b", 1);
    await until(() => readBytes > before, 2000, "the reading stream gets the next change");
    expect(readerEnded).toBe(false);
    await reader.cancel();
    stalled.destroy();
  });
});
