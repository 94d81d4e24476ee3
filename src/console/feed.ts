/**
 * The console's live streams (GET /console/api/events), fed together: one
 * subscription to the service's changes for every open stream, each changed
 * request read once and written as one server-sent event to all of them,
 * after the agent's reply has gone out (a setImmediate later; several
 * changes of one request in that time make one read). So a hundred open
 * consoles cost a hundred socket writes per change, not a hundred reads.
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
}

/** How often an idle stream gets a comment, so proxies do not cut it (ms). */
const KEEPALIVE_MS = 15_000;

export class ConsoleFeed {
  private readonly streams = new Set<ServerResponse>();
  private readonly due = new Set<string>();
  private stop: (() => void) | undefined;
  private keepalive: NodeJS.Timeout | undefined;

  constructor(private readonly deps: ConsoleFeedDeps) {}

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
  }

  private changed(id: string): void {
    if (this.due.size === 0) setImmediate(() => this.flush());
    this.due.add(id);
  }

  private flush(): void {
    const ids = [...this.due];
    this.due.clear();
    for (const id of ids) {
      this.deps.read(id).then(
        async (record) => {
          if (record) this.write(`event: request\ndata: ${JSON.stringify(await this.deps.render(record))}\n\n`);
        },
        (error: unknown) => this.deps.logger.warn({ id, error }, "console: reading a changed request failed"),
      );
    }
  }

  private write(frame: string): void {
    for (const res of this.streams) if (!res.writableEnded) res.write(frame);
  }
}
