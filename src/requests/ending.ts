/**
 * The one way a request leaves `pending` on this instance: the store step
 * (a transition, or counting the approval that makes a quorum), then the
 * waiting agents here woken with the ended record (no re-read), then the
 * side work off their path: the message update (UpdateOutbox.show), the
 * audit event, the metrics, the log line. Other instances wake on the store's "ended"
 * notification; for the ids this instance is ending right now that
 * notification is left to this step, since Redis may deliver it before the
 * step's own reply.
 */
import type { Logger } from "../logger.js";
import { endedEntry, type AuditRecorder } from "./audit-entries.js";
import type { RequestMetrics } from "./metrics.js";
import type { ApproveResult, RequestStore, Transition, TransitionResult } from "./store.js";
import type { UpdateOutbox } from "./update-outbox.js";
import type { Waiters } from "./waiters.js";

export interface EndingDeps {
  store: Pick<RequestStore, "transition">;
  waiters: Waiters;
  updates: Pick<UpdateOutbox, "show">;
  audit: AuditRecorder;
  metrics: Pick<RequestMetrics, "ended">;
  logger: Logger;
}

export class Ending {
  /** Ids this instance is moving out of pending right now, with how many steps each. */
  private readonly inFlight = new Map<string, number>();

  constructor(private readonly deps: EndingDeps) {}

  /** true while this instance is ending `id`: its waiters are woken by `end`, not by the store's notification. */
  has(id: string): boolean {
    return this.inFlight.has(id);
  }

  /** Runs `step` (by default the transition `change`) and what follows an applied end. */
  async end<R extends TransitionResult | ApproveResult = TransitionResult>(
    id: string,
    change: Transition,
    step: () => Promise<R> = () => this.deps.store.transition(id, change) as Promise<R>,
  ): Promise<R> {
    const { waiters, updates, audit, logger } = this.deps;
    this.inFlight.set(id, (this.inFlight.get(id) ?? 0) + 1);
    let result: R;
    try {
      result = await step();
    } catch (error) {
      waiters.wake(id);
      throw error;
    } finally {
      const left = this.inFlight.get(id)! - 1;
      if (left > 0) this.inFlight.set(id, left);
      else this.inFlight.delete(id);
    }
    // Every outcome wakes them: a notification that came while the step was in flight was held back for this.
    const ended = (result.outcome === "applied" || result.outcome === "already_ended") && result.record.status !== "pending" ? result.record : undefined;
    waiters.wake(id, ended);
    if (result.outcome === "applied") {
      if (result.record.slack) updates.show(result.record);
      audit.record(endedEntry(result.record));
      this.deps.metrics.ended(result.record);
      logger.info({ id, status: change.status }, "request ended");
    }
    return result;
  }
}
