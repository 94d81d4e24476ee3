/**
 * What the service is built from: its dependencies (the store, Slack, the
 * operator's routes and defaults, the people directory, the audit, the
 * metrics, the rule store, the clock) and the input of a create. Kept apart
 * from service.ts so the service reads as what it does.
 */
import type { Logger } from "../logger.js";
import type { CreateRequestBody } from "../protocol/request-body.js";
import type { Route, RouteAdmission } from "./route-schema.js";
import type { AuditRecorder } from "./audit-entries.js";
import type { RequestMessenger } from "./delivery.js";
import type { MessageCopies } from "./from-message.js";
import type { PeopleDirectory } from "./directory.js";
import type { RequestMetrics, QueueMetrics } from "./metrics.js";
import type { RequestPolicy } from "./model.js";
import type { RuleStore } from "./rules.js";
import type { RequestStore } from "./store.js";

export interface RequestServiceDeps {
  store: RequestStore;
  /**
   * Slack. None: the relay runs without Slack (local mode, answered in the
   * web console): nothing is posted, so no message is ever updated,
   * reminded or told about, and every request stays in the store's posting
   * set until it ends.
   */
  messenger?: RequestMessenger;
  /** Seconds a request waits when it names no timeout. */
  defaultTimeoutSeconds: number;
  defaultChannel?: string;
  /** RELAY_CALLBACK_HOSTS: the only hosts a callbackUrl may name; undefined → any host. */
  callbackHosts?: readonly string[];
  /** The default route's `channels`: what a request no route matches may name; undefined → any channel. */
  defaultChannels?: readonly string[];
  /** The operator's approver routes (RELAY_CONFIG_FILE), first match wins; none → every request takes the default route. */
  routes?: readonly Route[];
  /**
   * The default route's policy: what new requests are created under where
   * their route sets nothing else (Always allow scope, approvers, quorum,
   * selfApproval, reminders, escalations; default: anyone answers, Always
   * allow passes back tool rules only).
   */
  policy?: RequestPolicy;
  /** What the default route admits (its `kinds` and `requireLabels`); undefined → every request. */
  defaultAdmission?: RouteAdmission;
  /**
   * Slack's people: user group members, the relay's workspace, emails. For
   * answers, without one only listed users and `approvers: any` can be
   * checked (the rest is refused); for creates, a requestedBy email or
   * approvers their route lists only through a group get 503
   * relay_slack_unavailable and are not created.
   */
  directory?: PeopleDirectory;
  /** Confirms with Slack that a message the store does not know is a copy the relay posted for a request (./from-message.ts); none → never. */
  messageCopies?: MessageCopies;
  /** Where every event of a request's life goes (docs/architecture.md §7); none → not audited. */
  audit?: AuditRecorder;
  /** Counts requests created and ended (GET /metrics); none → not counted. */
  metrics?: RequestMetrics;
  /** Told what became of each attempt at a queued entry (./queue-worker.ts); none → not counted. */
  queueMetrics?: QueueMetrics;
  /**
   * Where "Allow for a while" rules live, shared by the instances that share
   * the store (./rule-book.ts); none → no rule is kept: no request is
   * answered by one, and a rule click answers like Allow and says the rule
   * was not saved.
   */
  rules?: RuleStore;
  logger?: Logger;
  /** Unix time in milliseconds. */
  now?: () => number;
  /** A new request's id; default: the store's (RequestStore.newId), which a sharded store needs to place it on its token's shard. */
  newId?: () => string;
  /**
   * Most pending requests one agent token may hold (RELAY_MAX_PENDING_PER_TOKEN);
   * a route's `maxPending` may set it lower for the requests under it.
   * Undefined → no cap.
   */
  maxPendingPerToken?: number;
  /** Milliseconds a poster holds a new request before another instance may post it (default 30 s). */
  postLeaseMs?: number;
}

export interface CreateInput {
  tokenName: string;
  body: CreateRequestBody;
  /** The same key from the same token with the same body returns the first request; with another body, 409 relay_idempotency_mismatch. */
  idempotencyKey?: string;
  /** Join the request the key names whatever its body (a retried Claude Code hook call: hookRequestKey decides whose answer it is). */
  joinOnKey?: boolean;
}

/** Default of RequestServiceDeps.postLeaseMs: longer than one Slack call (10 s) with room to spare. */
export const DEFAULT_POST_LEASE_MS = 30_000;

/** The policy when none is configured: Always allow passes back only plain rules for the asked tool. */
export const DEFAULT_POLICY: RequestPolicy = { alwaysAllow: "tool" };
