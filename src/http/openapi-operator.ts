/**
 * The OpenAPI operations of the routes operators use (docs/architecture.md §7):
 * `GET /v1/requests` (list), `GET /v1/audit` and the "Allow for a while"
 * rules (`GET /v1/rules`, `DELETE /v1/rules/{id}`), from the same schemas the
 * routes reply by (src/protocol/operator.ts), and health, readiness and
 * metrics. Placed in the document at the paths of the route list (./api.ts)
 * by ./openapi.ts.
 */
import { z } from "zod";
import { AUDIT_LIMITS, AuditEventId, AuditReply, LIST_LIMITS, RequestList, RULE_LIMITS, RuleList, RuleView } from "../protocol/operator.js";
import { RequestStatus } from "../protocol/request-view.js";
import { error, json, refusals, requestId, storeRefusals, type Operations } from "./openapi-shared.js";
import { HealthReply, ReadinessReply } from "./routes/health.js";

const limit = (limits: { max: number; default: number }, what: string) =>
  z
    .int()
    .min(1)
    .max(limits.max)
    .optional()
    .meta({ description: `Most ${what} returned (1–${limits.max}, default ${limits.default}).` });

const auditQuery = z.object({
  since: z.string().optional().meta({
    description: "Only events appended at or after this time: ISO 8601 with an offset (`2026-12-01T09:00:00Z`), a date (midnight UTC) or Unix milliseconds.",
    example: "2026-12-01T09:00:00Z",
  }),
  after: AuditEventId.optional().meta({ description: "Only events after this one: the `next` of the previous page." }),
  requestId: z.string().min(1).max(200).optional().meta({ description: "Only this request's events." }),
  limit: limit(AUDIT_LIMITS, "events"),
});

const listQuery = z.object({
  status: RequestStatus.optional().meta({ description: "Only requests in this status." }),
  limit: limit(LIST_LIMITS, "requests"),
});

const ruleQuery = z.object({ limit: limit(RULE_LIMITS, "rules") });
const rulePath = z.object({ id: z.string().min(1).max(200).meta({ description: "The rule's id, as `GET /v1/rules` lists it." }) });

export function operatorOperations(): Operations<"listRequests" | "readAudit" | "listRules" | "revokeRule" | "health" | "metrics" | "readiness"> {
  return {
    listRequests: {
      summary: "List requests, newest first",
      description:
        "An admin token (RELAY_ADMIN_TOKENS) lists every request; an agent token only the ones it created. Every pending request, and those that ended within the retention (a day; with Redis, among the 10,000 most recently created).",
      requestParams: { query: listQuery, header: requestId },
      responses: {
        "200": { description: "The requests, newest first, each as GET /v1/requests/{id} shows it.", content: json(RequestList) },
        ...refusals,
        ...storeRefusals,
      },
    },
    readAudit: {
      summary: "Read the audit log (admin tokens)",
      description:
        "Every event of every request (created, posted, reminded, escalated, approval, refused, answered, expired, cancelled, failed), oldest first, " +
        "a page at a time: while `next` is present, pass it as `after` for the next page. The log keeps the newest RELAY_AUDIT_MAX_EVENTS events.",
      requestParams: { query: auditQuery, header: requestId },
      responses: {
        "200": { description: "A page of events, oldest first.", content: json(AuditReply) },
        "403": error("`relay_forbidden`: an agent token; the audit takes an admin token (RELAY_ADMIN_TOKENS)."),
        ...refusals,
        ...storeRefusals,
      },
    },
    listRules: {
      summary: "List the live Allow for a while rules, newest first",
      description:
        'A rule is what a click on "Allow for 15 min" in Slack leaves behind: while it lives, new permission and step_gate requests of its token, agent session and tool are answered at once in its creator\'s name. ' +
        "An admin token (RELAY_ADMIN_TOKENS) lists every rule; an agent token only its own token's.",
      requestParams: { query: ruleQuery, header: requestId },
      responses: {
        "200": { description: "The rules still alive, newest first.", content: json(RuleList) },
        ...refusals,
        ...storeRefusals,
      },
    },
    revokeRule: {
      summary: "Revoke an Allow for a while rule",
      description:
        "From now on the rule answers no new request. An admin token revokes any rule (this only takes a permission away); an agent token only its own token's.",
      requestParams: { path: rulePath, header: requestId },
      responses: {
        "200": { description: "Revoked: the rule as it was.", content: json(RuleView) },
        "404": error("`relay_not_found`: no such live rule for this token (unknown, ended, already revoked, or another agent token's: all alike)."),
        ...refusals,
        ...storeRefusals,
      },
    },
    health: {
      summary: "Liveness",
      security: [],
      responses: { "200": { description: "The process serves HTTP.", content: json(HealthReply) } },
    },
    metrics: {
      summary: "Prometheus metrics",
      description:
        "The relay's metrics in the Prometheus text format: requests created and ended, pending, time to decision, held calls, Slack calls and queue, store errors, " +
        "callbacks queued, and the process's. With METRICS_TOKEN set it takes that token as a bearer token; without it the route is open (keep it on an internal port).",
      security: [{ metricsToken: [] }, {}],
      responses: {
        "200": { description: "The metrics.", content: { "text/plain; version=0.0.4; charset=utf-8": { schema: z.string() } } },
        "401": { ...refusals["401"], description: "METRICS_TOKEN is set and the request does not carry it." },
        "405": refusals["405"],
      },
    },
    readiness: {
      summary: "Readiness: the store and Slack answer",
      security: [],
      responses: {
        "200": { description: "Ready.", content: json(ReadinessReply) },
        "503": {
          description: "Not ready: `checks` says which part is down; `status: shutting_down` (answered at once) while the instance drains after SIGTERM.",
          content: json(ReadinessReply),
        },
      },
    },
  };
}
