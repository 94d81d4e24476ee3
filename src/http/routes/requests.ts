/**
 * The agent API (docs/architecture.md §3): create, read (long-poll) and cancel requests.
 * Thin: parse and check the input, call the RequestService, render its record.
 *
 * Status codes of POST /v1/requests: 201 for a new request; 200 when the
 * Idempotency-Key names one that already exists, with the request as GET
 * shows it (the agent may be retrying after a lost response and needs the
 * current status, not a stale "pending"). A new pending request without
 * `?wait` gets the short `{id, status, expiresAt}`; with `?wait`, or when it
 * was answered at once (autonomous mode), the full view.
 *
 * While the instance drains (SIGTERM) it takes no new work: a create, or a
 * long-poll on a request still pending, is 503 relay_shutting_down with
 * Retry-After (the client library retries it, reaching another instance);
 * plain reads and cancels are served.
 *
 * Cancelling is idempotent: a DELETE of a request already cancelled answers
 * 200 with it as it is (a client retrying a DELETE whose reply was lost reaches
 * the state it asked for); one that was answered, expired or failed is a 409
 * with the request.
 *
 * A request made with another agent token is reported as not found, exactly
 * as an unknown id, so its existence does not leak. Admin tokens (operators)
 * read every request and list them all (`GET /v1/requests`, where an agent
 * token lists its own); they never create or cancel one (403).
 *
 * A request posted to Slack is shown with its message's permalink when the
 * relay knows its workspace's URL (src/slack/permalinks.ts: one auth.test per
 * instance, no call per request), so an agent or `approval-relay ask` can
 * point its person straight at the message.
 */
import type { CreateLimiter } from "../rate-limit.js";
import type { FastifyReply, FastifyRequest } from "fastify";
import { invalidRequest, RelayError, shuttingDown, StoreUnavailableError } from "../../requests/errors.js";
import { LIST_LIMITS, type RequestList } from "../../protocol/operator.js";
import { RequestStatus, type RequestView, type SlackRef } from "../../protocol/request-view.js";
import { mayView, type ListOptions, type RequestListing, type Viewer } from "../../requests/listing.js";
import { toView, type RequestRecord } from "../../requests/model.js";
import type { RequestService } from "../../requests/service.js";
import { serveRoute } from "../api.js";
import type { AuthHooks } from "../auth.js";
import { notFound } from "../errors.js";
import { parseCreateBody, pickIdempotencyKey } from "../parse.js";
import { parseLimit, queryParams } from "../query.js";
import { clientLeaves, jsonBody, rawQuery, type HttpApp } from "../transport.js";
import { parseWait } from "../wait.js";

/** Longer ids are never issued; they are not found without asking the store. */
const MAX_ID_LENGTH = 200;

export interface RequestRoutesDeps {
  service: RequestService;
  listing: RequestListing;
  /** Creating and cancelling take an agent token; reading and listing, either kind. */
  auth: AuthHooks;
  /** Longest `?wait=`, in seconds. */
  maxWaitSeconds: number;
  /** Largest body of a create, in bytes (RELAY_MAX_BODY); the server's limit when absent. */
  bodyLimitBytes?: number;
  /** The create rate limit per token (../rate-limit.ts); absent → none. */
  limitCreates?: CreateLimiter;
  /** A request's Slack message → its permalink, or undefined while the workspace's URL is unknown; absent without Slack. */
  messageLinks?: () => Promise<((ref: SlackRef) => string | undefined) | undefined>;
}

/** A view with its Slack message's permalink added, when one can be built. */
type Linking = (view: RequestView) => Promise<RequestView>;

function linkingWith(messageLinks: RequestRoutesDeps["messageLinks"]): Linking {
  if (!messageLinks) return async (view) => view;
  return async (view) => {
    if (!view.slack) return view;
    const permalink = (await messageLinks())?.(view.slack);
    return permalink === undefined ? view : { ...view, slack: { ...view.slack, permalink } };
  };
}

type IdRoute = { Params: { id: string } };

