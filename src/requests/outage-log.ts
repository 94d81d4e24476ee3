/**
 * A store outage as the background work logs it: once when the first step
 * meets it and once when a step gets through again, not once per tick. One
 * OutageLog may serve several loops (the expiry sweep and every queue of a
 * worker), so one outage makes two lines whatever the number of loops.
 */
import type { Logger } from "../logger.js";
import { StoreUnavailableError } from "./errors.js";

export class OutageLog {
  private down = false;

  /** `work`: what pauses, as the log says it ("background sweeps pause", "callback delivery pauses"). */
  constructor(
    private readonly logger: Logger,
    private readonly work: string,
  ) {}

  /** A step got through: the end of an outage is logged. */
  ok(step?: string): void {
    if (this.down) this.logger.info(step === undefined ? {} : { step }, `the store is back: ${this.resumes()}`);
    this.down = false;
  }

  /** A step failed: a store outage is logged when it starts; any other failure is logged as an error. */
  failed(error: unknown, step: string): void {
    if (!(error instanceof StoreUnavailableError)) {
      this.logger.error({ error }, `${step} failed`);
    } else if (!this.down) {
      this.down = true;
      this.logger.warn({ step, reason: error.reason }, `the store is unavailable: ${this.work} until it is back`);
    }
  }

  /** "background sweeps pause" → "background sweeps resume". */
  private resumes(): string {
    return this.work.replace(/pauses?$/, (verb) => (verb === "pauses" ? "resumes" : "resume"));
  }
}
