/**
 * Who hears that a request changed: the id of every request created on this
 * instance and every request that ends on any instance (the store's
 * notifications, Redis pub/sub across instances), and of an approval or more
 * time recorded here. The web console's live queue listens.
 */
import type { Logger } from "../logger.js";

export class RequestChanges {
  private readonly listeners = new Set<(id: string) => void>();

  constructor(private readonly logger: Logger) {}

  /** Calls `listener` with the id of each request that changes; returns a function that stops it. */
  on(listener: (id: string) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Tells every listener that request `id` changed; a listener that throws is logged and the rest are told. */
  tell(id: string): void {
    for (const listener of this.listeners) {
      try {
        listener(id);
      } catch (error) {
        this.logger.error({ id, error }, "change listener failed");
      }
    }
  }
}