export function registerRequestRoutes(
  app: HttpApp,
  { service, listing, auth, maxWaitSeconds, bodyLimitBytes, limitCreates, messageLinks }: RequestRoutesDeps,
): void {
  const linked = linkingWith(messageLinks);
  serveRoute(
    app,
    "createRequest",
    {
      onRequest: auth.agent,
      ...(limitCreates ? { preHandler: limitCreates } : {}),
      ...(bodyLimitBytes === undefined ? {} : { bodyLimit: bodyLimitBytes }),
    },
    async (request, reply) => {
      const waitMs = parseWait(rawQuery(request), maxWaitSeconds);
      const body = parseCreateBody(jsonBody(request));
      const idempotencyKey = pickIdempotencyKey(body, idempotencyHeader(request));
      const { record, created } = await service.create({ tokenName: request.agent, body, idempotencyKey });
      reply.code(created ? 201 : 200);
      // Returned, not awaited: this handler then ends, and the created record and its body are not held while the long-poll is.
      if (waitMs !== undefined && record.status === "pending") return longPoll(service, record.id, waitMs, reply, linked);
      if (waitMs === undefined && created && record.status === "pending") {
        return { id: record.id, status: record.status, expiresAt: toView(record).expiresAt };
      }
      return linked(toView(record));
    },
  );

  serveRoute(app, "listRequests", { onRequest: auth.any }, async (request): Promise<RequestList> => {
    const records = await listing.list(viewerOf(request), parseListQuery(rawQuery(request)));
    return { requests: records.map(toView) };
  });

  serveRoute<IdRoute>(app, "getRequest", { onRequest: auth.any }, async (request, reply) => {
    const waitMs = parseWait(rawQuery(request), maxWaitSeconds);
    const record = await owned(service, request);
    if (waitMs !== undefined && record.status === "pending") {
      if (service.isDraining) throw shuttingDown();
      // Returned, not awaited: the record read here is not held while the long-poll is.
      return longPoll(service, record.id, waitMs, reply, linked);
    }
    return linked(toView(record));
  });

  serveRoute<IdRoute>(app, "cancelRequest", { onRequest: auth.agent }, async (request) => {
    const record = await owned(service, request);
    const result = await service.cancel(record.id, `agent:${request.agent}`);
    if (result.outcome === "not_found") throw notFound("The request");
    const view = toView(result.record);
    if (result.outcome === "applied" || result.record.status === "cancelled") return view;
    if (result.record.status === "answered") {
      throw new RelayError("relay_already_answered", "The request was already answered.", view);
    }
    throw new RelayError("relay_already_ended", `The request has already ended (${result.record.status}).`, view);
  });
}

/**
 * Holds until the request ends, `waitMs` pass or the client leaves, then links its view. Takes
 * only the id, so the caller's copy of the record is not kept alive by the
 * thousands of long-polls that may be held at once; and is not an async
 * function, so no suspended frame of its own is held with each either.
 */
function longPoll(service: RequestService, id: string, waitMs: number, reply: FastifyReply, linked: Linking): Promise<RequestView> {
  return service.wait(id, waitMs, clientLeaves(reply.raw)).then(
    (record) => {
      if (!record) throw notFound("The request");
      return linked(toView(record));
    },
    (error: unknown) => {
      // The store went away while the request was pending: answer what was known, as a wait that ran out does.
      if (error instanceof StoreUnavailableError && error.lastKnown) return linked(error.lastKnown);
      throw error;
    },
  );
}

/** The request named by the path, if the calling token may see it (created it, or is an admin token). */
async function owned(service: RequestService, request: FastifyRequest<IdRoute>): Promise<RequestRecord> {
  const { id } = request.params;
  const record = id.length === 0 || id.length > MAX_ID_LENGTH ? undefined : await service.getExpiringIfOverdue(id);
  if (!record || !mayView(viewerOf(request), record)) throw notFound("The request");
  return record;
}

function viewerOf(request: FastifyRequest): Viewer {
  return { tokenName: request.agent, role: request.tokenRole === "admin" ? "admin" : "agent" };
}

/** `?status=&limit=` of the list; a bad or unknown parameter is a 400 naming it. */
function parseListQuery(query: string): ListOptions {
  const params = queryParams(query, ["status", "limit"]);
  const options: ListOptions = { limit: parseLimit(params.get("limit"), { max: LIST_LIMITS.max, fallback: LIST_LIMITS.default }) };
  const status = params.get("status");
  if (status !== undefined) {
    const parsed = RequestStatus.safeParse(status);
    if (!parsed.success) throw invalidRequest([{ path: "status", message: `must be one of ${RequestStatus.options.join(", ")}` }]);
    options.status = parsed.data;
  }
  return options;
}

function idempotencyHeader(request: FastifyRequest): string | undefined {
  const value = request.headers["idempotency-key"];
  return Array.isArray(value) ? value.join(", ") : value;
}
