/**
 * A create, up to the stored record: the operator's route for the request
 * (./routes.ts), its policy (./create-policy.ts: may ask Slack, so the
 * deadline counts from after it), the record (./new-record.ts), a live rule
 * that answers it at once (./rule-book.ts: stored ended, never posted), and
 * the idempotent store step; then what it stored is posted (./delivery.ts),
 * audited, counted and told to the change listeners (./changes.ts).
 */
import type { Logger } from "../logger.js";
import { createdEntry, endedEntry, type AuditRecorder } from "./audit-entries.js";
import type { RequestChanges } from "./changes.js";
import { createPolicy } from "./create-policy.js";
import type { Delivery } from "./delivery.js";
import { RelayError, TooManyPendingError } from "./errors.js";
import { askKey, sameRequestBody } from "./idempotency.js";
import type { CreateLimits } from "./limits.js";
import { newRecord } from "./new-record.js";
import type { RuleBook } from "./rule-book.js";
import type { RequestMetrics } from "./metrics.js";
import type { RequestRecord } from "./model.js";
import { admit, matchRoute } from "./routes.js";
import { DEFAULT_POLICY, type CreateInput, type RequestServiceDeps } from "./service-deps.js";
import type { CreateResult, RequestStore } from "./store.js";

export interface CreatingContext {
  deps: Pick<
    RequestServiceDeps,
    | "defaultTimeoutSeconds"
    | "defaultChannel"
    | "defaultChannels"
    | "callbackHosts"
    | "routes"
    | "policy"
    | "defaultAdmission"
    | "directory"
    | "maxPendingPerToken"
  >;
  store: Pick<RequestStore, "create">;
  rules: RuleBook | undefined;
  /** Unix time in milliseconds. */
  now: () => number;
  /** A new request's id, for a create by the agent token `tokenName`. */
  newId: (tokenName?: string) => string;
  /** Gives a new request its post lease and posts it (nothing without Slack). */
  delivery: Pick<Delivery, "leaseFrom" | "post">;
  audit: AuditRecorder;
  metrics: Pick<RequestMetrics, "created" | "ended">;
  changes: Pick<RequestChanges, "tell">;
  /** Counts and audits a create refused at its token's pending cap. */
  limits: Pick<CreateLimits, "refused">;
  logger: Logger;
}

/**
 * Throws a 400 naming the field, 409 relay_idempotency_mismatch, 429
 * relay_too_many_pending (TooManyPendingError) or 503
 * relay_slack_unavailable; stores nothing then. A tool call that repeats a
 * pending one of the same agent session joins it (./idempotency.ts `askKey`).
 */
export async function createRequest(ctx: CreatingContext, { tokenName, body, idempotencyKey, joinOnKey = false }: CreateInput): Promise<CreateResult> {
  const { defaultTimeoutSeconds, defaultChannel, defaultChannels, callbackHosts, routes, directory } = ctx.deps;
  // `match.channel` sees where a request naming none is posted without a route's own channel (chooseChannel): the default channel, else the default route's first.
  const postedTo = defaultChannel ?? defaultChannels?.[0];
  const matched = matchRoute(routes ?? [], { tokenName, body, ...(postedTo === undefined ? {} : { defaultChannel: postedTo }) });
  admit(matched, body, ctx.deps.defaultAdmission);
  const policy = await createPolicy({ body, matched, defaults: ctx.deps.policy ?? DEFAULT_POLICY, ...(directory ? { directory } : {}) });
  const createdAt = ctx.now();
  const scopedKey = idempotencyKey === undefined ? undefined : `${tokenName}:${idempotencyKey}`;
  const record = newRecord({
    id: ctx.newId(tokenName),
    tokenName,
    body,
    createdAt,
    defaultTimeoutSeconds,
    ...(defaultChannel === undefined ? {} : { defaultChannel }),
    ...(defaultChannels === undefined ? {} : { defaultChannels }),
    ...(callbackHosts === undefined ? {} : { callbackHosts }),
    matched,
    policy,
  });
  const ruled = await ctx.rules?.match(record);
  const maxPending = pendingCap(ctx.deps.maxPendingPerToken, (matched.route ?? ctx.deps.defaultAdmission)?.maxPending);
  const sameAs = askKey(tokenName, body, { ...(idempotencyKey === undefined ? {} : { idempotencyKey }), joinOnKey });
  const result = await ctx.store
    .create(ruled?.record ?? record, {
      ...(scopedKey === undefined ? {} : { idempotencyKey: scopedKey }),
      postLeaseUntil: ctx.delivery.leaseFrom(createdAt),
      ...(maxPending === undefined ? {} : { maxPending }),
      ...(sameAs === undefined ? {} : { sameAs }),
    })
    .catch((error: unknown) => {
      if (error instanceof TooManyPendingError)
        ctx.limits.refused(tokenName, "too_many_pending", record.id, `${error.pending} pending, at most ${error.limit}`);
      throw error;
    });
  if (!result.created && !result.joined && !joinOnKey && !sameRequestBody(result.record.body, record.body)) {
    throw new RelayError("relay_idempotency_mismatch", "This idempotency key was already used with a different body: use a new key for a new request.", {
      id: result.record.id,
    });
  }
  // A request this create stored (not one an idempotency key named), before a rule's use of it is counted.
  if (result.created) created(ctx, result.record);
  if (result.created && ruled) ctx.rules!.used(ruled, result.record);
  ctx.logger.info(
    {
      id: result.record.id,
      kind: body.kind,
      token: tokenName,
      route: result.record.policy?.route,
      created: result.created,
      ...(result.joined ? { joined: true } : {}),
      status: result.record.status,
      ...(ruled ? { rule: ruled.rule.id } : {}),
    },
    "request created",
  );
  return result;
}

/** The cap on a token's pending requests under a route: the lower of RELAY_MAX_PENDING_PER_TOKEN and the route's `maxPending`. */
function pendingCap(perToken: number | undefined, route: number | undefined): number | undefined {
  if (perToken === undefined) return route;
  return route === undefined ? perToken : Math.min(perToken, route);
}

/** Posts a pending request, and records its creation; one a rule answered at once ended in the same step: both events are recorded (and counted). */
function created(ctx: CreatingContext, record: RequestRecord): void {
  if (record.status === "pending") ctx.delivery.post(record);
  ctx.audit.record(createdEntry(record));
  ctx.metrics.created(record);
  if (record.status !== "pending") {
    ctx.audit.record(endedEntry(record));
    ctx.metrics.ended(record);
  }
  ctx.changes.tell(record.id);
}
