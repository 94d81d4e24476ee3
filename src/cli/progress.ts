/**
 * What `approval-relay ask` tells the person at the terminal while it waits,
 * all on stderr (stdout carries only the answer, for scripts): the request
 * id and deadline at once, where Slack shows the question as soon as the
 * relay has posted it, a new deadline when someone gives more time, then a
 * countdown. On a terminal the countdown is one line rewritten every second;
 * elsewhere (CI logs, pipes) it is a plain line at a few milestones (every
 * hour, then 30, 10, 5 and 1 minutes, 30 and 10 seconds left), so a log of a
 * long wait stays short.
 */
import type { CreatedRequest } from "../protocol/request-view.js";
import { formatDuration } from "../protocol/texts.js";
import type { CliIo } from "./io.js";

/** Remaining seconds at which a log (not a terminal) gets a "still waiting" line, below the hourly ones. */
const MILESTONES_SECONDS = [1800, 600, 300, 60, 30, 10];
const PREFIX = "approval-relay:";
/** Erases the current terminal line (carriage return, then ANSI "erase line"). */
const CLEAR_LINE = "\r\x1b[2K";

export class AskProgress {
  private readonly stderr: CliIo["stderr"];
  private readonly now: () => number;
  private announced = false;
  private posted = false;
  private deadline = Number.NaN;
  private lastRemaining = Number.POSITIVE_INFINITY;
  private timer: NodeJS.Timeout | undefined;
  private countdownShown = false;

  constructor(stderr: CliIo["stderr"], now: () => number = Date.now) {
    this.stderr = stderr;
    this.now = now;
  }

  /** What the relay says about the pending request: the create reply first, then each view read while waiting. */
  update(request: CreatedRequest): void {
    const deadline = Date.parse(request.expiresAt);
    if (!this.announced) {
      this.announced = true;
      this.deadline = deadline;
      this.line(`asked as request ${request.id}; waiting for an answer until ${this.until(deadline)}`);
      this.timer = setInterval(() => this.tick(), 1000);
      this.timer.unref();
    } else if (Number.isFinite(deadline) && deadline > this.deadline) {
      this.deadline = deadline;
      this.lastRemaining = Number.POSITIVE_INFINITY;
      this.line(`more time was given: now waiting until ${this.until(deadline)}`);
    }
    if (!this.posted && request.slack !== undefined) {
      this.posted = true;
      const link = messageLink(request.slack.permalink) ?? channelLink(request.slack.channel);
      this.line(`posted in Slack channel ${request.slack.channel} (message ${request.slack.ts})${link === undefined ? "" : `: ${link}`}`);
    }
    this.tick();
  }

  /** Stops the countdown and clears its line; call before printing the outcome. Safe to call more than once. */
  done(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    this.clearCountdown();
  }

  private tick(): void {
    if (!this.announced || this.timer === undefined) return;
    const remaining = Math.max(0, Math.ceil((this.deadline - this.now()) / 1000));
    if (this.stderr.isTTY) {
      this.stderr.write(`${CLEAR_LINE}${PREFIX} waiting for an answer, ${clock(remaining)} left`);
      this.countdownShown = true;
    } else if (crossedMilestone(this.lastRemaining, remaining)) {
      this.stderr.write(`${PREFIX} still waiting for an answer, ${formatDuration(remaining)} left\n`);
    }
    this.lastRemaining = remaining;
  }

  private line(text: string): void {
    this.clearCountdown();
    this.stderr.write(`${PREFIX} ${text}\n`);
  }

  private clearCountdown(): void {
    if (!this.countdownShown) return;
    this.stderr.write(CLEAR_LINE);
    this.countdownShown = false;
  }

  private until(deadline: number): string {
    if (!Number.isFinite(deadline)) return "the relay's deadline";
    const at = new Date(deadline)
      .toISOString()
      .replace("T", " ")
      .replace(/\.\d+Z$/, " UTC");
    return `${at} (in ${formatDuration((deadline - this.now()) / 1000)})`;
  }
}

/** True when going from `before` to `after` seconds left passes an hour mark or a milestone. */
function crossedMilestone(before: number, after: number): boolean {
  if (!Number.isFinite(before)) return false;
  if (after >= 3600 && Math.floor((before - 1) / 3600) > Math.floor((after - 1) / 3600)) return true;
  return MILESTONES_SECONDS.some((mark) => before > mark && after <= mark);
}

/** "1:02:03" or "9:05". */
function clock(seconds: number): string {
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = String(seconds % 60).padStart(2, "0");
  return h > 0 ? `${h}:${String(m).padStart(2, "0")}:${s}` : `${m}:${s}`;
}

/** The relay's permalink of the message, if it has Slack's shape (nothing else reaches the terminal). */
function messageLink(permalink: string | undefined): string | undefined {
  return permalink !== undefined && /^https:\/\/[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+\/archives\/[A-Z0-9]{8,20}\/p\d{7,20}$/.test(permalink)
    ? permalink
    : undefined;
}

/** Slack's documented deep link that opens a channel (when the relay gave no permalink): "https://slack.com/app_redirect?channel=C…"; nothing for an id of another shape. */
function channelLink(channel: string): string | undefined {
  return /^[A-Z0-9]{8,20}$/.test(channel) ? `https://slack.com/app_redirect?channel=${channel}` : undefined;
}
