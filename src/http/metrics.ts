/**
 * The relay's Prometheus metrics (GET /metrics, docs/architecture.md §8), on prom-client.
 * Each relay has its own Registry, never prom-client's global one, so several
 * relays in one process (tests) keep their own counts. The domain and the
 * adapters never import prom-client: they get the narrow recorders this
 * module hands out (RequestMetrics for the service, a SlackCallRecorder for
 * the WebClient, an outage listener for the store), each a counter increment
 * made after the work it counts. The gauges are read when Prometheus scrapes:
 * this instance's held calls and Slack queue, and the shared store's counts
 * (one bounded call per scrape; when it fails the gauges keep their last
 * values, the scrape still answers, and the store counts the outage).
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";
import { silentLogger, type Logger } from "../logger.js";
import { RequestKind } from "../protocol/request-body.js";
import { RequestStatus } from "../protocol/request-view.js";
import { StoreUnavailableError } from "../requests/errors.js";
import type { HookCalls } from "../requests/hooks/calls.js";
import { decisionSeconds, QUEUE_OUTCOMES, type QueueMetrics, type RequestMetrics } from "../requests/metrics.js";
import type { RequestService } from "../requests/service.js";
import { QUEUE_NAMES, type RequestStore, type StoreCounts } from "../requests/store.js";
import type { ChannelQueue } from "../slack/channel-queue.js";
import type { SlackCallOutcome, SlackCallRecorder } from "../slack/web-client.js";

/** What the gauges read on each scrape. */
export interface MetricsSources {
  service: Pick<RequestService, "waiting">;
  hookCalls: Pick<HookCalls, "held" | "waiting">;
  store: Pick<RequestStore, "counts">;
  /** The messenger's queue; none → relay_slack_queue_depth stays 0. */
  queue?: Pick<ChannelQueue, "depth">;
}

export interface RelayMetricsOptions {
  logger?: Logger;
}

/**
 * Buckets of relay_decision_seconds (seconds): people answer within seconds
 * to hours, and a request may wait up to a week (the +Inf bucket).
 */
export const DECISION_BUCKETS = [1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600, 7200, 14_400, 28_800, 86_400];

const ENDED_STATUSES = RequestStatus.options.filter((status) => status !== "pending");

export class RelayMetrics {
  readonly registry = new Registry();
  /** For RequestServiceDeps.metrics. */
  readonly requests: RequestMetrics;
  /** For RequestServiceDeps.queueMetrics and the callback worker. */
  readonly queues: QueueMetrics;
  /** For createSlackClient's `onCall`. */
  readonly slackCall: SlackCallRecorder;
  /** For the Redis store's and audit log's `onUnavailable`. */
  readonly storeOutage: (error: StoreUnavailableError) => void;
  private sources: MetricsSources | undefined;
  /** The store's counts as of the last scrape that could read them. */
  private counts: StoreCounts = { pending: 0, callbacks: 0 };
  private readonly logger: Logger;

  constructor({ logger = silentLogger }: RelayMetricsOptions = {}) {
    this.logger = logger;
    const registers = [this.registry];
    const counter = (name: string, help: string, labelNames: string[] = []) => new Counter({ name, help, labelNames, registers });
    const created = counter("relay_requests_created_total", "Requests created, by kind.", ["kind"]);
    const ended = counter("relay_requests_ended_total", "Requests that left pending on this instance, by kind and final status.", ["kind", "status"]);
    const slackCalls = counter("relay_slack_calls_total", "Slack Web API calls made, by method and outcome (ok, ratelimited, error).", ["method", "outcome"]);
    const queueEntries = counter(
      "relay_queue_entries_total",
      "Attempts at leased queue entries (posting, updates, reminders, notices, callbacks, tallies), by queue and outcome (done, retried, dropped, released).",
      ["queue", "outcome"],
    );
    const limited = counter(
      "relay_creates_limited_total",
      "Creates refused by a limit, by agent token and limit (too_many_pending: RELAY_MAX_PENDING_PER_TOKEN or a route's maxPending; rate_limited: RELAY_CREATE_RATE_LIMIT).",
      ["token", "limit"],
    );
    const storeErrors = counter("relay_store_errors_total", "Store calls that failed because the store (Redis) was unavailable.");
    const decisions = new Histogram({
      name: "relay_decision_seconds",
      help: "Seconds from a request's message reaching Slack to its answer, for answered requests.",
      buckets: DECISION_BUCKETS,
      registers,
    });
    for (const queue of QUEUE_NAMES) for (const outcome of QUEUE_OUTCOMES) queueEntries.inc({ queue, outcome }, 0);
    for (const kind of RequestKind.options) {
      created.inc({ kind }, 0);
      for (const status of ENDED_STATUSES) ended.inc({ kind, status }, 0);
    }

    this.requests = {
      created: (record) => created.inc({ kind: record.body.kind }),
      ended: (record) => {
        ended.inc({ kind: record.body.kind, status: record.status });
        const seconds = decisionSeconds(record);
        if (seconds !== undefined) decisions.observe(seconds);
      },
      limited: (token, limit) => limited.inc({ token, limit }),
    };
    this.queues = { handled: (queue, outcome) => queueEntries.inc({ queue, outcome }) };
    this.slackCall = (method: string, outcome: SlackCallOutcome) => slackCalls.inc({ method, outcome });
    this.storeOutage = () => storeErrors.inc();

    const gauge = (name: string, help: string, read: () => number) => {
      const metric: Gauge = new Gauge({ name, help, registers, collect: () => metric.set(read()) });
    };
    gauge("relay_requests_pending", "Pending requests in the store this relay uses (every instance's).", () => this.counts.pending);
    gauge("relay_callback_queue_depth", "Callbacks queued in the store awaiting delivery.", () => this.counts.callbacks);
    gauge("relay_waiters", "Long-polls and Claude Code hook calls held open on this instance.", () => this.heldCalls());
    gauge("relay_slack_queue_depth", "Slack Web API calls waiting for their turn in this instance's queue (paced or paused by a 429).", () =>
      this.sources?.queue ? this.sources.queue.depth() : 0,
    );
    collectDefaultMetrics({ register: this.registry });
  }

  /** Points the gauges at this relay's parts (built after the recorders they take). */
  watch(sources: MetricsSources): void {
    this.sources = sources;
  }

  /** The Content-Type of `expose()`'s text (Prometheus text format 0.0.4). */
  get contentType(): string {
    return this.registry.contentType;
  }

  /**
   * Every family in the Prometheus text format, the gauges read now. The
   * store is asked first, so an outage it meets is in this scrape's
   * relay_store_errors_total.
   */
  async expose(): Promise<string> {
    await this.readCounts();
    return this.registry.metrics();
  }

  /** Long-polls plus hook calls, each once: a hook call waiting for its answer is also one of the service's waits. */
  private heldCalls(): number {
    if (!this.sources) return 0;
    const { service, hookCalls } = this.sources;
    return service.waiting - hookCalls.waiting + hookCalls.held;
  }

  /** One store call per scrape; when it fails, the last counts stay. */
  private async readCounts(): Promise<void> {
    if (!this.sources) return;
    try {
      this.counts = await this.sources.store.counts();
    } catch (error) {
      // An outage is counted where the store throws it (relay_store_errors_total) and logged by its connection.
      if (error instanceof StoreUnavailableError) this.logger.debug({ reason: error.reason }, "metrics: the store did not answer its counts");
      else this.logger.warn({ error }, "metrics: reading the store's counts failed; the gauges keep their last values");
    }
  }
}
