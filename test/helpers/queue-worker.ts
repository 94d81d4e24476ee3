/** A queue handler under test on its own queue worker (src/requests/queue-worker.ts), as the service runs it. */
import { silentLogger } from "../../src/logger.js";
import { OutageLog } from "../../src/requests/outage-log.js";
import { QueueWorker, type QueueHandler } from "../../src/requests/queue-worker.js";
import type { RequestStore } from "../../src/requests/store.js";

export interface Worked<H> {
  handler: H;
  worker: QueueWorker;
  /** One round of the handler's queue; how many entries it settled (done, retried, dropped or released). */
  runOnce(): Promise<number>;
  /** One round; how many entries were done with. */
  doneOnce(): Promise<number>;
}

/** The handler `make` builds, added to a worker on `store` with a fixed jitter (`random`, default 0). */
export function onWorker<H extends QueueHandler<never>>(
  store: Pick<RequestStore, "claim" | "retry" | "complete">,
  now: () => number,
  make: (worker: QueueWorker) => H,
  random: () => number = () => 0,
): Worked<H> {
  const worker = new QueueWorker({ store, logger: silentLogger, now, random, outage: new OutageLog(silentLogger, "tests pause") });
  const handler = make(worker);
  worker.add(handler);
  return {
    handler,
    worker,
    runOnce: async () => {
      const { done, retried, dropped, released } = await worker.runOnce(handler.queue);
      return done + retried + dropped + released;
    },
    doneOnce: async () => (await worker.runOnce(handler.queue)).done,
  };
}
