/**
 * The Redis store's notifications: one subscription per store to three
 * channels: the one every script that ends a request publishes on, so a
 * waiter on one instance wakes when a request ends on another; the one of
 * changes short of an end (created, an approval, more time, posted; the
 * store's `announce` publishes them), so the web console's stream on every
 * instance hears them; and the one of cancelled agent calls (the store's
 * `announceCancelledCall`), so a cancel that reaches another instance than
 * the one holding the call still cancels it. When the subscription comes
 * back after a gap, whatever was published meanwhile is lost, so the resync
 * listeners are told to read again.
 */
import type { Logger } from "../logger.js";
import type { RequestStore } from "../requests/store.js";
import { shutdown, within } from "./redis-connection.js";
import type { RedisClient } from "./redis-target.js";

/** How long close() waits for Redis to acknowledge UNSUBSCRIBE (ms). */
const UNSUBSCRIBE_TIMEOUT_MS = 1000;

/** The pub/sub channels, by what they carry (see keys.ts). */
export interface NotificationChannels {
  ended: string;
  changed: string;
  cancelledCalls: string;
}

type Listeners = Set<(message: string) => void>;

export class EndedNotifications implements Pick<RequestStore, "onEnded" | "onResync" | "onChanged" | "onCancelledCall"> {
  /** Resolves once the first SUBSCRIBE is acknowledged. */
  readonly subscribed: Promise<void>;
  /** Listeners by channel. */
  private readonly listeners = new Map<string, Listeners>();
  private readonly resyncListeners = new Set<() => void>();
  private readonly names: string[];
  private resubscribes = false;
  private closed = false;

  constructor(
    private readonly subscriber: RedisClient,
    private readonly channels: NotificationChannels,
    private readonly logger: Logger,
  ) {
    this.names = [channels.ended, channels.changed, channels.cancelledCalls];
    for (const name of this.names) this.listeners.set(name, new Set());
    subscriber.on("message", this.onMessage);
    subscriber.on("ready", this.onReady);
    this.subscribed = subscriber.subscribe(...this.names).then(() => {
      this.resubscribes = true;
    });
    this.subscribed.catch((error: unknown) => logger.error({ channel: channels.ended, error }, "redis subscribe failed"));
  }

  onEnded(listener: (id: string) => void): () => void {
    return this.listen(this.channels.ended, listener);
  }

  onChanged(listener: (id: string) => void): () => void {
    return this.listen(this.channels.changed, listener);
  }

  onCancelledCall(listener: (key: string) => void): () => void {
    return this.listen(this.channels.cancelledCalls, listener);
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
    for (const listeners of this.listeners.values()) listeners.clear();
    this.resyncListeners.clear();
    this.subscriber.off("message", this.onMessage);
    this.subscriber.off("ready", this.onReady);
    if (owns) await shutdown(this.subscriber);
    else await within(UNSUBSCRIBE_TIMEOUT_MS, this.subscriber.unsubscribe(...this.names));
  }

  private listen(channel: string, listener: (message: string) => void): () => void {
    const listeners = this.listeners.get(channel)!;
    listeners.add(listener);
    return () => {
      listeners.delete(listener);
    };
  }

  private readonly onMessage = (channel: string, message: string) => {
    const listeners = this.listeners.get(channel);
    if (listeners) notify(listeners, message, this.logger);
  };

  // Back after a gap: notifications published meanwhile are lost. Once the subscription is live again, listeners re-read.
  private readonly onReady = () => {
    if (!this.resubscribes || this.closed) return;
    this.subscriber.subscribe(...this.names).then(
      () => notify(this.resyncListeners, undefined, this.logger),
      (error: unknown) => this.logger.warn({ channel: this.channels.ended, error }, "redis resubscribe failed"),
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
