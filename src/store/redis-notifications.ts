/**
 * The Redis store's notifications: one subscription per store to the
 * channel every script that ends a request publishes on, so a waiter on
 * one instance wakes when a request ends on another, and to the channel of
 * changes short of an end (created, an approval, more time, posted; the
 * store's `announce` publishes them), so the web console's stream on every
 * instance hears them. When the subscription comes back after a gap,
 * whatever was published meanwhile is lost, so the resync listeners are
 * told to read again.
 */
import type { Logger } from "../logger.js";
import type { RequestStore } from "../requests/store.js";
import { shutdown, within } from "./redis-connection.js";
import type { RedisClient } from "./redis-target.js";

/** How long close() waits for Redis to acknowledge UNSUBSCRIBE (ms). */
const UNSUBSCRIBE_TIMEOUT_MS = 1000;

export class EndedNotifications implements Pick<RequestStore, "onEnded" | "onResync" | "onChanged"> {
  /** Resolves once the first SUBSCRIBE is acknowledged. */
  readonly subscribed: Promise<void>;
  private readonly listeners = new Set<(id: string) => void>();
  private readonly changeListeners = new Set<(id: string) => void>();
  private readonly resyncListeners = new Set<() => void>();
  private resubscribes = false;
  private closed = false;

  constructor(
    private readonly subscriber: RedisClient,
    private readonly channel: string,
    private readonly logger: Logger,
    private readonly changedChannel: string,
  ) {
    subscriber.on("message", this.onMessage);
    subscriber.on("ready", this.onReady);
    this.subscribed = subscriber.subscribe(channel, changedChannel).then(() => {
      this.resubscribes = true;
    });
    this.subscribed.catch((error: unknown) => logger.error({ channel, error }, "redis subscribe failed"));
  }

  onEnded(listener: (id: string) => void): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  onChanged(listener: (id: string) => void): () => void {
    this.changeListeners.add(listener);
    return () => {
      this.changeListeners.delete(listener);
    };
  }

  onResync(listener: () => void): () => void {
    this.resyncListeners.add(listener);
    return () => {
      this.resyncListeners.delete(listener);
    };
  }

  /** Stops notifying; quits the subscriber when the store `owns` it, else only unsubscribes. */
  async close(owns: boolean): Promise<void> {
    this.closed = true;
    this.listeners.clear();
    this.changeListeners.clear();
    this.resyncListeners.clear();
    this.subscriber.off("message", this.onMessage);
    this.subscriber.off("ready", this.onReady);
    if (owns) await shutdown(this.subscriber);
    else await within(UNSUBSCRIBE_TIMEOUT_MS, this.subscriber.unsubscribe(this.channel, this.changedChannel));
  }

  private readonly onMessage = (channel: string, id: string) => {
    if (channel === this.channel) notify(this.listeners, id, this.logger);
    else if (channel === this.changedChannel) notify(this.changeListeners, id, this.logger);
  };

  // Back after a gap: notifications published meanwhile are lost. Once the subscription is live again, listeners re-read.
  private readonly onReady = () => {
    if (!this.resubscribes || this.closed) return;
    this.subscriber.subscribe(this.channel, this.changedChannel).then(
      () => notify(this.resyncListeners, undefined, this.logger),
      (error: unknown) => this.logger.warn({ channel: this.channel, error }, "redis resubscribe failed"),
    );
  };
}

/** Calls each listener, so that one that throws does not stop the others. */
function notify<A extends string | undefined>(listeners: ReadonlySet<(arg: A) => void>, arg: A, logger: Logger): void {
  for (const listener of listeners) {
    try {
      listener(arg);
    } catch (error) {
      logger.error({ id: arg, error }, "store listener failed");
    }
  }
}
