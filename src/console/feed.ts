/**
 * The console's live streams (GET /console/api/events), fed together: one
 * subscription to the service's changes for every open stream, and at most
 * one socket write per stream per window (WINDOW_MS). A change after a quiet
 * window goes out at once (a setImmediate later, after the agent's reply);
 * the changes that follow within the window gather and go out as one write
 * when it closes, each changed request read, rendered and serialized once for
 * every stream, in the order of their last change, with its state at the
 * flush (the last state wins), encoded once. So 100 open consoles under a
 * click every millisecond cost 100 writes per window, not 300 per click: the
 * writes, not the reads, were what slowed the agents' clicks
 * (docs/performance.md).
 *
 * A stream whose reader stopped reading (a suspended laptop, a stalled
 * proxy) would hold every later change in memory; past MAX_BUFFERED_BYTES
 * waiting to be sent it is cut instead. That loses nothing: the page reads
 * the queue again whenever its stream reconnects (ui/console/app.js).
 */
import type { ServerResponse } from "node:http";
import type { Logger } from "../logger.js";
import type { RequestRecord } from "../requests/model.js";

export interface ConsoleFeedDeps {
  /** Calls back with the id of each changed request; returns a function that stops it. */
  onChange(listener: (id: string) => void): () => void;
  read(id: string): Promise<RequestRecord | undefined>;
  /** The event's data: the request as the console shows it. */
  render(record: RequestRecord): Promise<unknown>;
  logger: Logger;
  /** How long changes gather into one write per stream (ms); default WINDOW_MS. */
  windowMs?: number;
  /** Bytes a stream may have waiting to be sent before it is cut; default MAX_BUFFERED_BYTES. */
  maxBufferedBytes?: number;
}

/** The flush window (ms): well under the second a change may take to show (issue 17.2). */
export const WINDOW_MS = 100;
/** What a stream that is not being read may hold back before it is cut (bytes): many flushes of a busy queue. */
export const MAX_BUFFERED_BYTES = 4 * 1024 * 1024;
/** How often an idle stream gets a comment, so proxies do not cut it (ms). */
const KEEPALIVE_MS = 15_000;

export class ConsoleFeed {
  private readonly streams = new Set<ServerResponse>();
  /** Changed since the last flush, in the order of their last change. */
  private readonly due = new Set<string>();
  private readonly windowMs: number;
  private readonly maxBufferedBytes: number;
  /** Set while a window is open: changes wait for it to close. */
  private window: NodeJS.Timeout | undefined;
  /** The flush under way: the next one waits for it, so the streams get states in order. */
  private flushing: Promise<void> = Promise.resolve();
  private stop: (() => void) | undefined;
  private keepalive: NodeJS.Timeout | undefined;

  constructor(private readonly deps: ConsoleFeedDeps) {
    this.windowMs = deps.windowMs ?? WINDOW_MS;
    this.maxBufferedBytes = deps.maxBufferedBytes ?? MAX_BUFFERED_BYTES;
  }

  /** Starts `res` as an event stream; it leaves the feed when it closes. */
  add(res: ServerResponse): void {
    res.writeHead(200, {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-store",
      connection: "keep-alive",
      "x-content-type-options": "nosniff",
    });
    res.write("retry: 1000\n\n");
    this.streams.add(res);
    this.stop ??= this.deps.onChange((id) => this.changed(id));
    this.keepalive ??= setInterval(() => this.write(": keepalive\n\n"), KEEPALIVE_MS);
    res.once("close", () => this.remove(res));
  }

  /** Ends every stream (the server is closing). */
  close(): void {
    for (const res of [...this.streams]) {
      this.remove(res);
      if (!res.writableEnded) res.end();
    }
  }

  private remove(res: ServerResponse): void {
    this.streams.delete(res);
    if (this.streams.size > 0) return;
    this.stop?.();
    this.stop = undefined;
    clearInterval(this.keepalive);
    this.keepalive = undefined;
    clearTimeout(this.window);
    this.window = undefined;
    this.due.clear();
  }

  private changed(id: string): void {
    this.due.delete(id);
    this.due.add(id);
    if (this.window !== undefined) return;
    setImmediate(() => this.flush());
    this.open();
  }

  /** Opens a window; when it closes, what changed in it goes out and the next one opens, until one passes quietly. */
  private open(): void {
    this.window = setTimeout(() => {
      this.window = undefined;
      if (this.due.size === 0) return;
      this.flush();
      this.open();
    }, this.windowMs);
  }

  private flush(): void {
    if (this.due.size === 0) return;
    const ids = [...this.due];
    this.due.clear();
    this.flushing = this.flushing.then(() => this.send(ids));
  }

  private async send(ids: readonly string[]): Promise<void> {
    const frames = await Promise.all(
      ids.map(async (id) => {
        try {
          const record = await this.deps.read(id);
          return record ? `event: request\ndata: ${JSON.stringify(await this.deps.render(record))}\n\n` : "";
        } catch (error) {
          this.deps.logger.warn({ id, error }, "console: reading a changed request failed");
          return "";
        }
      }),
    );
    const text = frames.join("");
    // Encoded once for every stream: a string would be encoded again for each of them.
    if (text !== "") this.write(Buffer.from(text));
  }

  private write(chunk: string | Buffer): void {
    for (const res of this.streams) {
      if (res.writableEnded) continue;
      if (res.writableLength > this.maxBufferedBytes) {
        this.deps.logger.info(
          { bufferedBytes: res.writableLength },
          "console: a stream that is not being read was cut (its page reads the queue again when it reconnects)",
        );
        res.destroy();
        continue;
      }
      res.write(chunk);
    }
  }
}
